"""The oracle planner: privileged, it reads the task goal and the simulator's true state.

Each round it derives the next subtask from the current state alone, so it recovers from any
failure by construction: after L3 the container is still closed, so it opens it; after E2 the object
lies on the floor, so it goes there and picks it up; after D2 it is too close, so it moves again.
After an E1 it retries the subtask with another capable model when one exists.

With mapped perception it still plans from truth, and names each thing by the map instance that
stands for it (same category, nearest to the true position), so it never depends on the map's
grounding of words. A thing the map has not seen yet keeps its true name; the map answers F2 and the
oracle explores the room where that thing truly is (``[Explore, room]`` when a model offers Explore,
else Go to the room), at most ``MAX_EXPLORES`` times per room.
"""

from __future__ import annotations

import json
import math

from homiebot.core.contracts import Action, ErrorCode, Subtask
from homiebot.core.parsing import parse_subtask_text
from homiebot.core.tasks import Condition, ContainerState, ObjectAt, PersonHas, RobotIn
from homiebot.planners.base import EpisodeContext, ModelInfo, Planner, PlannerConfigError, PlannerReply, PlannerRequest
from homiebot.planners.models import choose_model
from homiebot.worlds.home import oracle_people
from homiebot.worlds.home.goals import candidates, condition_holds
from homiebot.worlds.home.state import ARM_REACH, HomeState

MIN_GAP = 0.1
MAX_EXPLORES = 2  # per room, after F2 from the map
BIND_RADIUS = 0.75  # metres between a map instance and the true position of what it stands for


class _NoWay(Exception):
    """Nothing the goal allows is left: every option was refused."""


class OraclePlanner(Planner):
    """Plans from privileged truth towards ``task.goal``; needs the embedded home."""

    needs_views = ()

    def __init__(self) -> None:
        self.state: HomeState | None = None
        self.goal: list[Condition] = []
        self.models: list[ModelInfo] = []
        self._last: tuple[str, str | None] | None = None  # (subtask text, model)

    def reset(self, context: EpisodeContext) -> None:
        state = context.world.ground_truth() if context.world is not None else None
        if not isinstance(state, HomeState):
            raise PlannerConfigError("the oracle planner needs the embedded home world (it reads privileged state)")
        if context.task.goal is None:
            raise PlannerConfigError(
                f"the oracle planner needs a task goal; task '{context.task.id}' has none. Use an instruction like "
                "'put the green can in the fridge', or a task file with a goal"
            )
        self.state = state
        self.goal = sorted(context.task.goal, key=lambda c: {"object_at": 0, "person_has": 0, "container": 1, "robot_in": 2}[c.kind])
        self.models = context.models
        self._last = None
        self._choice: dict[int, tuple[str, str]] = {}  # goal index -> (object, receptacle), fixed once chosen
        self._explored: dict[str, int] = {}  # room -> explorations because the map did not know a name (mapped perception)
        self._banned: set[str] = set()  # things a safety rule or the operator forbade (S1/S2 feedback)

    # ---- decision -------------------------------------------------------------------------
    def plan(self, request: PlannerRequest) -> PlannerReply:
        assert self.state is not None, "reset() was not called"
        self._learn_refusal(request)
        try:
            subtask, why = self._unmapped(request) or self._next()
        except _NoWay as err:
            subtask, why = Subtask(action=Action.END), str(err)
        model = self._model_for(subtask, request)  # from the true kinds
        truth_text = subtask.text()
        if request.scene_map is not None:
            subtask = self._in_map_terms(subtask, request.scene_map)
        self._last = (truth_text, model)
        parts = [subtask.action.value] + [p for p in (subtask.target, subtask.place) if p]
        return PlannerReply(json.dumps({"analysis": why, "subtask": parts, "model": model}))

    def _next(self) -> tuple[Subtask, str]:
        s = self.state
        assert s is not None
        if s.held is not None:
            return self._with_held(s.held)
        for i, cond in enumerate(self.goal):
            if condition_holds(s, cond):
                continue
            if isinstance(cond, ObjectAt):
                return self._bring(*self._chosen(i, cond))
            if isinstance(cond, PersonHas):
                return oracle_people.fetch(s, cond, self._use)
            if isinstance(cond, ContainerState):
                if cond.receptacle in self._banned:
                    raise _NoWay(f"I may not use the {cond.receptacle}, so I stop here")
                act = Action.OPEN if cond.open else Action.CLOSE
                return self._use(cond.receptacle, act, f"the task needs the {cond.receptacle} {'open' if cond.open else 'closed'}")
            if isinstance(cond, RobotIn):
                if cond.room in self._banned:
                    raise _NoWay(f"I may not go to the {cond.room}, so I stop here")
                return Subtask(action=Action.GO_TO, target=cond.room), f"the task ends in the {cond.room}"
        return Subtask(action=Action.END), "every part of the task is done"

    def _learn_refusal(self, request: PlannerRequest) -> None:
        """After S1 (a safety rule) or S2 (the operator): never use that thing again; choose anew."""
        fb = request.feedback
        if fb is None or fb.code not in (ErrorCode.S1, ErrorCode.S2) or self._last is None:
            return
        name = fb.details.get("name") or ""
        sub = parse_subtask_text(self._last[0])
        if name not in {sub.target, sub.place}:  # the feedback speaks in map ids: take the refused subtask's own names
            name = sub.place or sub.target or ""
        if name:
            self._banned.add(name)
            self._choice.clear()

    def _unmapped(self, request: PlannerRequest) -> tuple[Subtask, str] | None:
        """After F2 from a map: explore the room where the unknown name truly is (once per room)."""
        fb = request.feedback
        if request.scene_map is None or fb is None or fb.code is not ErrorCode.F2 or not fb.details.get("name"):
            return None
        assert self.state is not None
        name = fb.details["name"]
        room = self.state.room_of(name) if self.state.lookup(name) is not None else None
        if room is None or self._explored.get(room, 0) >= MAX_EXPLORES:
            return None
        self._explored[room] = self._explored.get(room, 0) + 1
        why = f"the map does not know the {name} yet; it is in the {room}, so I look around there"
        if any(Action.EXPLORE.value in m.actions for m in self.models):
            return Subtask(action=Action.EXPLORE, target=room), why
        return Subtask(action=Action.GO_TO, target=room), why

    def _in_map_terms(self, sub: Subtask, scene_map: dict) -> Subtask:
        """The subtask with true names replaced by the map instances that stand for them."""
        if sub.action is Action.END:
            return sub
        return Subtask(action=sub.action, target=self._map_id(sub.target, scene_map), place=self._map_id(sub.place, scene_map))

    def _map_id(self, name: str | None, scene_map: dict) -> str | None:
        """The id of the map instance of the same category nearest to ``name``'s true position, else ``name``."""
        s = self.state
        assert s is not None
        if name is None or name in s.layout.rooms:
            return name
        if name in s.layout.objects:
            category = s.layout.objects[name].cls.name
            pose = s.object_poses.get(name)
            if pose is None:
                return name
            x, y = pose[0], pose[1]
        elif name in s.layout.receptacles:
            rec = s.layout.receptacles[name]
            category, x, y = rec.type.name, rec.x, rec.y
        else:
            return name
        best, best_d = name, BIND_RADIUS
        for inst in scene_map.get("instances", []):
            if inst.get("label") != category or inst.get("stale"):
                continue
            d = math.hypot(inst["position"][0] - x, inst["position"][1] - y)
            if d <= best_d:
                best, best_d = inst["id"], d
        return best

    def _near(self, name: str) -> bool:
        assert self.state is not None
        return MIN_GAP <= self.state.distance_to(name) <= ARM_REACH

    def _use(self, target: str, action: Action, why: str, place: str | None = None) -> tuple[Subtask, str]:
        """Go to ``target`` first if it is out of reach (or too close), else do ``action``."""
        subject = place or target
        if not self._near(subject):
            return Subtask(action=Action.GO_TO, target=subject), f"{why}; I need to be next to the {subject} first"
        return Subtask(action=action, target=target, place=place), why

    def _chosen(self, index: int, cond: ObjectAt, holding: str | None = None) -> tuple[str, str]:
        """Which object (the held one, else the nearest) and which receptacle serve this goal;
        decided once, then kept, so the plan does not flip as the robot moves."""
        s = self.state
        assert s is not None
        if index not in self._choice or (holding and self._choice[index][0] != holding):
            objects = [o for o in candidates(s, cond) if o not in self._banned]
            places = [r for r in cond.receptacles if r not in self._banned]
            if not places or not (holding or objects):
                raise _NoWay("every way to do this is forbidden by a safety rule or the operator, so I stop here")
            obj = holding or min(objects, key=lambda o: (math.dist(s.object_poses[o][:2], (s.robot.x, s.robot.y)), o))
            x, y = s.object_poses[obj][:2]

            def cost(name: str) -> tuple[bool, float, str]:
                rec = s.layout.receptacles[name]
                return (rec.type.articulated and not s.is_open[name], rec.footprint_distance(x, y), name)

            self._choice[index] = (obj, min(places, key=cost))
        return self._choice[index]

    def _bring(self, obj: str, receptacle: str) -> tuple[Subtask, str]:
        s = self.state
        assert s is not None
        dest = s.layout.receptacles[receptacle]
        if dest.type.articulated and not s.is_open[dest.name]:
            return self._use(dest.name, Action.OPEN, f"the {dest.name} is closed and my hand must be free to open it")
        box = s.enclosing_container(obj)
        if box is not None and not s.is_open[box]:
            return self._use(box, Action.OPEN, f"the {obj} is inside the closed {box}")
        return self._use(obj, Action.PICK, f"the {obj} has to go {dest.type.relation} the {dest.name}")

    def _with_held(self, held: str) -> tuple[Subtask, str]:
        s = self.state
        assert s is not None
        if (wanted := oracle_people.pending(s, self.goal, held)) is not None:
            return oracle_people.hand_over(s, held, wanted.person, self.models)
        for i, cond in enumerate(self.goal):
            if isinstance(cond, ObjectAt) and held in candidates(s, cond) and not condition_holds(s, cond):
                rec = self._chosen(i, cond, holding=held)[1]
                if not (s.layout.receptacles[rec].type.articulated and not s.is_open[rec]):
                    return self._use(held, Action.PUT, f"I hold the {held}, which belongs {s.layout.receptacles[rec].type.relation} the {rec}", place=rec)
                break
        spot = self._parking_spot(held)
        return self._use(held, Action.PUT, f"I must free my hand, so I put the {held} on the {spot}", place=spot)

    def _parking_spot(self, held: str) -> str:
        """The nearest open surface with room to spare, to free the hand."""
        s = self.state
        assert s is not None
        options = [r for r in s.layout.receptacles.values()
                   if not r.type.articulated and len(s.objects_at(r.name)) < r.type.capacity and r.name not in self._banned]
        return min(options, key=lambda r: s.distance_to(r.name)).name

    # ---- model choice ---------------------------------------------------------------------
    def _model_for(self, sub: Subtask, request: PlannerRequest) -> str | None:
        kind = None
        if sub.action is Action.GO_TO and self.state:
            entity = self.state.lookup(sub.target or "")
            assert entity is not None, f"the oracle goes only to things of the home, not '{sub.target}'"
            kind = entity.kind
        fb = request.feedback
        retry = self._last is not None and self._last[0] == sub.text() and fb is not None and fb.code is ErrorCode.E1
        # (``_last`` holds the subtask in true names, as ``sub`` here)
        return choose_model(sub, kind, self.models, [self._last[1]] if retry and self._last is not None and self._last[1] else [])
