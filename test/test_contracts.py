import numpy as np
import pytest
from pydantic import ValidationError

from homiebot.core.contracts import (
    Action,
    EpisodeRecord,
    ErrorCode,
    Feedback,
    Observation,
    PlannerOutput,
    Pose2D,
    StepRecord,
    Subtask,
    ViewImage,
)


def test_subtask_text_round_trip():
    for text in ("[Go to, fridge]", "[Pick, green_can]", "[Put, green_can, fridge]", "[End]"):
        assert Subtask.from_text(text).text() == text


@pytest.mark.parametrize("kwargs", [
    {"action": "End", "target": "fridge"},
    {"action": "Pick"},
    {"action": "Put", "target": "green_can"},
    {"action": "Go to", "target": "fridge", "place": "kitchen"},
])
def test_subtask_arity_is_enforced(kwargs):
    with pytest.raises(ValidationError):
        Subtask(**kwargs)


def test_feedback_needs_code_exactly_when_failing():
    assert Feedback.ok().success
    assert Feedback.fail(ErrorCode.L3, "closed").code is ErrorCode.L3
    with pytest.raises(ValidationError):
        Feedback(status="fail", message="no code")
    with pytest.raises(ValidationError):
        Feedback(status="success", code="E1")


def test_error_code_categories():
    assert [c.category for c in (ErrorCode.F1, ErrorCode.L2, ErrorCode.D1, ErrorCode.E2)] == ["format", "logical", "distance", "execution"]


def test_observation_json_round_trip_keeps_arrays_exact():
    rng = np.random.default_rng(0)
    views = {v: ViewImage(rgb=rng.integers(0, 255, (4, 5, 3), dtype=np.uint8),
                          depth=rng.random((4, 5), dtype=np.float32),
                          segmentation=rng.integers(0, 9, (4, 5), dtype=np.int32))
             for v in ("front", "left", "back", "right")}
    obs = Observation(round=2, views=views, pose=Pose2D(x=1, y=2, yaw=0.5), inventory=["green_can"])
    back = Observation.model_validate_json(obs.model_dump_json())
    for v in views:
        assert np.array_equal(back.views[v].rgb, views[v].rgb) and back.views[v].rgb.dtype == np.uint8
        assert np.array_equal(back.views[v].depth, views[v].depth)
        assert np.array_equal(back.views[v].segmentation, views[v].segmentation)
    assert back.inventory == ["green_can"] and back.round == 2


def test_observation_requires_all_four_views():
    img = ViewImage(rgb=np.zeros((2, 2, 3), np.uint8))
    with pytest.raises(ValidationError, match="missing views"):
        Observation(round=1, views={"front": img}, pose=Pose2D(x=0, y=0, yaw=0))


def test_episode_record_round_trip():
    out = PlannerOutput(analysis="a", subtask=Subtask(action=Action.PUT, target="can", place="fridge"), model="RT-1-X")
    step = StepRecord(round=1, prompt="p", raw_output="r", output=out, feedback=Feedback.fail(ErrorCode.E2, "dropped"),
                      inventory_before=["can"], inventory_after=[], images={"front": "images/round_01_front.png"})
    rec = EpisodeRecord(episode_id="e", instruction="i", scene={"name": "x"}, planner="replay", seed=3, max_rounds=20, steps=[step])
    assert EpisodeRecord.model_validate_json(rec.model_dump_json()) == rec
    assert rec.steps[0].subtask.text() == "[Put, can, fridge]"
