"""The wire contracts: a RunTask goal's submission is read strictly with one-line reasons, and numbers must be finite."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from pydantic import ValidationError  # noqa: E402

from homiebot.ros.messages.wire import Submission, describe, finite  # noqa: E402


@pytest.mark.parametrize("value, words", [
    ({"id": [1]}, "id"),
    ({"id": "a", "scene": 7.5}, "scene"),
    ({"id": "a", "instruction": "x", "colour": "red"}, "colour: Extra inputs are not permitted"),
    ({"id": "a", "seed": True}, "seed"),
    ({"id": "a", "seed": "3"}, "seed"),
    ({"id": "a", "task": {}, "task_file": "t.yaml"}, "one of"),
])
def test_bad_submissions_are_refused_with_a_one_line_reason(value, words):
    with pytest.raises(ValidationError) as err:
        Submission.model_validate(value)
    reason = describe(err.value)
    assert words in reason and "\n" not in reason


def test_a_scene_seed_may_be_a_number():
    assert Submission.model_validate({"id": 3, "instruction": "open the fridge", "scene": 7}).scene == 7


def test_numbers_must_be_finite():
    assert finite({"a": [1.0, 2]}) and not finite({"a": [float("nan")]}) and not finite([float("inf")])
