"""The README's first lines work as a newcomer types them: after `make demo`, a new shell with nothing but
the system PATH gets `homiebot` from `source .venv/bin/activate` (or calls `.venv/bin/homiebot`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
pytestmark = pytest.mark.skipif(not (VENV / "bin" / "activate").is_file(), reason="no .venv in this checkout (make setup makes it)")
BARE = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}


def shell(line: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "--noprofile", "--norc", "-c", line], cwd=ROOT, env=BARE, capture_output=True, text=True, timeout=300)


def test_a_fresh_shell_has_no_homiebot_until_the_virtualenv_is_activated():
    readme = (ROOT / "README.md").read_text()
    assert "source .venv/bin/activate" in readme.split("## Everyday use")[0], "the quick start says how to get homiebot on PATH"
    assert shell("command -v homiebot").returncode != 0
    done = shell("source .venv/bin/activate && homiebot plugins")
    assert done.returncode == 0, done.stderr
    assert "heuristic" in done.stdout


def test_without_activating_the_virtualenvs_homiebot_runs():
    done = shell(".venv/bin/homiebot run --help")
    assert done.returncode == 0 and "--task" in done.stdout, done.stderr
