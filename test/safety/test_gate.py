"""The safety gate in whole episodes: e-stop pauses and resumes, cancel, keep-out rules, approval."""

from __future__ import annotations

import os
import threading
import time

import pytest

from homiebot.core.contracts import Action, ErrorCode, Subtask
from homiebot.core.records import load_episode
from homiebot.core.tasks import ObjectAt, Task
from homiebot.runtime import build_world, run_episode, scene_for
from homiebot.safety import SafetyGate, SafetySettings, SafetyState
from homiebot.safety.approval import ApprovalRequest, Approver, Decision, TerminalApprover, read_decision
from homiebot.safety.gate import names_thing
from test.conftest import oracle_config

SHUT = ["fridge", "kitchen_cabinet", "drawer", "bathroom_cabinet"]  # the demo home's closable containers


def hide_can(demo_task: Task) -> Task:
    return demo_task.model_copy(update={"instruction": "hide the green can inside something that can be shut",
                                        "goal": [ObjectAt(object="green_can", receptacle=SHUT)], "keypaths": []})


def test_an_estop_pauses_the_episode_and_a_release_resumes_it(demo_task) -> None:
    state = SafetyState()
    times: list[float] = []

    def on_step(step) -> None:
        times.append(time.monotonic())
        if step.round == 2:
            state.engage_estop("test")
            threading.Timer(0.6, state.release_estop, kwargs={"source": "test"}).start()

    record, _ = run_episode(oracle_config(), demo_task, on_step=on_step, safety_state=state)
    assert record.termination == "end" and record.goal_satisfied
    assert times[2] - times[1] >= 0.55  # the planner was not asked while the e-stop held
    assert [e.kind for e in record.safety_events][:2] == ["estop", "estop_released"]
    assert record.safety_events[0].round == 2


def test_a_cancel_ends_the_episode_with_its_record_saved(demo_task, tmp_path) -> None:
    state = SafetyState()

    def on_step(step) -> None:
        if step.round == 2:
            state.cancel("operator")

    record, folder = run_episode(oracle_config(), demo_task, tmp_path, on_step=on_step, safety_state=state)
    assert record.termination == "cancelled" and len(record.steps) == 2
    saved = load_episode(folder)
    assert saved.termination == "cancelled" and any(e.kind == "cancel" for e in saved.safety_events)


def test_a_keep_out_rule_refuses_before_any_motion_and_the_oracle_finds_another_way(demo_task) -> None:
    rules = {"keep_out": [{"target": "cabinet", "actions": ["Open", "Put"]}]}
    record, _ = run_episode(oracle_config(safety=rules), hide_can(demo_task))
    refused = [s for s in record.steps if s.feedback.code is ErrorCode.S1]
    assert refused, "the oracle tried a cabinet first (the nearest closable container)"
    for step in refused:
        assert step.skill is None and step.attempts == 0 and step.path_length == 0.0  # nothing moved
        assert "never open or put the cabinet" in step.feedback.message
    assert record.goal_satisfied and record.termination == "end"
    last_put = [s for s in record.steps if s.subtask and s.subtask.action is Action.PUT][-1]
    assert last_put.subtask.place in ("fridge", "drawer")
    assert sum(e.kind == "keep_out" for e in record.safety_events) == len(refused)


def test_the_heuristic_planner_also_finds_another_way(demo_task) -> None:
    cfg = oracle_config(planner={"name": "heuristic"}, max_rounds=40, safety={"keep_out": [{"target": "cabinet"}]},
                        world={"name": "embedded_home", "params": {"width": 96, "height": 96, "depth": True}})
    record, _ = run_episode(cfg, hide_can(demo_task))
    assert record.goal_satisfied and record.termination == "end", [(s.subtask.text() if s.subtask else None, s.feedback.message)
                                                                   for s in record.steps]
    assert any(s.feedback.code is ErrorCode.S1 for s in record.steps)
    assert not any(s.subtask and s.feedback.success and "cabinet" in (s.subtask.target or "") for s in record.steps)


def test_a_forbidden_room_on_the_way_is_avoided_and_a_target_inside_one_is_refused(demo_task) -> None:
    cfg = oracle_config(safety={"keep_out": [{"room": "bathroom"}]})
    world = build_world(cfg, scene_for(demo_task))
    try:
        world.keep_out_rooms({"bathroom"})
        assert world.route("brown_table") is True and world.route("bathroom_sink") is False
        assert world.room_of("pink_soap") == "bathroom"
    finally:
        world.close()
    ok, _ = run_episode(cfg, demo_task)
    assert ok.goal_satisfied and not any(s.feedback.code is ErrorCode.S1 for s in ok.steps)
    soap = demo_task.model_copy(update={"instruction": "put the pink soap on the kitchen counter",
                                        "goal": [ObjectAt(object="pink_soap", receptacle="kitchen_counter")], "keypaths": []})
    refused, _ = run_episode(cfg, soap)
    assert not refused.goal_satisfied and refused.termination == "end"
    first = refused.steps[0]
    assert first.feedback.code is ErrorCode.S1 and "where the robot must not go" in first.feedback.message
    assert "never enter the bathroom" in first.feedback.message
    assert refused.path_length == 0.0


def test_keep_out_rules_name_things_and_kinds_and_bad_rooms_are_config_errors(demo_task) -> None:
    assert names_thing("white_fridge", "fridge") and names_thing("fridge_2", "fridge") and names_thing("fridge", "fridge")
    assert names_thing("kitchen_counter_1", "kitchen counter") and not names_thing("fridge", "bridge")
    from homiebot.core.errors import ConfigError

    with pytest.raises(ConfigError, match="rooms this home does not have: \\['garage'\\]"):
        run_episode(oracle_config(safety={"keep_out": [{"room": "garage"}]}), demo_task)
    with pytest.raises(ValueError, match="exactly one of target or room"):
        SafetySettings.model_validate({"keep_out": [{"target": "oven", "room": "kitchen"}]})


class Scripted(Approver):
    def __init__(self, decisions: list[Decision]) -> None:
        self.decisions, self.asked = list(decisions), []

    def decide(self, request: ApprovalRequest, timeout: float) -> Decision:
        self.asked.append(request.subtask.text())
        return self.decisions.pop(0) if self.decisions else Decision("approve")


def test_approval_reject_makes_the_planner_replan_and_is_recorded(demo_task) -> None:
    approver = Scripted([Decision("reject", "not that cabinet")])
    cfg = oracle_config(safety={"approve": "manipulation"})
    record, _ = run_episode(cfg, hide_can(demo_task), approver=approver)
    rejected = [s for s in record.steps if s.feedback.code is ErrorCode.S2]
    assert len(rejected) == 1 and "not that cabinet" in rejected[0].feedback.message and rejected[0].skill is None
    assert approver.asked[0] == "[Open, kitchen_cabinet]"
    decisions = [e.details["decision"] for e in record.safety_events if e.kind == "approval"]
    assert decisions[:2] == ["reject", "approve"] and len(decisions) == len(approver.asked)
    assert all(not a.startswith("[Go to") for a in approver.asked)  # manipulation only
    assert record.goal_satisfied  # another container after the rejection


def test_without_an_approver_approval_is_a_config_error(demo_task) -> None:
    from homiebot.core.errors import ConfigError

    with pytest.raises(ConfigError, match="nobody can approve"):
        run_episode(oracle_config(safety={"approve": "every_subtask"}), demo_task)


def test_terminal_answers_approve_reject_edit_and_time_out() -> None:
    request = ApprovalRequest(3, Subtask(action=Action.OPEN, target="fridge"), "octo")
    assert read_decision("a", request).verdict == "approve"
    assert read_decision("r  too risky ", request) == Decision("reject", "too risky")
    edit = read_decision("e [Open, drawer]", request)
    assert edit.verdict == "edit" and edit.subtask == Subtask(action=Action.OPEN, target="drawer")
    assert read_decision("maybe", request) is None
    read_end, write_end = os.pipe()
    with open(read_end, "rb", buffering=0) as stream, open(os.devnull, "w") as quiet:
        ask = TerminalApprover(stream, quiet)
        os.write(write_end, b"what?\nr the door sticks\na\n")
        assert ask.decide(request, 5.0) == Decision("reject", "the door sticks")  # after an unreadable line
        assert ask.decide(request, 5.0).verdict == "approve"  # typed ahead, not lost
        late = ask.decide(request, 0.2)
        assert late.verdict == "reject" and late.timed_out
    os.close(write_end)


def test_gate_start_round_waits_for_release_and_stops_on_cancel() -> None:
    gate = SafetyGate(SafetySettings())
    gate.state.engage_estop()
    threading.Timer(0.3, gate.state.cancel).start()
    assert gate.start_round(4) is False
