"""The docs' command blocks as tools/docs_check.py reads them: extraction and annotations only
(`make docs-check` runs the commands)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_check", ROOT / "tools" / "docs_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_check"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


dc = _load()


def test_every_bash_block_has_commands_and_parses():
    bash = [b for b in dc.all_blocks() if b.lang == "bash"]
    assert len({b.path for b in bash}) >= 5, "the README and most docs show commands"
    for block in bash:
        cmds = dc.commands(block)
        assert cmds, f"{block.path}:{block.line}: a bash block without a command"
        for c in cmds:
            assert c.key and not c.key.startswith("#"), f"{c.path}:{c.line}"
            assert "<<" not in c.key or c.text.count("\n") >= 1, f"{c.path}:{c.line}: heredoc without its body"


def test_no_block_of_commands_is_left_unlabelled():
    assert [f"{b.path}:{b.line}" for b in dc.unlabelled_command_blocks()] == []


def test_every_annotation_names_a_command_the_docs_show():
    assert dc.annotation_problems(dc.all_commands(), dc.load_annotations()) == []


def test_skips_give_reasons_and_campaigns_a_limit():
    notes = dc.load_annotations()
    for key, ann in notes.items():
        assert ann.skip is None or len(ann.skip) > 10, key
        assert ann.limit is None or 0 < ann.limit <= 180, f"{key}: a campaign's limit keeps the whole check short"


def test_extraction_joins_heredocs_and_continuations_and_strips_comments():
    block = dc.Block("x.md", 1, "bash", [
        "# a comment line",
        "homiebot run --scene 3   # with a comment",
        "cat > a.yaml <<'EOF'",
        "planner: {name: oracle}   # kept: part of the file",
        "EOF",
        "homiebot eval --suite home100 \\",
        "  --runs 1",
        "echo '# not a comment'",
    ])
    cmds = dc.commands(block)
    assert [c.key for c in cmds] == ["homiebot run --scene 3", "cat > a.yaml <<'EOF'", "homiebot eval --suite home100 \\",
                                     "echo '# not a comment'"]
    assert [c.line for c in cmds] == [3, 4, 7, 9]
    assert cmds[1].text.endswith("EOF") and "planner" in cmds[1].text
    assert cmds[2].text.endswith("--runs 1")


def test_a_stale_annotation_is_reported(tmp_path):
    notes = tmp_path / "notes.yaml"
    notes.write_text("homiebot fly --to the moon: {skip: \"no such command in any document\"}\n")
    problems = dc.annotation_problems(dc.all_commands(), dc.load_annotations(notes))
    assert problems and "stale" in problems[0]
    notes.write_text("make demo: {limit: 30}\n")
    with pytest.raises(ValueError, match="why"):
        dc.load_annotations(notes)
