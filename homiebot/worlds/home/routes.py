"""The robot's ways through the embedded home, with the person as an obstacle.

Routes go around the person where there is room, Go to stops clear of them, and where they stand in
the only way (a doorway, a corridor) a navigation may wait a few seconds of their time for them to
move on before it reports the way blocked. Following the person walks with them through a round.
"""

from __future__ import annotations

import math

from homiebot.worlds.home.approach import Approach
from homiebot.worlds.home.catalog import ROBOT_RADIUS
from homiebot.worlds.home.facts import PERSON_STOP, HomeFacts, Outcome, RobotPose
from homiebot.worlds.home.navigation import CLEARANCE, Disc, Path, Pose2D
from homiebot.worlds.home.person import play, round_start
from homiebot.worlds.home.person_state import PERSON_RADIUS
from homiebot.worlds.home.placement import Placement
from homiebot.worlds.home.queries import HomeQueries

FOLLOW_GAP = 0.6  # Follow keeps this gap between the base's edge and the person
PERSON_WAIT_SECONDS = 5.0  # how long a navigation waits, at most, for the person to clear the only way
PERSON_WAIT_STEP = 0.5  # seconds of the person's time between two looks at whether the way is clear


class RobotRoutes:
    """Plans and drives the robot base around the home's furniture and its person."""

    def __init__(self, home: HomeFacts) -> None:
        self._home = home
        self._approach = Approach(home)

    # ---- the person as an obstacle ----------------------------------------------------------
    def person_discs(self) -> list[Disc]:
        """Where the base centre may not go because of the person (empty without one): their body, the
        base's radius and the planning clearance around where they stand now."""
        p = self._home.person
        return [] if p is None else [(p.x, p.y, PERSON_RADIUS + ROBOT_RADIUS + CLEARANCE)]

    def robot_plan(self, goals: list[Pose2D]) -> Path | None:
        """The robot's shortest path from where it stands to the first reachable goal, around the person,
        ending ``PERSON_GAP`` or more from their body (the grid alone tells that to a cell)."""
        h = self._home
        assert h.nav is not None
        p = h.person
        if p is not None:
            goals = [g for g in goals if math.hypot(g.x - p.x, g.y - p.y) >= PERSON_STOP]
        return h.nav.plan(Pose2D(h.robot.x, h.robot.y, h.robot.yaw), goals, avoid=self.person_discs())

    def person_in_the_way(self, goals: list[Pose2D]) -> bool:
        """True when only the person keeps the robot from the goals (there is a way without them)."""
        h = self._home
        assert h.nav is not None
        return h.person is not None and h.nav.plan(Pose2D(h.robot.x, h.robot.y, h.robot.yaw), goals) is not None

    def wait_limit(self, round_index: int) -> float | None:
        """The person's clock time up to which a navigation of round ``round_index`` waits for them:
        ``PERSON_WAIT_SECONDS`` from now, never past the next round's start; None without a person and
        before the task (round 0), when their unseen steps must not start early."""
        h = self._home
        if h.person is None or round_index < 1:
            return None
        return min(h.person.clock + PERSON_WAIT_SECONDS, round_start(round_index + 1, h.person_prelude))

    def wait_for_way(self, target: str, until: float) -> tuple[Path | None, float]:
        """Let the person's time run in steps of ``PERSON_WAIT_STEP`` up to ``until`` while they stand in
        the only way to ``target``; the path once they cleared it (or None) and the seconds waited."""
        p = self._home.person
        if p is None:
            return None, 0.0
        start = p.clock
        while p.clock < until:
            play(self._home, min(until, p.clock + PERSON_WAIT_STEP))
            path = self.robot_plan(self._approach.goal_poses(target))  # a person target has moved on too
            if path is not None:
                return path, p.clock - start
        return None, p.clock - start

    # ---- driving ----------------------------------------------------------------------------
    def way_to(self, target: str, wait_until: float | None = None) -> tuple[Path | None, str | None]:
        """The robot's path around the person to a pose from which ``target`` can be used. Where the person
        stands in the only way, it waits for them up to their clock time ``wait_until`` (None: not at all,
        as when they must not act yet). Without a path, why when the person is the reason (else None)."""
        goals = self._approach.goal_poses(target)
        path = self.robot_plan(goals)
        if path is not None or not self.person_in_the_way(goals):
            return path, None
        waited = 0.0
        if wait_until is not None:
            path, waited = self.wait_for_way(target, wait_until)
        if path is not None:
            return path, None
        assert self._home.person is not None
        after = f" (waited {waited:.1f} s for them to move)" if waited else ""
        return None, f"the {self._home.person.name} stands in the only way to the {target}{after}"

    def navigate(self, target: str, wait_until: float | None = None) -> Outcome:
        """Drive along a collision-free path around the person to a pose from which ``target`` can be used
        (``way_to``: waiting for the person up to ``wait_until``)."""
        path, blocked = self.way_to(target, wait_until)
        if path is None:
            return Outcome(False, blocked or f"no collision-free path to the {target}")
        self._arrive(path)
        return Outcome(True, path_length=path.length)

    def follow(self, person: str, round_index: int) -> Outcome:
        """Walk with the person through round ``round_index`` (until the next round begins) and stop
        ``FOLLOW_GAP`` from them, facing them."""
        h = self._home
        assert h.nav is not None
        p = h.person
        if p is None or person != p.name:
            return Outcome(False, f"there is nobody called {person} here")
        play(h, round_start(round_index + 1, h.person_prelude))
        start = Pose2D(h.robot.x, h.robot.y, h.robot.yaw)
        for gap in (FOLLOW_GAP, FOLLOW_GAP + 0.4, FOLLOW_GAP + 0.9):
            radius = ROBOT_RADIUS + PERSON_RADIUS + gap
            goals = sorted(h.nav.poses_around_point(p.x, p.y, radius, (p.x, p.y)),
                           key=lambda g: math.dist((g.x, g.y), (start.x, start.y)))
            path = self.robot_plan(goals)
            if path is not None:
                self._arrive(path)
                return Outcome(True, path_length=path.length)
        return Outcome(False, f"no free path to keep up with the {person}")

    def nudge_towards(self, target: str, gap: float) -> None:
        """Move straight towards the target until the base is ``gap`` metres from it (ignores occupancy:
        used to model a navigation policy that overshoots and ends up pressed against furniture)."""
        h = self._home
        dist = HomeQueries(h).distance_to(target)
        if dist <= gap:
            return
        tx, ty = self._approach.anchor(target)
        heading = math.atan2(ty - h.robot.y, tx - h.robot.x)
        step = self.short_of_person(heading, dist - gap)
        h.robot = RobotPose(h.robot.x + step * math.cos(heading), h.robot.y + step * math.sin(heading), heading)
        h.path_length += step
        Placement(h).carry_held()

    def short_of_person(self, heading: float, step: float) -> float:
        """How far of ``step`` the base may move straight along ``heading`` and keep ``PERSON_GAP`` from the
        person's body (all of it without a person, or when moving away from them)."""
        h = self._home
        p = h.person
        if p is None:
            return step
        limit = PERSON_STOP
        dx, dy = h.robot.x - p.x, h.robot.y - p.y
        b = dx * math.cos(heading) + dy * math.sin(heading)  # |d + s u|^2 = s^2 + 2 b s + |d|^2
        c = dx * dx + dy * dy - limit * limit
        if b >= 0:
            return step  # moving away from them (or past them, never closer)
        if c <= 0:
            return 0.0  # already at the gap and moving closer
        if b * b - c <= 0:
            return step  # the line passes them by
        return min(step, -b - math.sqrt(b * b - c))

    def _arrive(self, path: Path) -> None:
        """Put the base at the end of ``path``, counting its length, the held object along."""
        h = self._home
        end = path.poses[-1]
        h.robot = RobotPose(end.x, end.y, end.yaw)
        h.path_length += path.length
        Placement(h).carry_held()
