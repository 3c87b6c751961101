"""Recording a short teleoperated demonstration in the embedded home (64x64 views)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mujoco")

from homiebot.builders.memory.record import record_in_home  # noqa: E402
from homiebot.builders.memory.scripts import Script, ScriptStep  # noqa: E402
from homiebot.memory.demonstration import load_demonstration  # noqa: E402
from homiebot.memory.segmentation import segment  # noqa: E402

SCRIPT = Script(id="remote_short", task="tasks/demo.yaml", steps=[
    ScriptStep(action="Go to", target="black_remote", model="PixNav"),
    ScriptStep(action="Pick", target="black_remote", model="RT-1-X", say="I always take the remote with me"),
    ScriptStep(action="Go to", target="blue_sofa", model="NoMaD"),
    ScriptStep(action="Put", target="black_remote", place="blue_sofa", model="RT-1-X", say="the remote goes on the sofa"),
])


def test_record_segment_and_reload(tmp_path: Path) -> None:
    demo = record_in_home(SCRIPT, tmp_path, size=64)
    assert load_demonstration(tmp_path) == demo
    assert [s.subtask for s in demo.subtasks] == ["[Go to, black_remote]", "[Pick, black_remote]", "[Go to, blue_sofa]",
                                                  "[Put, black_remote, blue_sofa]"]
    assert [u.text for u in demo.utterances] == ["I always take the remote with me", "the remote goes on the sofa"]
    assert all((tmp_path / f.image).is_file() for f in demo.frames if f.image)
    # the operator holds the remote from the pick to the put, and ends looking at the sofa
    assert [f.holding for f in demo.frames][-1] is None and "black_remote" in {f.holding for f in demo.frames}
    assert demo.frames[-1].gaze == "blue_sofa" and demo.frames[-1].room == "living_room"
    last = segment(demo, "gaze+speech", tmp_path)[-1]
    assert last.put == [("black_remote", "blue_sofa")] and last.said == ["the remote goes on the sofa"]


def test_a_failing_step_stops_the_recording(tmp_path: Path) -> None:
    bad = Script(id="bad", task="tasks/demo.yaml", steps=[ScriptStep(action="Pick", target="green_can", model="RT-1-X")])
    with pytest.raises(RuntimeError, match=r"script 'bad' step 1 \[Pick, green_can\] failed: Unable to pick"):
        record_in_home(bad, tmp_path, size=64)
