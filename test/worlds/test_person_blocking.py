"""The person's body in the robot's way: routes around them, a wait where they stand in the only way,
and no base driven into them."""

from __future__ import annotations

import math
from typing import Any

import pytest

from homiebot.core.contracts import Action, SkillFailure, Subtask
from homiebot.skills.base import SkillContext
from homiebot.skills.privileged import PrivilegedNavigation
from homiebot.worlds.home.catalog import ROBOT_RADIUS
from homiebot.worlds.home.navigation import NavigationMap, Pose2D
from homiebot.worlds.home.person import PERSON_RADIUS
from homiebot.worlds.home.scene import parse_scene
from homiebot.worlds.home.state import PERSON_GAP, PERSON_WAIT_SECONDS, HomeState, RobotPose

from .test_person import scene_data

NAV = PrivilegedNavigation("NoMaD", profile="perfect")
TOUCH = ROBOT_RADIUS + PERSON_RADIUS  # base centre to person centre when they touch


class _World:
    def __init__(self, state: HomeState) -> None:
        self.state = state

    def ground_truth(self) -> HomeState:
        return self.state


def _state(person: dict[str, Any], doors: list[list[str]] | None = None) -> HomeState:
    data = scene_data(person)
    if doors is not None:
        data["doors"] = doors
    s = HomeState.from_spec(parse_scene(data))
    s.advance_people(s.round_time(1))  # round 1 begins
    return s


def _go_to(s: HomeState, target: str, round_index: int = 1):  # noqa: ANN202 - a SkillResult
    return NAV.run(Subtask(action=Action.GO_TO, target=target), _World(s), SkillContext(0, round_index, 1, 3))


def _closest_approach(points: list[tuple[float, float]], centre: tuple[float, float]) -> float:
    """The nearest the polyline ``points`` comes to ``centre``."""
    best = math.inf
    for (ax, ay), (bx, by) in zip(points, points[1:]):
        dx, dy = bx - ax, by - ay
        t = 0.0 if dx == dy == 0 else max(0.0, min(1.0, ((centre[0] - ax) * dx + (centre[1] - ay) * dy) / (dx * dx + dy * dy)))
        best = min(best, math.dist((ax + t * dx, ay + t * dy), centre))
    return best


def test_a_route_goes_around_a_person_standing_in_an_open_room() -> None:
    s = _state({"position": [9.5, 0.8]})  # out of the way first
    s.robot = RobotPose(5.8, 1.0, 0.0)
    goals = s._goal_poses("blue_sofa")
    direct = s.robot_plan(goals)
    assert direct is not None
    mid = direct.poses[len(direct.poses) // 2]
    s.person.x, s.person.y = mid.x, mid.y  # now right on that route
    around = s.robot_plan(goals)
    assert around is not None and around.length > direct.length
    points = [(p.x, p.y) for p in around.poses]
    assert _closest_approach(points, (mid.x, mid.y)) >= TOUCH
    result = _go_to(s, "blue_sofa")
    assert result.success and result.path_length == pytest.approx(around.length)
    assert s.distance_to("person") >= PERSON_GAP and s.person.clock == s.round_time(1)  # nobody waited


def test_a_person_in_a_doorway_with_another_way_is_driven_around() -> None:
    s = _state({"position": [2.5, 4.5]})  # in the doorway between the bedroom and the kitchen
    assert (s.robot_room(), s.layout.room_at(2.5, 4.4)) == ("bedroom", "kitchen")
    result = _go_to(s, "kitchen_counter")
    assert result.success and s.robot_room() == "kitchen"
    assert s.person.clock == s.round_time(1)  # the way through the other rooms: no wait
    assert result.path_length > 6.0  # bedroom, bathroom, living room, kitchen


TREE = [["bedroom", "kitchen"], ["kitchen", "living_room"], ["living_room", "bathroom"]]  # one door into the bedroom


def test_a_person_in_the_only_doorway_makes_go_to_wait_and_then_fail() -> None:
    s = _state({"position": [2.5, 4.5]}, doors=TREE)
    start = (s.robot.x, s.robot.y)
    result = _go_to(s, "kitchen_counter")
    assert not result.success and result.reason is SkillFailure.UNREACHABLE
    assert "person stands in the only way to the kitchen_counter" in result.message and "waited 5.0 s" in result.message
    assert (s.robot.x, s.robot.y) == start
    assert s.person.clock == pytest.approx(s.round_time(1) + PERSON_WAIT_SECONDS)


def test_the_wait_never_runs_into_the_next_round_nor_before_the_task() -> None:
    s = _state({"position": [2.5, 4.5]}, doors=TREE)
    s.advance_people(s.round_time(2) - 2.0)  # late in round 1: 2 s are left
    assert not _go_to(s, "kitchen_counter").success
    assert s.person.clock == pytest.approx(s.round_time(2))
    s = _state({"position": [2.5, 4.5]}, doors=TREE)
    before = s.person.clock
    outcome = s.navigate("kitchen_counter", wait_until=s.wait_limit(0))  # the exploration phase: no waiting
    assert not outcome.ok and "waited" not in outcome.reason and s.person.clock == before


def test_a_person_who_moves_on_in_time_lets_go_to_through() -> None:
    s = _state({"position": [2.5, 4.5], "script": [{"walk": "living_room"}]}, doors=TREE)
    result = _go_to(s, "kitchen_counter")
    assert result.success and s.robot_room() == "kitchen"
    waited = s.person.clock - s.round_time(1)
    assert 0.0 < waited < PERSON_WAIT_SECONDS  # they walked on out of the doorway
    assert s.distance_to("person") >= PERSON_GAP


def test_go_to_never_ends_in_the_person() -> None:
    s = _state({"position": [7.3, 1.75]})  # right where the robot would stand at the brown table's front
    s.robot = RobotPose(6.0, 3.8, 0.0)
    assert _go_to(s, "brown_table").success
    assert s.distance_to("person") >= PERSON_GAP
    # an overshooting navigation stops short of the person too
    s = _state({"position": [6.5, 2.0]})
    s.robot = RobotPose(6.5 - TOUCH - 0.6, 2.0, 0.0)
    s.nudge_towards("person", gap=0.02)
    assert s.distance_to("person") == pytest.approx(PERSON_GAP)
    s.nudge_towards("blue_sofa", gap=0.02)  # the sofa lies beyond them
    assert s.distance_to("person") >= PERSON_GAP - 1e-9


def test_a_home_without_a_person_plans_as_before() -> None:
    s = HomeState.from_spec(parse_scene(scene_data()))
    goals = s._goal_poses("kitchen_counter")
    assert s.person_discs() == [] and s.robot_plan(goals) == s.nav.plan(Pose2D(s.robot.x, s.robot.y, s.robot.yaw), goals)


def test_a_driven_base_stops_at_the_person_and_navigate_to_goes_around() -> None:
    from types import SimpleNamespace

    from homiebot.worlds.home.control import HomeControl

    s = _state({"position": [7.0, 1.5]})
    s.robot = RobotPose(5.8, 1.5, 0.0)  # facing them, 1.2 m apart
    control = HomeControl(SimpleNamespace(state=s))  # type: ignore[arg-type]
    report = control.drive(0.5, 0.0, duration=4.0)
    assert report.collision and 0.5 < report.distance < 1.2 - TOUCH + 0.03
    assert math.dist((s.robot.x, s.robot.y), (7.0, 1.5)) >= TOUCH
    assert not control.drive(-0.5, 0.0, duration=1.0).collision  # backing off is free
    start = s.robot.x
    report = control.navigate_to(8.2, 1.5, yaw=0.0)  # the far side of them: around, not through
    assert report.distance > 8.2 - start + 0.2 and (s.robot.x, s.robot.y) == pytest.approx((8.2, 1.5))


# ---- the expert policies: the same wait as Go to ------------------------------------------------
def _home(person: dict[str, Any], round_one: bool = True):  # noqa: ANN202 - an EmbeddedHome, at round 1's start
    from homiebot.worlds.home.world import EmbeddedHome

    data = scene_data(person)
    data["doors"] = TREE
    home = EmbeddedHome(parse_scene(data), width=32, height=32, depth=False, segmentation=False)
    home.reset()
    if round_one:
        home.state.advance_people(home.state.round_time(1))
    return home


def _expert_go_to(home, policy: str, target: str = "kitchen_counter"):  # noqa: ANN001, ANN202 - a home, a SkillResult
    from homiebot.skills.policy_skill import PolicySkill

    skill = PolicySkill("NoMaD", policy=policy, image_size=(32, 32))
    try:
        return skill.run(Subtask(action=Action.GO_TO, target=target), home, SkillContext(0, 1, 1, 3))
    finally:
        skill.close()


@pytest.mark.parametrize("policy", ["expert_waypoints", "expert_discrete"])
def test_an_expert_policy_waits_for_a_person_who_moves_on_and_goes_through(policy: str) -> None:
    home = _home({"position": [2.5, 4.5], "script": [{"walk": "living_room"}]})  # in the only doorway, then off
    try:
        s = home.state
        result = _expert_go_to(home, policy)
        assert result.success, result.message
        assert s.robot_room() == "kitchen" and s.distance_to("person") >= PERSON_GAP
        waited = s.person.clock - s.round_time(1)
        assert 0.0 < waited < PERSON_WAIT_SECONDS
    finally:
        home.close()


@pytest.mark.parametrize("policy", ["expert_waypoints", "expert_discrete"])
def test_an_expert_policy_reports_a_person_who_stays_in_the_only_way(policy: str) -> None:
    home = _home({"position": [2.5, 4.5]})
    try:
        s = home.state
        start = (s.robot.x, s.robot.y)
        result = _expert_go_to(home, policy)
        assert not result.success and result.reason is SkillFailure.UNREACHABLE
        assert "person stands in the only way to the kitchen_counter (waited 5.0 s" in result.message
        assert (s.robot.x, s.robot.y) == start
        assert s.person.clock == pytest.approx(s.round_time(1) + PERSON_WAIT_SECONDS)
    finally:
        home.close()


def test_an_expert_policy_never_waits_into_the_next_round_nor_before_the_task() -> None:
    home = _home({"position": [2.5, 4.5]})
    try:
        s = home.state
        s.advance_people(s.round_time(2) - 2.0)  # late in round 1: 2 s are left
        result = _expert_go_to(home, "expert_waypoints")
        assert not result.success and "waited 2.0 s" in result.message
        assert s.person.clock == pytest.approx(s.round_time(2))
    finally:
        home.close()
    # before the task (the round-0 steps play after the exploration phase): the clock stands before round 1, no wait
    home = _home({"position": [2.5, 4.5], "script": [{"round": 0, "walk": "kitchen"}]}, round_one=False)
    try:
        s = home.state
        assert s.person.clock < s.round_time(1)
        result = _expert_go_to(home, "expert_waypoints")
        assert not result.success and "waited" not in result.message and s.person.clock == 0.0
    finally:
        home.close()


# ---- frontier exploration ----------------------------------------------------------------------
def test_frontier_exploration_drives_around_a_person_in_the_open_floor() -> None:
    from homiebot.perception.detectors import SimTruthDetector
    from homiebot.worlds.home.mapping import explore_frontiers, map_for_home
    from homiebot.worlds.home.world import EmbeddedHome

    spot = (8.18, 3.33)  # in the living room's open floor, where the exploration stops without a person
    home = EmbeddedHome(parse_scene(scene_data({"position": list(spot)})), width=128, height=128)
    try:
        home.reset()
        s = home.state
        plans: list[Any] = []
        plan = s.nav.plan  # every drive's path, whoever plans it
        s.nav.plan = lambda *a, **k: plans.append(plan(*a, **k)) or plans[-1]  # type: ignore[method-assign]
        try:
            result = explore_frontiers(home, map_for_home(home), SimTruthDetector(), max_goals=8)
        finally:
            del s.nav.plan
        assert len(result.visited) == 8 and not result.failed
        assert s.path_length > 20.0
        drives = [p for p in plans if p is not None]
        assert len(drives) >= 8 and all(_closest_approach([(q.x, q.y) for q in p.poses], spot) >= TOUCH for p in drives)
        assert (s.person.x, s.person.y) == spot  # they stood there all along
    finally:
        home.close()


def test_the_exploration_phase_looks_beside_a_person_on_a_frontier_and_never_drives_into_them(monkeypatch) -> None:
    from homiebot.core.tasks import Exploration
    from homiebot.runtime import build_world, scene_for
    from homiebot.worlds.exploration_phase import BESIDE_PERSON
    from homiebot.worlds.home.control import HomeControl

    from .test_exploration_phase import mapped, task

    spot = (2.43, 2.33)  # in the kitchen's open floor, beside the goal of the kitchen's frontier
    plans: list[Any] = []
    plan = NavigationMap.plan
    monkeypatch.setattr(NavigationMap, "plan", lambda *a, **k: plans.append(plan(*a, **k)) or plans[-1])
    steps: list[tuple[float, str, tuple[float, float]]] = []  # (tolerance, message, where the base ended)
    navigate_to = HomeControl.navigate_to

    def record(self: HomeControl, x: float, y: float, yaw: float | None = None, tolerance: float = 0.0) -> Any:
        report = navigate_to(self, x, y, yaw, tolerance)
        steps.append((tolerance, report.message, (self.state.robot.x, self.state.robot.y)))
        return report

    monkeypatch.setattr(HomeControl, "navigate_to", record)
    world = build_world(mapped(), scene_for(task(person={"position": list(spot)}, explore=Exploration(max_stops=30))))
    try:
        world.reset()
        s = world.ground_truth()
        assert (s.person.x, s.person.y) == spot and s.person.clock == 0.0  # nobody waited for them
        drives = [p for p in plans if p is not None]
        assert len(drives) >= 10
        assert all(_closest_approach([(q.x, q.y) for q in p.poses], spot) >= TOUCH for p in drives)
        frontier = [(message, at) for tolerance, message, at in steps if tolerance == 0.0]
        blocked = next(i for i, (message, _) in enumerate(frontier) if message)  # the goal beside them
        assert not frontier[blocked + 1][0] and math.dist(frontier[blocked + 1][1], spot) == pytest.approx(BESIDE_PERSON, abs=0.1)
        assert any(not message and s.layout.room_at(*at) == "kitchen" for message, at in frontier[blocked + 2:])  # on exploring
    finally:
        world.close()
