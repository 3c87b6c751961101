"""Follow and Give: the contract, the detector's classification, the privileged skills, whole episodes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from homiebot.config import RunConfig, load_config
from homiebot.core.contracts import Action, EpisodeRecord, ErrorCode, PlannerOutput, Subtask, offered_actions
from homiebot.core.errors import ErrorDetector
from homiebot.core.parsing import FormatError, parse_subtask_text
from homiebot.core.tasks import Task
from homiebot.planners.people import read_hand_over
from homiebot.runtime import run_episode
from homiebot.skills.base import SkillContext
from homiebot.skills.privileged import PrivilegedManipulation, PrivilegedNavigation
from homiebot.worlds.home.scene import parse_scene
from homiebot.worlds.home.state import FOLLOW_GAP, RobotPose

from ..conftest import ROOT
from .test_person import scene_data, state_with

CAPS = {"NoMaD": frozenset({Action.GO_TO, Action.FOLLOW}), "RT-1-X": frozenset({Action.PICK, Action.PUT, Action.GIVE})}


def out(text: str, model: str = "RT-1-X") -> PlannerOutput:
    return PlannerOutput(subtask=parse_subtask_text(text), model=model)


def holding_mug(person_at: tuple[float, float], robot_at: tuple[float, float]):  # noqa: ANN201 - a HomeState
    s = state_with({"position": list(person_at)})
    s.robot = RobotPose(3.8, 7.2, 1.57)  # beside the desk, where the mug is
    assert s.grasp("white_mug").ok
    s.robot = RobotPose(robot_at[0], robot_at[1], 0.0)
    s._carry_held()
    return s


def test_the_contract_reads_follow_and_give() -> None:
    give = parse_subtask_text("[Give, white_mug, person]")
    assert (give.action, give.target, give.place) == (Action.GIVE, "white_mug", "person")
    assert parse_subtask_text("[Follow, person]").action is Action.FOLLOW
    with pytest.raises(FormatError, match=r"Give needs the object and the person"):
        parse_subtask_text("[Give, white_mug]")
    with pytest.raises(ValueError, match="Give needs an object and a person"):
        Subtask(action=Action.GIVE, target="white_mug")
    with pytest.raises(ValueError, match="Follow takes one target"):
        Subtask(action=Action.FOLLOW, target="person", place="kitchen")
    able = [["Go to", "Follow"], ["Pick", "Put", "Give"]]
    assert "Follow" not in offered_actions(able) and "Give" not in offered_actions(able)
    assert {"Follow", "Give"} <= set(offered_actions(able, people=True))
    assert "Give" not in offered_actions([["Pick", "Put"]], people=True)  # and only when a model can


def test_records_of_earlier_versions_still_load() -> None:
    data = json.loads((ROOT / "test" / "data" / "golden" / "oracle_demo_seed0.json").read_text())
    data["version"] = 3
    for step in data["steps"]:
        step.pop("people", None)
        step["version"] = 3
    record = EpisodeRecord.model_validate(data)
    assert record.version == 3 and all(s.people == [] for s in record.steps)


def test_the_detector_classifies_give_and_follow() -> None:
    s = holding_mug(person_at=(7.75, 6.45), robot_at=(2.5, 6.2))  # the person in the bathroom, 5 m away
    d = ErrorDetector(s, CAPS)
    assert d.check(out("[Give, white_mug, person]")).feedback.code is ErrorCode.D1
    assert d.check(out("[Give, white_mug, white_desk]")).feedback.code is ErrorCode.L4
    assert d.check(out("[Give, red_book, person]")).feedback.code is ErrorCode.L2
    assert d.check(out("[Follow, fridge]", "NoMaD")).feedback.code is ErrorCode.L4
    assert d.check(out("[Follow, person]", "NoMaD")).passed
    assert d.check(out("[Follow, person]", "RT-1-X")).feedback.code is ErrorCode.F1  # a model that cannot
    s.robot = RobotPose(7.75 - 0.56, 6.45, 0.0)  # pressed against them
    assert d.check(out("[Give, white_mug, person]")).feedback.code is ErrorCode.D2
    s.robot = RobotPose(7.75 - 1.4, 6.45, 0.0)
    assert d.check(out("[Give, white_mug, person]")).passed
    s.held = None
    assert d.check(out("[Give, white_mug, person]")).feedback.code is ErrorCode.L2


def test_follow_or_give_with_nobody_in_sight_is_a_logical_error() -> None:
    from homiebot.worlds.home.state import HomeState

    s = HomeState.from_spec(parse_scene(scene_data()))
    fb = ErrorDetector(s, CAPS).check(out("[Follow, person]", "NoMaD")).feedback
    assert fb.code is ErrorCode.L4 and "nobody is in sight" in fb.message
    assert ErrorDetector(s, CAPS).check(out("[Give, white_mug, person]")).feedback.code is ErrorCode.L4
    assert ErrorDetector(s, CAPS).check(out("[Go to, person]", "NoMaD")).feedback.code is ErrorCode.F2


class _World:
    def __init__(self, state) -> None:  # noqa: ANN001
        self.state = state

    def ground_truth(self):  # noqa: ANN201
        return self.state


def test_give_succeeds_only_within_reach_and_the_person_carries_it() -> None:
    skill = PrivilegedManipulation("RT-1-X", profile="perfect")
    assert Action.GIVE in skill.actions and Action.FOLLOW in PrivilegedNavigation("NoMaD").actions
    ctx = SkillContext(episode_seed=0, round=3, attempt=1, max_attempts=3)
    s = holding_mug(person_at=(7.75, 6.45), robot_at=(7.75 - 2.1, 6.45))  # 1.55 m gap: the detector lets it by
    result = skill.run(Subtask(action=Action.GIVE, target="white_mug", place="person"), _World(s), ctx)
    assert not result.success and "out of reach" in result.message and s.held == "white_mug"
    s.robot = RobotPose(7.75 - 1.2, 6.45, 0.0)
    assert skill.run(Subtask(action=Action.GIVE, target="white_mug", place="person"), _World(s), ctx).success
    assert s.held is None and s.person.held == "white_mug" and s.locations["white_mug"].relation == "person"


def test_follow_keeps_up_with_a_walking_person() -> None:
    s = state_with({"position": [2.5, 4.0], "script": [{"walk": "bathroom"}]})
    nav = PrivilegedNavigation("NoMaD", profile="perfect")
    s.advance_people(0.0)
    result = nav.run(Subtask(action=Action.FOLLOW, target="person"), _World(s), SkillContext(0, 1, 1, 3))
    assert result.success and result.path_length > 0
    assert s.person.clock == 10.0  # walked with them through round 1
    assert s.distance_to("person") == pytest.approx(FOLLOW_GAP, abs=0.15)
    assert s.robot_room() == s.room_of("person")


@pytest.mark.parametrize("text, thing, room", [
    ("bring me my white mug, I'll be in the bathroom", "white mug", "bathroom"),
    ("Please give the red book to me; I will be in the living room reading", "red book", "living room"),
    ("bring the green can to the person", "green can", None),
])
def test_the_heuristic_reads_a_hand_over(text: str, thing: str, room: str | None) -> None:
    h = read_hand_over(text)
    assert h is not None and (h.thing, h.said_room, h.instruction) == (thing, room, f"fetch the {thing}")


def test_other_instructions_are_no_hand_over() -> None:
    assert read_hand_over("put the white mug in the kitchen sink") is None
    assert read_hand_over("bring the green can to the kitchen") is None


def _cfg(planner: str) -> RunConfig:
    cfg = load_config(ROOT / "config" / "sim.yaml")
    data: dict[str, Any] = cfg.model_dump(mode="json")
    data["planner"] = {"name": planner, "params": {}}
    data["world"]["params"] = {**data["world"]["params"], "width": 64, "height": 64}
    data["output"]["images"] = False
    return RunConfig.model_validate(data)


@pytest.mark.parametrize("planner", ["oracle", "heuristic"])
def test_a_follow_then_give_episode_succeeds(planner: str, tmp_path: Path) -> None:
    task = Task(id="give_mug", instruction="bring me my white mug, I'll be in the bathroom", scene_file=str(ROOT / "config/scenes/demo.yaml"),
                goal=[{"kind": "person_has", "object": "white_mug"}],
                person={"position": [2.5, 4.0], "script": [{"say": "bring me my mug"}, {"walk": "bathroom"}]})
    record, _ = run_episode(_cfg(planner), task, tmp_path)
    actions = [s.output.subtask.action for s in record.steps if s.output]
    assert record.goal_satisfied and record.ended
    assert Action.GIVE in actions and actions.index(Action.FOLLOW) < actions.index(Action.GIVE)
    seen = [s.people for s in record.steps]
    assert seen[-1][0].holding == "white_mug"  # in the record: the person with the mug at the end


def test_on_a_robot_give_and_follow_are_judged_by_its_own_signals() -> None:
    from types import SimpleNamespace

    from homiebot.core.attempt_checks import RobotSignalsCheck, Tolerances

    gap = {"person": 3.0}
    belief = SimpleNamespace(distance_to=lambda name: gap[name], lookup=lambda name: None)
    hand = SimpleNamespace(holding=True)
    robot = SimpleNamespace(gripper_state=lambda: hand)
    check, tol = RobotSignalsCheck(belief), Tolerances()  # type: ignore[arg-type]
    give = Subtask(action=Action.GIVE, target="white_mug", place="person")
    check.begin(give, robot)  # type: ignore[arg-type]
    assert not check.succeeded(give, robot, tol)  # type: ignore[arg-type]
    hand.holding = False  # the person took it
    assert check.succeeded(give, robot, tol)  # type: ignore[arg-type]
    follow = Subtask(action=Action.FOLLOW, target="person")
    assert not check.succeeded(follow, robot, tol)  # type: ignore[arg-type]
    assert "lost the person" in check.failure(follow, robot, "NoMaD", "", False)[1]  # type: ignore[arg-type]
    gap["person"] = 0.8
    assert check.succeeded(follow, robot, tol)  # type: ignore[arg-type]


@pytest.mark.parametrize("text, folded", [
    ("put the blue bowl in the bathroom sink; I left it on the white bed",
     "put the blue bowl on the white bed in the bathroom sink"),
    ("put the red book onto the blue sofa; I took it along when I washed my face",
     "put the red book in the bathroom onto the blue sofa"),
    ("put the green can on the tv stand", None),  # no remark
    ("put the green can on the tv stand; thank you", None),  # a remark that says nothing about where
])
def test_a_remark_on_a_moved_object_becomes_the_place_searched_first(text: str, folded: str | None) -> None:
    from homiebot.planners.people import situate_remark

    assert situate_remark(text) == folded


def test_what_someone_will_be_doing_names_their_room() -> None:
    h = read_hand_over("bring me the blue bowl, I'll be washing my face")
    assert h is not None and h.said_room == "bathroom"
    h = read_hand_over("bring me the blue bowl, I'll be watching tv")
    assert h is not None and h.said_room == "living room"
