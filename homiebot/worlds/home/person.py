"""The person in the embedded home: their timed plan, their moving state, and how time moves them.

The script (``person_script.PersonSpec``) becomes a plan when the home is built: every walk is planned
once on the home's free floor and timed at the person's walking speed, picks and places take
``HANDLING_SECONDS``. After the last pick or place of a round the person steps back off the spot they
used (``STEP_BACK``): they stand in the robot's way as furniture does, and would otherwise keep it from
the very thing they just put down. Planning up front catches a script the home cannot play (a place
nobody can walk to) as a ``SceneError`` before any episode starts, and keeps every episode of a task
identical.

Time in the home is the person's clock. The script's round-0 steps (before the task) take the first
``prelude`` seconds; round ``r`` of an episode begins at ``prelude + (r - 1) * ROUND_SECONDS`` (a round is
about what one subtask takes a robot), and ``advance`` plays the plan up to a moment. What the plan
meets on the way is today's state, not the plan's: an object the robot took is not picked (an event says
so), and a place with no free spot leaves the object in hand.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection

from homiebot.core.contracts import PERSON_KIND
from homiebot.core.scenes import SceneError
from homiebot.worlds.home.approach import Approach
from homiebot.worlds.home.catalog import ROBOT_RADIUS
from homiebot.worlds.home.facts import HomeFacts, ObjectLocation
from homiebot.worlds.home.navigation import CLEARANCE, Pose2D
from homiebot.worlds.home.person_script import PersonSpec
from homiebot.worlds.home.person_state import CARRIED, PERSON_RADIUS, Leg, PersonState
from homiebot.worlds.home.placement import Placement
from homiebot.worlds.home.queries import HomeQueries

ROUND_SECONDS = 10.0  # the person's time between the starts of two rounds
HANDLING_SECONDS = 2.0  # to take something in hand or put it down
HAND_FORWARD = 0.5  # a carried object sits this far in front of the person's centre ...
HAND_HEIGHT = 1.06  # ... at this height (both arms forward, see person_mjcf)
PICK_REACH = 1.5  # the person reaches an object within this distance of where they stand
STRIDE = 1.4  # metres per full gait cycle (two steps), for the walking animation
STEP_BACK = 0.8  # after their last pick or place for a while, the person steps this far off the spot
PERSON_CATEGORY = PERSON_KIND  # the class perception sees the person as


def round_start(round_index: int, prelude: float = 0.0) -> float:
    """The person's clock when round ``round_index`` (1-based) begins, after a ``prelude`` of round-0 steps;
    round 0 (exploration, before the task) is the clock's start."""
    return 0.0 if round_index <= 0 else prelude + (round_index - 1) * ROUND_SECONDS


def prelude_of(legs: list[Leg], spec: PersonSpec) -> float:
    """How long the script's round-0 steps take (0 without any)."""
    before = {i for i, step in enumerate(spec.script, 1) if step.round == 0}
    return max((leg.end for leg in legs if leg.step in before), default=0.0)


def start_pose(spec: PersonSpec, state: HomeFacts) -> PersonState:
    """Where the person stands before anything happens; SceneError when that is inside furniture, a wall
    or the robot."""
    assert state.nav is not None
    robot = (state.robot.x, state.robot.y)
    if spec.room is not None:  # the free middle of the room, not on the robot
        poses = [p for p in state.nav.free_poses_in_room(state.layout.rooms[spec.room], limit=400)
                 if math.dist((p.x, p.y), robot) >= ROBOT_RADIUS + PERSON_RADIUS + CLEARANCE]
        if not poses:
            raise SceneError(f"person '{spec.name}': room '{spec.room}' has no free floor to stand on")
        x, y = poses[0].x, poses[0].y
    else:
        assert spec.position is not None
        x, y = spec.position
        if state.layout.room_at(x, y) is None or not state.nav.is_floor_free(x, y, PERSON_RADIUS):
            raise SceneError(f"person '{spec.name}' starts at {list(spec.position)}, inside furniture, a wall or no room")
        if math.dist((x, y), robot) < ROBOT_RADIUS + PERSON_RADIUS:
            raise SceneError(f"person '{spec.name}' starts at {list(spec.position)}, where the robot stands")
    return PersonState(spec.name, x, y, math.radians(spec.yaw))


def plan_script(spec: PersonSpec, state: HomeFacts, start: PersonState) -> list[Leg]:
    """Time every step of the script from the person's start; SceneError for a walk with no path."""
    assert state.nav is not None
    legs: list[Leg] = []
    here, now, prelude = (start.x, start.y), 0.0, None
    for i, step in enumerate(spec.script, 1):
        if step.round > 0 and prelude is None:  # the task starts once the unseen round-0 steps are over
            prelude = now
        now = max(now, round_start(step.round, prelude or 0.0))
        if step.say is not None:
            legs.append(Leg(i, "say", now, now, step.say))
            continue
        goals = _goals(step.kind, step.target, state)
        path = state.nav.plan(Pose2D(here[0], here[1], 0.0), goals) if goals else None
        if path is None:
            raise SceneError(f"person script step {i}: '{spec.name}' has no free path to {step.kind} "
                             f"{_describe(step.target)} from ({here[0]:.1f}, {here[1]:.1f})")
        points = tuple((p.x, p.y) for p in path.poses)
        if len(points) > 1:
            legs.append(Leg(i, "walk", now, now + path.length / spec.speed, _describe(step.target), points))
            now, here = legs[-1].end, points[-1]
        if step.kind in ("pick", "place"):
            legs.append(Leg(i, step.kind, now, now + HANDLING_SECONDS, str(step.target)))
            now += HANDLING_SECONDS
            if i == len(spec.script) or spec.script[i].round > step.round:  # done for now: make room
                back = _step_back(here, state, spec.speed, now, i)
                if back is not None:
                    legs.append(back)
                    now, here = back.end, back.points[-1]
    return legs


def _step_back(here: tuple[float, float], state: HomeFacts, speed: float, now: float, step: int) -> Leg | None:
    """A short walk off the spot where the person just handled something (the spot a robot would use
    it from), to free floor of the same room at least ``STEP_BACK`` away; None when there is none."""
    assert state.nav is not None
    room = state.layout.room_at(*here)
    spots = [p for p in state.nav.free_poses_near(here[0], here[1], 1.5, limit=400)
             if math.dist((p.x, p.y), here) >= STEP_BACK and state.layout.room_at(p.x, p.y) == room]
    path = state.nav.plan(Pose2D(here[0], here[1], 0.0), spots[:12]) if spots else None
    if path is None:
        return None
    return Leg(step, "walk", now, now + path.length / speed, "a step back", tuple((p.x, p.y) for p in path.poses))


def _describe(target: str | tuple[float, float]) -> str:
    return target if isinstance(target, str) else f"({target[0]:.1f}, {target[1]:.1f})"


def _goals(kind: str, target: str | tuple[float, float], state: HomeFacts) -> list[Pose2D]:
    """Where the person may stop to do a step: in the room, facing the receptacle, next to the object."""
    assert state.nav is not None
    if not isinstance(target, str):
        return state.nav.free_poses_near(target[0], target[1], 0.6)
    if kind == "walk" and target in state.layout.rooms:
        return state.nav.free_poses_in_room(state.layout.rooms[target])
    return Approach(state).goal_poses(target)


def advance(person: PersonState, legs: list[Leg], until: float, state: HomeFacts, rng: random.Random) -> None:
    """Play the plan up to the person's time ``until`` (never backwards), changing ``state`` as it goes."""
    if until < person.clock:
        return
    person.moving = False
    while person.next_leg < len(legs):
        leg = legs[person.next_leg]
        if leg.start > until:
            break
        if leg.kind == "walk":
            if until < leg.end:
                _walk_to(person, leg, (until - leg.start) / (leg.end - leg.start))
                person.moving = True
                break
            _walk_to(person, leg, 1.0)
        elif leg.kind == "say":
            person.said.append((leg.start, leg.target))
            person.events.append(f"{leg.start:.0f}s: said '{leg.target}'")
        elif leg.kind == "pick":
            _pick(person, leg, state)
        else:
            _place(person, leg, state, rng)
        person.next_leg += 1
    person.clock = until
    carry(person, state)


def play(state: HomeFacts, until: float) -> None:
    """Play the scene's person's plan up to their clock time ``until`` (nothing without a person)."""
    if state.person is None:
        return
    # seeded by the scene and the leg, so that where a placed object lands never depends on call order
    rng = random.Random(f"{state.layout.spec.name}:{state.layout.spec.seed}:person:{state.person.next_leg}")
    advance(state.person, state.person_legs, until, state, rng)


def walking_pose(person: PersonState, legs: list[Leg], until: float, happened: Collection[str] = ()) -> PersonState:
    """A copy of the person played up to ``until`` by their walks, and by the picks and places among the
    events that ``happened`` (the later state's): where to draw them between two states, for videos; the
    home is not touched. Chained calls with growing times trace their path."""
    out = PersonState(person.name, person.x, person.y, person.yaw, person.held, person.clock, person.next_leg,
                      person.walked, False, person.said, person.events)
    while out.next_leg < len(legs) and legs[out.next_leg].start <= until:
        leg = legs[out.next_leg]
        if leg.kind == "walk":
            if until < leg.end:
                _walk_to(out, leg, (until - leg.start) / (leg.end - leg.start))
                out.moving = True
                break
            _walk_to(out, leg, 1.0)
        elif leg.kind == "pick" and f"{leg.start:.0f}s: picked {leg.target}" in happened:
            out.held = leg.target
        elif leg.kind == "place" and any(e.startswith(f"{leg.start:.0f}s: put {out.held} ") for e in happened):
            out.held = None
        out.next_leg += 1
    out.clock = max(out.clock, until)
    return out


def walking_until(person: PersonState, legs: list[Leg], until: float) -> float:
    """When, up to ``until``, the person's last walk from where their plan stands ends (their clock when
    they do not walk before then)."""
    end = person.clock
    for leg in legs[person.next_leg:]:
        if leg.start > until:
            break
        if leg.kind == "walk":
            end = min(until, leg.end)
    return end


def _walk_to(person: PersonState, leg: Leg, fraction: float) -> None:
    """Put the person ``fraction`` of the way along the leg's polyline, facing along it."""
    pts = leg.points
    seg = [math.dist(a, b) for a, b in zip(pts, pts[1:], strict=False)]
    total = sum(seg)
    goal = total * min(max(fraction, 0.0), 1.0)
    done = 0.0
    x, y = pts[0]
    for (a, b), d in zip(zip(pts, pts[1:], strict=False), seg, strict=True):
        if d <= 0:
            continue
        t = min(1.0, (goal - done) / d)
        x, y = a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])
        person.yaw = math.atan2(b[1] - a[1], b[0] - a[0])
        if done + d >= goal:
            break
        done += d
    person.walked += math.dist((person.x, person.y), (x, y))
    person.x, person.y = x, y


def _pick(person: PersonState, leg: Leg, state: HomeFacts) -> None:
    obj = leg.target
    loc = state.locations[obj]
    ox, oy, _, _ = state.object_poses[obj]
    if obj == state.held or loc.relation in ("held", CARRIED) or math.dist((person.x, person.y), (ox, oy)) > PICK_REACH:
        why = "the robot holds it" if obj == state.held else "it is not where it was"
        person.events.append(f"{leg.start:.0f}s: did not pick {obj}: {why}")
        return
    container = HomeQueries(state).enclosing_container(obj)
    if container is not None and not state.is_open.get(container, True):
        person.events.append(f"{leg.start:.0f}s: opened and closed the {container}")
    person.held = obj
    person.yaw = math.atan2(oy - person.y, ox - person.x)
    person.events.append(f"{leg.start:.0f}s: picked {obj}")


def _place(person: PersonState, leg: Leg, state: HomeFacts, rng: random.Random) -> None:
    obj, receptacle = person.held, leg.target
    if obj is None:
        return
    rec = state.layout.receptacles[receptacle]
    info = state.layout.objects[obj]
    spot = None
    placement = Placement(state)
    if len(HomeQueries(state).objects_at(receptacle)) < rec.type.capacity:
        spot = placement.free_local_spot(rec, info, rng, tidy=True, reach_from=(person.x, person.y))
    if spot is None:
        person.events.append(f"{leg.start:.0f}s: found no room for {obj} {rec.type.relation} the {receptacle}")
        return
    person.held = None
    placement.put_at(obj, rec, spot)
    person.yaw = math.atan2(rec.y - person.y, rec.x - person.x)
    person.events.append(f"{leg.start:.0f}s: put {obj} {rec.type.relation} the {receptacle}")


def carry(person: PersonState, state: HomeFacts) -> None:
    """Keep a carried object in the person's hands (pose, and the room it is in)."""
    if person.held is None:
        return
    c, s = math.cos(person.yaw), math.sin(person.yaw)
    x, y = person.x + HAND_FORWARD * c, person.y + HAND_FORWARD * s
    state.object_poses[person.held] = (x, y, HAND_HEIGHT, person.yaw)
    state.locations[person.held] = ObjectLocation(None, CARRIED, state.layout.room_at(person.x, person.y))


def figure_joints(person: PersonState) -> tuple[float, float, float, float]:
    """Hip (left, right) and shoulder (left, right) angles of the figure: a swinging gait while walking,
    arms forward while carrying (positive swings a limb backwards)."""
    swing = 0.45 * math.sin(2 * math.pi * person.walked / STRIDE) if person.moving else 0.0
    arms = (-1.0, -1.0) if person.held else (-0.6 * swing, 0.6 * swing)
    return (swing, -swing, *arms)
