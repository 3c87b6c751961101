"""The wire contracts: size limits, one-line reasons, and which id of a bad message can be read."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.wire import RpcRequest, Stamped, Submission, WireError, finite, parse, read_json, readable_id  # noqa: E402


@pytest.mark.parametrize("text, words", [
    ('{"id": "a", "instruction": "op', "not JSON"),
    ("[" * 50000, "not JSON"),
    ("null", "expected a JSON object, got NoneType"),
    ('{"id": [1]}', "id"),
    ('{"id": "a", "scene": 7.5}', "scene"),
    ('{"id": "a", "instruction": "x", "colour": "red"}', "colour: Extra inputs are not permitted"),
    ('{"id": "a", "seed": true}', "seed"),
    ('{"id": "a", "task": {}, "task_file": "t.yaml"}', "one of"),
])
def test_bad_submissions_are_refused_with_a_one_line_reason(text, words):
    with pytest.raises(WireError) as err:
        parse(Submission, text)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_scene_seed_may_be_a_json_number_and_the_limit_is_in_bytes():
    assert parse(Submission, '{"id": 3, "instruction": "open the fridge", "scene": 7}').scene == 7
    with pytest.raises(WireError, match="over the limit of 100"):
        read_json('{"id": "' + "é" * 60 + '"}', limit=100)  # 60 characters, 120 bytes


def test_the_id_of_an_invalid_message_is_read_when_it_can_be():
    assert readable_id({"id": "abc", "scene": [7]}) == "abc" and readable_id({"id": 12}) == "12"
    assert readable_id({"id": [1]}) is None and readable_id({"id": True}) is None and readable_id([1]) is None
    assert readable_id({"id": "x" * 201}) is None


def test_requests_and_stamped_messages_are_typed_strictly():
    with pytest.raises(WireError):
        parse(RpcRequest, '{"id": "a", "method": "reset", "cancel": "yes"}')
    with pytest.raises(WireError):
        parse(Stamped, '{"episode": "1", "round": 1}')
    assert parse(Stamped, '{"episode": 2, "round": 3, "other": 1}').round == 3
    assert finite({"a": [1.0, 2]}) and not finite({"a": [float("nan")]})
