"""The local language model's helper: finding the shipped GGUF file, and clear errors when something is missing."""

from __future__ import annotations

import importlib.metadata

import pytest

from homiebot import llm_server
from homiebot.llm_server import GGUF_NAME, LocalModelError, main, server_command, smollm2_path


def test_a_missing_model_file_is_a_one_line_error(tmp_path, capsys):
    assert main(["--model", str(tmp_path / "absent.gguf")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("homiebot: error: --model ") and "no such file" in err and "Traceback" not in err


def test_without_the_package_the_error_names_make_llm(monkeypatch, capsys):
    def missing(name: str):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(llm_server.importlib.metadata, "distribution", missing)
    with pytest.raises(LocalModelError, match="make llm"):
        smollm2_path()
    assert main(["--path"]) == 2 and "make llm" in capsys.readouterr().err
    assert "make llm" in (llm_server.server_available() or "")


def test_the_server_command_binds_loopback_and_names_the_model(tmp_path):
    command = server_command(tmp_path / "m.gguf", port=8123, threads=2)
    assert command[1:3] == ["-m", "llama_cpp.server"]
    pairs = dict(zip(command[3::2], command[4::2]))
    assert pairs == {"--model": str(tmp_path / "m.gguf"), "--model_alias": "smollm2", "--host": "127.0.0.1", "--port": "8123",
                     "--n_ctx": "4096", "--n_threads": "2"}


def test_the_shipped_file_is_found_among_the_package_files():
    try:
        path = smollm2_path()
    except LocalModelError as err:
        pytest.skip(str(err))
    assert path.name == GGUF_NAME and path.stat().st_size > 90_000_000
