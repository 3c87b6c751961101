"""homiebot_msgs, as ``make`` builds it (tools/build_interfaces.py): typed fields everywhere, and the
constants of the one planner contract (homiebot/core/contracts.py), never a copy that drifts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402

from homiebot.core.contracts import CONTRACT_VERSION, TERMINATIONS, Action, ErrorCode  # noqa: E402

try:
    from homiebot_msgs.action import ExecuteSubtask, PlanSubtask, RunTask
    from homiebot_msgs.msg import Feedback, KeyValue, Measure, ModelInfo, PlannerOutput, Subtask
    from homiebot_msgs.srv import Check, ListModels, ResetPlanner
except ImportError as error:  # make builds it: its absence is a failure, not a skip
    pytest.fail(f"homiebot_msgs is not built ({error}): run `make setup` or `{sys.executable} tools/build_interfaces.py`",
                pytrace=False)

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "interfaces" / "homiebot_msgs"


def _constants(msg: object) -> dict[str, object]:
    """A message's constants (its class's upper-case attributes, but the generator's SLOT_TYPES)."""
    return {k: getattr(type(msg), k) for k in dir(type(msg)) if k.isupper() and k != "SLOT_TYPES"}


def test_every_interface_lists_typed_fields() -> None:
    """What ``ros2 interface show`` prints, through rosidl's Python API: fields with types, no JSON strings."""
    assert Subtask.get_fields_and_field_types() == {"action": "string", "target": "string", "place": "string"}
    assert Feedback.get_fields_and_field_types() == {"version": "uint16", "success": "boolean", "code": "string", "message": "string",
                                                     "details": "sequence<homiebot_msgs/KeyValue>"}
    assert PlannerOutput.get_fields_and_field_types() == {"version": "uint16", "analysis": "string", "subtask": "homiebot_msgs/Subtask",
                                                          "model": "string"}
    fb = RunTask.Feedback.get_fields_and_field_types()
    assert fb["subtask"] == "homiebot_msgs/Subtask" and fb["feedback"] == "homiebot_msgs/Feedback" and fb["round"] == "uint32"
    result = RunTask.Result.get_fields_and_field_types()
    assert {result["error_code"], result["error_msg"], result["goal_satisfied"]} == {"uint16", "string", "int8"}
    goal = RunTask.Goal.get_fields_and_field_types()
    assert goal == {"instruction": "string", "scene": "string", "task_file": "string", "task_yaml": "string", "use_seed": "boolean",
                    "seed": "uint32"}


def test_the_services_list_typed_fields_and_an_error_code_in_every_response() -> None:
    assert ModelInfo.get_fields_and_field_types() == {"name": "string", "actions": "sequence<string>", "description": "string"}
    assert Measure.get_fields_and_field_types() == {"name": "string", "value": "double"}
    plan = PlanSubtask.Goal.get_fields_and_field_types()
    assert plan["feedback"] == "homiebot_msgs/Feedback" and plan["history"] == "sequence<string>" and plan["round"] == "uint32"
    planned = PlanSubtask.Result.get_fields_and_field_types()
    assert planned["usage"] == "sequence<homiebot_msgs/Measure>" and planned["output"] == "homiebot_msgs/PlannerOutput"
    assert (planned["error_code"], PlanSubtask.Result.CANCELLED, PlanSubtask.Feedback.get_fields_and_field_types()["elapsed"]) == \
        ("uint16", 4, "float")
    check = Check.Request.get_fields_and_field_types()
    assert (check["output"], check["capabilities"]) == ("homiebot_msgs/PlannerOutput", "sequence<homiebot_msgs/ModelInfo>")
    assert Check.Response.get_fields_and_field_types()["subtask"] == "homiebot_msgs/Subtask"
    reset = ResetPlanner.Request.get_fields_and_field_types()
    assert (reset["models"], reset["ask"], reset["max_rounds"]) == ("sequence<homiebot_msgs/ModelInfo>", "boolean", "uint32")
    assert ListModels.Response.get_fields_and_field_types()["models"] == "sequence<homiebot_msgs/ModelInfo>"
    goal = ExecuteSubtask.Goal.get_fields_and_field_types()
    assert goal == {"episode": "uint32", "round": "uint32", "subtask": "homiebot_msgs/Subtask", "model": "string", "seed": "uint32"}
    result = ExecuteSubtask.Result.get_fields_and_field_types()
    assert (result["error_code"], result["feedback"], result["acted"]) == ("uint16", "homiebot_msgs/Feedback", "homiebot_msgs/Subtask")
    assert ExecuteSubtask.Feedback.get_fields_and_field_types()["attempt"] == "uint32"
    for service in (Check, ResetPlanner, ListModels):
        fields = service.Response.get_fields_and_field_types()
        assert (fields["error_code"], fields["error_msg"]) == ("uint8", "string"), service
        assert service.Response.NONE == 0 and service.Response.FAILED > 0


def test_the_constants_are_the_contracts() -> None:
    codes = {k: v for k, v in _constants(Feedback()).items() if k != "CONTRACT_VERSION"}
    assert codes == {c.name: c.value for c in ErrorCode}
    assert Feedback.CONTRACT_VERSION == CONTRACT_VERSION
    actions = {v for k, v in _constants(Subtask()).items()}
    assert actions == {a.value for a in Action}
    package = (SOURCE / "package.xml").read_text()
    assert f"<version>{CONTRACT_VERSION}." in package, "the package's major version is the contract version"
    described = (SOURCE / "action" / "RunTask.action").read_text()
    assert all(t in described for t in TERMINATIONS), "every termination value is named where the result describes it"


def test_a_round_feedback_crosses_the_wire() -> None:
    fb = RunTask.Feedback(state=RunTask.Feedback.ROUND, round=4, subtask=Subtask(action=Subtask.PUT, target="can", place="fridge"),
                          feedback=Feedback(success=False, code=Feedback.L3, message="closed",
                                            details=[KeyValue(key="container", value="fridge")]))
    back = deserialize_message(serialize_message(fb), RunTask.Feedback)
    assert (back.subtask.place, back.feedback.code, back.feedback.details[0].value) == ("fridge", "L3", "fridge")


def test_the_installed_package_carries_its_definitions_and_type_hashes() -> None:
    share = Path(sys.prefix) / "share" / "homiebot_msgs"
    for path in sorted(SOURCE.glob("*/*.*")):
        assert (share / path.relative_to(SOURCE)).read_text() == path.read_text(), f"{path.name} is not the installed one"
    hashes = json.loads((share / "action" / "RunTask.json").read_text())["type_hashes"]
    assert any(h["type_name"] == "homiebot_msgs/action/RunTask_Goal" and h["hash_string"].startswith("RIHS01_") for h in hashes)
    index = Path(sys.prefix) / "share" / "ament_index" / "resource_index" / "rosidl_interfaces" / "homiebot_msgs"
    assert "action/RunTask.action" in index.read_text().splitlines()


def test_the_round_messages_carry_the_contracts_both_ways() -> None:
    from homiebot.core.contracts import Feedback as FeedbackContract
    from homiebot.core.contracts import PlannerOutput as OutputContract
    from homiebot.core.contracts import Subtask as SubtaskContract
    from homiebot.ros.messages.common import feedback_from_msg, feedback_msg, planner_output_from_msg, planner_output_msg

    out = OutputContract(analysis="the can is in the fridge", subtask=SubtaskContract.from_text("[Put, green_can, fridge]"), model="RT-1-X")
    assert planner_output_from_msg(deserialize_message(serialize_message(planner_output_msg(out)), PlannerOutput)) == out
    end = OutputContract(subtask=SubtaskContract.from_text("[End]"))
    assert planner_output_from_msg(planner_output_msg(end)) == end
    fb = FeedbackContract.fail(ErrorCode.L3, "the fridge is closed", container="fridge")
    assert feedback_from_msg(deserialize_message(serialize_message(feedback_msg(fb)), Feedback)) == fb
    assert feedback_from_msg(feedback_msg(FeedbackContract.ok("done"))) == FeedbackContract.ok("done")


def test_bags_and_foxglove_know_the_typed_rounds() -> None:
    from homiebot.ros.clients.foxglove import message_definition
    from homiebot.ros.messages.common import all_topics

    assert all_topics()["subtask"] == "homiebot_msgs/msg/PlannerOutput"
    text = message_definition("homiebot_msgs/msg/Feedback")
    assert "KeyValue[] details" in text and "MSG: homiebot_msgs/KeyValue" in text


def test_every_service_response_and_action_result_carries_an_error_code_and_message() -> None:
    import importlib

    missing = []
    for path in sorted((SOURCE / "srv").glob("*.srv")) + sorted((SOURCE / "action").glob("*.action")):
        kind = path.parent.name
        module = importlib.import_module(f"homiebot_msgs.{kind}")
        answer = getattr(getattr(module, path.stem), "Response" if kind == "srv" else "Result")
        fields = answer.get_fields_and_field_types()
        if fields.get("error_code") not in ("uint8", "uint16") or fields.get("error_msg") != "string":  # Nav2 style
            missing.append(path.name)
    assert not missing, f"no error_code/error_msg in: {missing}"


def test_a_workspace_build_generates_every_definition() -> None:
    """colcon builds from CMakeLists.txt, which names each file: one left out would exist for ``make`` only."""
    listed = set((SOURCE / "CMakeLists.txt").read_text().split())
    files = {f'"{p.parent.name}/{p.name}"' for kind in ("msg", "srv", "action") for p in (SOURCE / kind).iterdir()}
    assert files - listed == set()
