"""The heuristic planner: no language model and no privileged state.

It reads the instruction once (``planners/instructions.py`` lists the forms it understands), then
each round updates what it knows from perception only (the names and categories visible in the
four views, and what seems to rest on what) and from feedback, and chooses the next subtask:

* targets are grounded with names, aliases, word overlap and sentence embeddings, strictly: a phrase
  naming a class or furniture type means only things of that type, its colour and room words must be
  in the name, and a plain type name ("the sink") is not taken for a room-named one (bathroom_sink)
  while rooms remain unseen; a target not yet seen makes it explore: first the rooms it has glimpsed
  (the one a place's name says, or where such furniture usually stands, first), then surfaces not yet
  seen from close enough for small things, then closed containers it can open;
* a place the user names for an object ("the green toy block in the fridge") is searched first: found
  (in its room first), reached and opened; a thing still not seen there is tried by the name the
  description gives (too small to see in small views);
* it opens a destination container before picking the object up (one hand), and a container before
  taking something out of it;
* it repairs from typed feedback: D1/D2 -> go there (again); L3 -> open the container the feedback
  names; L1 -> put down what it holds; F2 -> forget the name and ground again or explore;
  E1 -> retry with another model, then give up on that object if an alternative exists;
  E2 -> find the dropped object and pick it up again.

An instruction that refers to a demonstration ("like I showed you", "where I keep it") takes its place
from the segments recalled from the demonstration memory (``planners/recalled.py``); with none that
fits, it asks or reports. Instructions are read by ``homiebot.planners.understanding`` (free-form: questions, politeness,
pronouns, several destinations, relative places, "somewhere in the kitchen", "one of", conditions,
negation). The first round's analysis states the goal it understood (also in the episode record).
What it cannot read it asks about in the first round ([Ask, ...]); with nobody to ask it reports it
and ends (termination "reported"). With someone to ask, whether a phrase is open is decided from the
scene (``planners/asking.py``, ``planners/candidates.py``): the things seen that its class or
category, colour, place and room words fit. Several fit: it asks about what differs (colour, place,
kind), places first; one or none while rooms are unseen: it looks at them first (and, for a small
thing, into the sinks); one: it is meant, no question; none after that (a phrase naming a kind only):
it asks. Answers narrow the candidates the same way (a name, "the kitchen one", "the one on the
shelf", yes / no); one it cannot use is asked about again, then reported. An instruction of which
nothing can be read is refused at the start. "Go to X" (a thing, a piece of furniture or a room) ends
once the robot is there. A thing still not seen when every room was
visited, every surface seen from close by (and approached where something resting on it may hide it)
and every container opened is reported by name, with what of its type was seen instead; every End's
analysis says why it ends.

With mapped perception (``request.scene_map`` is set) it reads only the semantic map's summary, never
the observation's labels: what it knows are map instance ids (``can_1``) with their categories,
colours, supports and door states, plus the rooms of the floor plan. Instruction phrases ground by
category and colour ("green can" -> the can the map calls green); it names instances by id, which
the map's grounding accepts. A target not in the map makes it explore: ``[Explore, room]`` room by
room (the robot's own room first, then by word similarity) when a model offers Explore, else Go to
the rooms; then surfaces from close by and closed containers, as in oracle perception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import NoReturn

from homiebot.core.contracts import Action, ErrorCode, Feedback, Subtask
from homiebot.core.vocabulary import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.perception.grounding import COLOUR_WORDS, SHARED_EMBEDDER, Grounder, singular, words_of
from homiebot.perception.visible import sightings, standing_in, supports
from homiebot.planners.asking import Asker, AskStep, LookStep
from homiebot.planners.base import EpisodeContext, ModelInfo, Planner, PlannerConfigError, PlannerReply, PlannerRequest
from homiebot.planners.candidates import Thing, read_answer, read_phrase, things_from
from homiebot.planners.instructions import (
    Clear,
    Fetch,
    GoTo,
    IfAbsent,
    IfEmpty,
    Keep,
    Move,
    Plan,
    Things,
    Toggle,
    UnsupportedInstruction,
    parse_instruction,
)
from homiebot.planners.models import choose_model
from homiebot.planners.people import HandOver, hand_over_step, read_hand_over, situate_remark
from homiebot.planners.recalled import resolve, unresolved_phrase
from homiebot.planners.understanding import Understanding, understand_request

GROUPS = {name: cls.category for name, cls in OBJECT_CLASSES.items()}  # apple -> fruit, can -> drink ...
GROUPS |= {"can": "drink", "bottle": "drink", "cup": "drink", "mug": "drink"}
MAX_FAILS = 3
USUALLY_ONE = {"fridge", "kitchen counter", "tv stand"}  # a home rarely has two: not worth a question
ROOM_WORDS = {"kitchen", "bedroom", "bathroom", "living", "dining", "office", "hallway"}  # words that say a room
# where a piece of furniture usually stands (common sense; orders the search for a place not seen yet)
USUAL_ROOMS = {"fridge": ("kitchen",), "kitchen_counter": ("kitchen",), "sink": ("kitchen", "bathroom"),
               "sofa": ("living",), "tv_stand": ("living",), "bed": ("bedroom",), "desk": ("office", "bedroom"),
               "table": ("dining", "kitchen", "living"), "chair": ("dining", "office", "bedroom", "living"),
               "cabinet": ("kitchen", "bathroom", "dining", "living", "office"), "drawer": ("kitchen", "bedroom", "office"),
               "shelf": ("living", "office", "bathroom", "dining", "bedroom")}
ARTICLES = ("the", "a", "an", "my", "one", "some")
THIN = 0.05  # m: a thing flatter than this may go unseen on a surface that showed rounder small things
# rounds kept when looking for another thing alike: per move still to do (go or ask, pick, go, put, a failure), and for
# the End and a dropped thing picked up again; with less (4 and 3) clear requests ran out of rounds
LOOK_RESERVE = 5
LOOK_EXTRA = 4


class _Decision(Exception):
    """Raised internally to return a subtask from deep inside the goal logic."""

    def __init__(self, sub: Subtask, why: str) -> None:
        self.sub, self.why = sub, why


@dataclass
class _Memory:
    known: dict[str, str] = field(default_factory=dict)  # name -> category
    support: dict[str, str | None] = field(default_factory=dict)  # object -> receptacle it rests on/in
    rooms_visited: set[str] = field(default_factory=set)
    opened: set[str] = field(default_factory=set)
    searched: set[str] = field(default_factory=set)  # containers opened only to look inside
    inspected: set[str] = field(default_factory=set)  # receptacles the robot has stood next to
    forgotten: set[str] = field(default_factory=set)  # names the detector rejected (F2)
    banned: set[str] = field(default_factory=set)  # names a safety rule or the operator forbade (S1, S2)
    given_up: set[str] = field(default_factory=set)  # objects that failed too often
    near: str | None = None
    held: str | None = None
    done: set[tuple[str, str]] = field(default_factory=set)  # (object, receptacle) put successfully
    checked: dict[int, bool] = field(default_factory=dict)  # goal index -> result of a look inside
    fails: dict[str, list[str]] = field(default_factory=dict)  # subtask text -> models that failed it
    mapped: bool = False  # knowledge comes from the semantic map's summary
    colour: dict[str, str | None] = field(default_factory=dict)  # map instance id -> estimated colour
    robot_room: str | None = None
    glimpsed: set[str] = field(default_factory=set)  # surfaces seen from close enough to see small things on them
    looked: set[str] = field(default_factory=set)  # places the user said a thing is, checked (reached, opened)
    guessed: dict[str, str] = field(default_factory=dict)  # names tried from the user's words -> their class
    room_of: dict[str, str] = field(default_factory=dict)  # furniture -> the room whose floor it was seen standing on
    shut: set[str] = field(default_factory=set)  # containers this robot closed (their state is otherwise unseen)
    picked_from: dict[str, str] = field(default_factory=dict)  # thing -> where it was when this robot picked it up
    map_room: dict[str, str] = field(default_factory=dict)  # map instance id -> the room of the floor plan it is in
    map_xy: dict[str, tuple[float, float]] = field(default_factory=dict)  # map instance id -> where the map has it
    robot_xy: tuple[float, float] | None = None  # where the map has the robot
    said_done: set[str] = field(default_factory=set)  # phrases whose said place was looked at without finding the thing
    said_at: dict[str, list[str]] = field(default_factory=dict)  # a place said -> the map's furniture it was taken for
    reached: set[tuple[str, str]] = field(default_factory=set)  # (map object, place): reached for it there once
    sighted: dict[str, tuple[int, float]] = field(default_factory=dict)  # furniture -> (round last seen, its depth then)


class HeuristicPlanner(Planner):
    """Rule-based, perception-only planner for a documented subset of instructions."""

    needs_views = ("depth", "segmentation")

    def __init__(self, embeddings: bool = True) -> None:
        self.embeddings = embeddings
        self.models: list[ModelInfo] = []
        self.plan_: Plan = Plan()
        self.mem = _Memory()
        self._last: tuple[Subtask, str | None] | None = None
        self.read = Understanding(Plan())
        self.can_ask = False
        self.questions: list[tuple[str, str]] = []  # (question, what it is about: "unsure" or a phrase)
        self.asker: Asker | None = None  # with someone to ask: the phrases that may fit several things
        self._report: str | None = None
        self._asked: str | None = None
        self._unusable: set[str] = set()  # questions whose answer could not be used once already
        self._arrived: list[str] = []  # where GoTo goals took the robot ("at the sofa"), for the End's reason
        self._round = 0
        self.max_rounds: int | None = None

    def reset(self, context: EpisodeContext) -> None:
        # a hand-over to a person (planners/people.py): this planner does the fetching part
        self.hand_over: HandOver | None = read_hand_over(context.task.instruction) if context.task.has_person else None
        instruction = self.hand_over.instruction if self.hand_over is not None else (
            (situate_remark(context.task.instruction) if context.task.has_person else None) or context.task.instruction)
        shown = resolve(instruction, context.memories)  # "like I showed you": the place from recalled demonstrations
        self.read = understand_request(shown.instruction, SHARED_EMBEDDER if self.embeddings else None)
        if shown.unresolved:
            self.read = Understanding(Plan(), [unresolved_phrase(shown)])
        self.can_ask = context.ask
        self.max_rounds = context.max_rounds
        if not self.read.plan.goals and not self.can_ask and not shown.unresolved:
            try:  # nothing could be read: the older grammar's refusal lists what it understands
                parse_instruction(context.task.instruction)
            except UnsupportedInstruction as err:
                raise PlannerConfigError(str(err)) from None
            raise PlannerConfigError(f"the heuristic planner could not read '{context.task.instruction.strip()}'")
        self.plan_ = self.read.plan
        self.grounder = Grounder(context.task.aliases, SHARED_EMBEDDER if self.embeddings else None)
        self.models = context.models
        self.mem = _Memory()
        self._last = None
        self._report = None
        self._asked = None
        self._unusable = set()
        self.questions = []
        self.asker = None
        if self.read.unsure:
            self.questions.append((f"I am not sure what you mean by '{'; '.join(self.read.unsure)}'. What should I do?", "unsure"))
        elif self.can_ask:
            self.asker = Asker(self.plan_.goals, self._rename_phrase, self._named, self._shut_away)
            for goal in self.plan_.goals:
                if isinstance(goal, Move) and goal.dest_kind == "room":
                    self.questions.append((f"Where in the {goal.dest} should it go?", f"room:{goal.dest}"))

    def understood(self) -> str | None:
        return self.read.statement() or None

    def report(self) -> str | None:
        return self._report

    def _apply_answer(self, about: str, answer: str | None) -> None:
        """Fold the user's answer into the plan: a whole new reading, a more precise object, or a place."""
        if answer is None:  # nobody answered
            if about.startswith("slot:") and self.asker is not None:
                self.asker.answer(int(about.removeprefix("slot:")), None, {})
            if about == "unsure" or about.startswith("room:"):
                self._report = f"I could not understand or place '{'; '.join(self.read.unsure) or about}' and nobody answered"
            return
        if about.startswith("slot:") and self.asker is not None:
            self._report = self.asker.answer(int(about.removeprefix("slot:")), answer, self._known_things())
            return
        if about == "unsure":
            again = understand_request(answer, SHARED_EMBEDDER if self.embeddings else None)
            if again.plan.goals and not again.unsure:
                self.read, self.plan_ = again, again.plan
            else:
                self._report = f"I still could not understand the request (answer: '{answer}')"
            return
        if about.startswith("room:"):  # "where in the kitchen?": a place there, in the words the answer gives
            room = about.removeprefix("room:")
            got = read_answer(answer, room, [], self._known_things(), objects=False)
            if got.chosen or got.description:
                self.plan_.goals = [Move(g.things, (got.chosen or got.description or "").replace("_", " "), None)
                                    if isinstance(g, Move) and g.dest_kind == "room" else g for g in self.plan_.goals]
            elif about not in self._unusable:
                self._unusable.add(about)
                self.questions.insert(0, (f"Sorry, I could not tell from '{answer}'. Where in the {room} should it go?", about))
            else:
                self._report = f"I could not tell where in the {room} it should go from your answers"

    def _known_things(self) -> dict[str, Thing]:
        """What is known of every thing seen or mapped, for matching phrases and answers."""
        m = self.mem
        return things_from({n: c for n, c in m.known.items() if n not in m.banned and n not in m.given_up},
                           {**m.support, **m.picked_from}, m.room_of, m.colour if m.mapped else None)

    def _scene_question(self) -> None:
        """Ask or look for the plan's open phrases before acting (``planners/asking.py``)."""
        if self.asker is None:
            return
        step = self.asker.next(self._known_things(), lambda objects: bool(self._unvisited_rooms() or objects and self._basins()))
        if isinstance(step, AskStep):
            self._asked = f"slot:{step.slot}"
            raise _Decision(Subtask(action=Action.ASK, target=step.question), step.why)
        if isinstance(step, LookStep):
            label = f"{step.phrase} (to see every one there is before I choose)"
            if step.inside:
                self._look_inside(step.phrase)
            if self._unvisited_rooms() or not step.objects:
                self._explore(step.phrase, label)
            if self.mem.held:
                self._put_down(self.mem.held, f"I look into the {self._basins()[0]} with a free hand")
            self._go(self._basins()[0], f"a {step.phrase} may lie low in the {self._basins()[0]}, out of sight from afar")

    def _closed_for(self, phrase: str) -> list[str]:
        """Closed containers not looked into that a thing the phrase names fits in, those in the robot's room first."""
        kinds = read_phrase(phrase, objects=True).kinds
        m = self.mem
        boxes = [n for n in self._unsearched_boxes() if any(RECEPTACLE_TYPES[m.known[n]].fits(OBJECT_CLASSES[k]) for k in kinds)]
        def far(n: str) -> tuple[int, float]:  # seen lately and close by first
            last, depth = m.sighted.get(n, (0, 99.0))
            return -last, depth

        return sorted(boxes, key=lambda n: (n != m.near, m.room_of.get(n) != m.robot_room, far(n), n))

    def _shut_away(self, phrase: str) -> bool:
        """Whether another thing that ``phrase`` fits may be shut in a container not looked into, and the rounds
        left allow a look there and the task after it (LOOK_RESERVE per move still to do, LOOK_EXTRA more)."""
        boxes = self._closed_for(phrase)
        if not boxes:
            return False
        if self.max_rounds is None:
            return True
        moves = sum(1 for g in self.plan_.goals if isinstance(g, (Move, Fetch, IfEmpty)))
        cost = 1 if self.mem.near == boxes[0] else 2
        return self.max_rounds - self._round + 1 - cost >= LOOK_RESERVE * moves + LOOK_EXTRA

    def _look_inside(self, phrase: str) -> NoReturn:
        """Open the nearest closed container another thing ``phrase`` fits may be shut in, with a free hand."""
        box = self._closed_for(phrase)[0]
        if self.mem.held:
            self._put_down(self.mem.held, f"I need a free hand to look inside the {box}")
        if self.mem.near == box:
            self.mem.searched.add(box)
        self._act(Action.OPEN, box, f"I have seen one {phrase.removeprefix('the ')}; before I choose it I look inside the {box}, "
                                    "where another may be shut away")

    def _basins(self) -> list[str]:
        """Open containers (sinks) not yet looked into from close by: what lies low in them shows only from there."""
        return sorted(n for n, c in self._of(RECEPTACLE_TYPES).items() if RECEPTACLE_TYPES[c].relation == "in"
                      and not RECEPTACLE_TYPES[c].articulated and n not in self.mem.inspected)

    def _rename_phrase(self, objects: bool, old: str, new: str) -> None:
        """Put the words an answer or the scene settled into the plan."""
        if objects:
            self.plan_.goals = [_rename(g, old, new) for g in self.plan_.goals]
        else:
            self.plan_.goals = [Move(g.things, new, None) if isinstance(g, Move) and g.dest == old and g.dest_kind is None else g
                                for g in self.plan_.goals]

    def _named(self, phrase: str, objects: bool) -> str | None:
        """An alias, or a piece of furniture a home rarely has two of ('the fridge')."""
        key = "_".join(w for w in words_of(phrase) if w not in ARTICLES)
        return self.grounder.aliases.get(key) or (key if not objects and key.replace("_", " ") in USUALLY_ONE else None)

    # ---- per round ----------------------------------------------------------------------------
    def plan(self, request: PlannerRequest) -> PlannerReply:
        self._round = request.round
        self._perceive(request)
        if self._last is not None and self._last[0].action is Action.ASK and self._asked is not None:
            fb = request.feedback
            self._apply_answer(self._asked, fb.details.get("answer") if fb is not None and fb.success else None)
            self._asked = None
        else:
            self._learn(request.feedback)
        try:
            if self._report:
                sub, why = Subtask(action=Action.END), f"I stop to report: {self._report}"
            elif self.questions and self.can_ask:
                question, self._asked = self.questions.pop(0)
                sub, why = Subtask(action=Action.ASK, target=question), f"before acting I need to know: {question}"
            elif self.read.unsure:
                self._report = f"I could not understand or ground '{'; '.join(self.read.unsure)}'"
                sub, why = Subtask(action=Action.END), f"I stop to report: {self._report}"
            else:
                if self.can_ask:
                    self._scene_question()
                self._decide()
                sub, why = Subtask(action=Action.END), "everything the instruction asks for is done"
                if self._arrived:
                    why += f": I am {' and '.join(self._arrived)}"
        except _Decision as d:
            sub, why = d.sub, d.why
        if self.hand_over is not None:
            rooms = sorted(n for n, c in self.mem.known.items() if c == "room")
            sub, why = hand_over_step(self.hand_over, request, self.mem.held, sub.action is Action.END, rooms, self.models,
                                      self.mem.robot_room) or (sub, why)
        if request.round == 1:
            why = f"I understood: {self.read.statement() or 'nothing I can act on'}. {why}"
        if sub.action in (Action.END, Action.ASK):
            self._last = (sub, None)
            return PlannerReply(json.dumps({"analysis": why, "subtask": [sub.action.value, *([sub.target] if sub.target else [])],
                                            "model": None}))
        kind = self._kind(sub.target) if sub.action is Action.GO_TO else None
        model = choose_model(sub, kind, self.models, self.mem.fails.get(sub.text(), []))
        self._last = (sub, model)
        parts = [sub.action.value] + [p for p in (sub.target, sub.place) if p]
        return PlannerReply(json.dumps({"analysis": why, "subtask": parts, "model": model}))

    def _perceive(self, request: PlannerRequest) -> None:
        m = self.mem
        m.held = request.inventory[0] if request.inventory else None
        if request.scene_map is not None:
            self._perceive_map(request.scene_map)
            return
        if request.observation is None:
            return
        seen = sightings(request.observation)
        for name, sights in seen.items():
            if name not in m.forgotten:
                m.known[name] = sights[0].category
        for name in seen:
            if m.known.get(name) in OBJECT_CLASSES and name != m.held:
                under = [s for s in supports(seen, name) if m.known.get(s) in RECEPTACLE_TYPES]
                if under:
                    m.support[name] = under[0]
        m.room_of.update(standing_in(request.observation, seen, frozenset(RECEPTACLE_TYPES)))
        reach = _small_thing_reach(request.observation)
        for name, sights in seen.items():
            depths = [s.depth for s in sights if s.depth is not None]
            if m.known.get(name) in RECEPTACLE_TYPES and depths:
                m.sighted[name] = (request.round, min(depths))
                if min(depths) <= reach:
                    m.glimpsed.add(name)
        if request.round == 1:
            floors = sorted(((sum(s.pixels for s in v), n) for n, v in seen.items() if v[0].category == "room"), reverse=True)
            if floors:
                m.rooms_visited.add(floors[0][1])

    def _perceive_map(self, summary: dict) -> None:
        """Rebuild what is known from the map summary (the map is the authority on what exists)."""
        m = self.mem
        m.mapped = True
        m.forgotten.clear()
        rooms = summary.get("rooms", [])
        m.known = {r["name"]: "room" for r in rooms}
        robot = summary.get("robot")
        m.robot_room = None
        m.robot_xy = (float(robot[0]), float(robot[1])) if robot is not None else None
        if robot is not None:
            for r in rooms:
                x0, y0, x1, y1 = r["rect"]
                if x0 <= robot[0] <= x1 and y0 <= robot[1] <= y1:
                    m.robot_room = r["name"]
        for inst in summary.get("instances", []):
            if inst.get("stale"):
                continue
            iid = inst["id"]
            m.known[iid] = inst["label"]
            m.colour[iid] = inst.get("colour")
            if inst.get("room"):
                m.map_room[iid] = inst["room"]
            if inst.get("position"):
                m.map_xy[iid] = (float(inst["position"][0]), float(inst["position"][1]))
            if inst["kind"] == "object" and not inst.get("held") and inst.get("support"):
                m.support[iid] = inst["support"]
            if inst["kind"] == "receptacle" and inst.get("is_open") is not None and self._closable(iid):
                if inst["is_open"]:
                    m.opened.add(iid)
                else:
                    m.opened.discard(iid)
        if not self._can_explore() and m.robot_room:
            m.rooms_visited.add(m.robot_room)  # without Explore, the first look around is the search of this room

    def _can_explore(self) -> bool:
        return any(Action.EXPLORE.value in info.actions for info in self.models)

    def _map_ground(self, phrase: str, kinds) -> str | None:
        """Map instance for an instruction phrase: category by name or group, then colour; a thing of
        another colour is accepted only when no room is left to explore."""
        found = self._map_candidates(phrase, kinds)
        return found[0] if found else None

    def _map_candidates(self, phrase: str, kinds) -> list[str]:
        """Every map instance a phrase may name, best first (``_map_ground`` takes the first)."""
        m = self.mem
        pool = {n: c for n, c in self._of(kinds).items() if n not in m.given_up}
        key = "_".join(words_of(phrase))
        if key in pool:
            return [key]
        if self.grounder.aliases.get(key) in pool:
            return [self.grounder.aliases[key]]
        words = words_of(phrase.replace("_", " "))
        colours = {"gray" if w == "grey" else w for w in words if w in COLOUR_WORDS}
        toks = [w for w in words if w not in ("the", "a", "an", "my", "one", "some")]
        kept = [w for w in toks if w not in COLOUR_WORDS]
        if not kept and toks:  # "the orange orange": the last colour word is the thing itself
            kept, colours = toks[-1:], {"gray" if w == "grey" else w for w in toks[:-1]}
        head = " ".join(kept)
        if not head:
            return []
        unexplored = any(c == "room" and n not in m.rooms_visited for n, c in m.known.items())
        labels = sorted(set(pool.values()))
        # by name or group first; similar categories ("drawer" ~ "cabinet") only once every room was explored
        cats = Grounder(None, None).category_matches(head, labels, GROUPS)
        if not cats and not unexplored:
            cats = self.grounder.category_matches(head, labels, GROUPS)
        cands = sorted(n for n, c in pool.items() if c in cats)
        # "dining room table": a table, in the dining room (a room word of the type's own name, "kitchen counter", is not a room)
        rooms_said = set(kept) & ROOM_WORDS - {w for c in cats for w in c.split("_")}
        if rooms_said:  # the room the phrase names: only what the map has standing (or lying) there
            cands = [n for n in cands if rooms_said <= set(words_of(m.map_room.get(n, "")))]
        if colours:
            strict = [n for n in cands if m.colour.get(n) in colours]
            cands = strict if strict or unexplored or len(cands) != 1 else cands
        return sorted(cands, key=lambda n: (self._usual_rank(n), n))

    def _usual_rank(self, name: str) -> int:
        """How usual the room the map has a piece of furniture in is for its type (``USUAL_ROOMS``, 0: the
        usual one): of several that fit a phrase equally, a person most likely means the one where such
        furniture usually stands. Things with no usual room rank alike."""
        usual = USUAL_ROOMS.get(self.mem.known.get(name, ""), ())
        room = set(words_of(self.mem.map_room.get(name, "")))
        return next((i for i, r in enumerate(usual) if r in room), len(usual))

    def _learn(self, fb: Feedback | None) -> None:
        if self._last is None or fb is None:
            return
        sub, model = self._last
        target = sub.target or ""  # every action but End has a target (Subtask._arity)
        m = self.mem
        if sub.action is Action.PICK and target in m.guessed and (fb.success or fb.code not in (ErrorCode.F1, ErrorCode.F2)):
            m.known[target] = m.guessed[target]  # the name the user's words gave exists
        if fb.success:
            m.fails.pop(sub.text(), None)
            if sub.action is Action.GO_TO:
                m.near = target
                m.inspected.add(target)
                if self._kind(target) == "room":
                    m.rooms_visited.add(target)
            elif sub.action is Action.OPEN:
                m.opened.add(target)
                m.shut.discard(target)
            elif sub.action is Action.CLOSE:
                m.opened.discard(target)
                m.shut.add(target)
            elif sub.action is Action.PICK and m.support.get(target):
                m.picked_from.setdefault(target, m.support[target] or "")
            elif sub.action is Action.PUT:
                assert sub.place is not None  # Put always has a place (Subtask._arity)
                m.done.add((target, sub.place))
                m.support[target] = sub.place
            elif sub.action is Action.EXPLORE:
                m.rooms_visited.add(target)
                m.near = None
            return
        if sub.action is Action.EXPLORE and fb.code is not None and fb.code.value.startswith(("E", "F", "L")):
            m.rooms_visited.add(target)  # do not insist on a room that cannot be explored
        code = fb.code
        if code in (ErrorCode.D1, ErrorCode.D2, ErrorCode.E2):
            m.near = None
        if code is ErrorCode.L3 and fb.details.get("container"):
            box = fb.details["container"]
            m.opened.discard(box)
            if sub.action is Action.PICK:
                m.support[target] = box
        if code is ErrorCode.F2 and fb.details.get("name"):
            m.forgotten.add(fb.details["name"])
            m.known.pop(fb.details["name"], None)
        if code in (ErrorCode.S1, ErrorCode.S2):  # a safety rule or the operator said no: never use that thing again
            banned = fb.details.get("name") or sub.place or sub.target
            if banned:
                if self._kind(banned) == "room":
                    m.rooms_visited.add(banned)  # nothing to search there
                m.banned.add(banned)
        if code is ErrorCode.E2 and fb.details.get("dropped"):
            m.support[fb.details["dropped"]] = None
        if code is ErrorCode.E1:
            failed = m.fails.setdefault(sub.text(), [])
            failed.append(model or "")
            if len(failed) >= 2 and sub.action is not Action.GO_TO:
                m.near = None  # maybe badly placed: approach again before the next try
            if len(failed) >= MAX_FAILS and sub.action is Action.PICK:
                m.given_up.add(target)

    # ---- knowledge helpers ----------------------------------------------------------------------
    def _kind(self, name: str | None) -> str:
        cat = self.mem.known.get(name or "")
        if cat == "room":
            return "room"
        return "receptacle" if cat in RECEPTACLE_TYPES else "object"

    def _of(self, kinds) -> dict[str, str]:
        return {n: c for n, c in self.mem.known.items() if c in kinds and n not in self.mem.banned}

    def _unsearched_boxes(self) -> list[str]:
        """Containers that can be opened and were neither opened nor looked into, by name."""
        m = self.mem
        return sorted(n for n in self._of(RECEPTACLE_TYPES) if self._closable(n) and n not in m.opened and n not in m.searched)

    def _object(self, phrase: str) -> str | None:
        head, _, where = re.split(r"\s+(on|from|off|by|in|near|inside|out of)\s+(?:the\s+)?", phrase, maxsplit=1) + ["", ""][:0] \
            if re.search(r"\s(?:on|from|off|by|in|near|inside|out of)\s", phrase) else (phrase, "", "")
        if self.mem.mapped:
            return self._map_object(phrase, head, where)
        colours = [w for w in words_of(head) if w in COLOUR_WORDS]
        rest = set(words_of(head)) - set(colours) - set(ARTICLES)
        by_colour = bool(colours) and bool(rest) and rest <= {"thing", "one", "item", "object", "stuff"}
        if by_colour:  # "the purple thing": whatever of that colour, where the user says it is
            found = sorted(n for n in self._of(OBJECT_CLASSES) if set(colours) <= set(words_of(n)) and n not in self.mem.given_up)
        else:
            found = self._strict(head, self.grounder.ground(head, self._of(OBJECT_CLASSES)), OBJECT_CLASSES)
        if where:  # "the mug on the tv stand": the one resting there
            there = [f for f in found if self._rests_at(f, where)]
            # with someone to ask, the place comes from a person's answer: one seen resting elsewhere is another one
            elsewhere = [f for f in found if f not in there and (self.mem.picked_from.get(f) or self.mem.support.get(f))] \
                if self.can_ask else []
            if there or (by_colour and not self._search_done(phrase)):
                found = there
            elif elsewhere and not self._search_done(phrase):
                found = [f for f in found if f not in elsewhere]
        return found[0] if found else None

    def _map_object(self, phrase: str, head: str, where: str) -> str | None:
        """The map instance a phrase names. With a place said ("the mug on the tv stand", "... in the
        bathroom": the person's word on where it went) the one the map has resting there; none there: None
        until that place was looked at (``_look_where_said``), then the one the map saw elsewhere."""
        if not where:
            return self._map_ground(head, OBJECT_CLASSES)
        there = [c for c in self._map_candidates(head, OBJECT_CLASSES) if self._map_rests_at(c, where)]
        if there:
            return there[0]
        if phrase not in self.mem.said_done:
            return None
        return self._map_ground(head, OBJECT_CLASSES)

    def _map_rests_at(self, obj: str, where: str) -> bool:
        """Whether the map has a thing in the room a phrase names, or on or in furniture the phrase fits."""
        m = self.mem
        if obj == m.held and obj not in m.picked_from:
            return False
        support = m.picked_from.get(obj) or m.support.get(obj)
        room = self._room_named(where)
        if room is not None:
            return (m.map_room.get(support) if support else m.map_room.get(obj)) == room
        return support is not None and support in self._said_places(where)

    def _room_named(self, phrase: str, skip: Collection[str] = ()) -> str | None:
        """The known room a phrase names ("the living room", "kitchen"), or None; rooms in ``skip`` are not named."""
        key = "_".join(w for w in words_of(phrase) if w not in ARTICLES)
        rooms = {n for n, c in self.mem.known.items() if c == "room" and n not in skip}
        return key if key in rooms else f"{key}_room" if f"{key}_room" in rooms else None

    def _said_places(self, where: str) -> list[str]:
        """Where to look for a thing said to be at ``where``, nearest first: the furniture the phrase fits,
        or in a room the furniture the map has there (surfaces before containers)."""
        m = self.mem
        if m.said_at.get(where):  # as first taken: the map's colour of a piece may change as it is seen closer
            return m.said_at[where]
        room = self._room_named(where)
        if room is not None:
            places = [n for n in self._of(RECEPTACLE_TYPES) if m.map_room.get(n) == room]
        else:
            places = self._map_candidates(where, RECEPTACLE_TYPES)

        def far(n: str) -> float:
            xy = m.map_xy.get(n)
            return (xy[0] - m.robot_xy[0]) ** 2 + (xy[1] - m.robot_xy[1]) ** 2 if xy and m.robot_xy else 0.0
        m.said_at[where] = sorted(places, key=lambda n: (self._closable(n), far(n), n))
        return m.said_at[where]

    def _rests_at(self, obj: str, where: str) -> bool:
        """Whether a thing was seen on or in the place a phrase names (a piece of furniture, or a room)."""
        support = self.mem.picked_from.get(obj) or self.mem.support.get(obj)  # where the user saw it: before this robot moved it
        if support is None:
            return False
        room = "_".join(w for w in words_of(where) if w not in ARTICLES)
        if room in {n for n, c in self.mem.known.items() if c == "room"}:
            return self.mem.room_of.get(support) == room or room.split("_")[0] in words_of(support)
        return support == self._receptacle(where)

    def _receptacle(self, phrase: str) -> str | None:
        if self.mem.mapped:
            return self._map_ground(phrase, RECEPTACLE_TYPES)
        found = self._strict(phrase, self.grounder.ground(phrase, self._of(RECEPTACLE_TYPES)), RECEPTACLE_TYPES)
        return found[0] if found else None

    def _strict(self, phrase: str, found: list[str], kinds) -> list[str]:
        """Keep the grounder's candidates that can be what the phrase says. An exact name or alias stands;
        otherwise a phrase naming a class or furniture type ("banana", "desk") means only things of that
        type (not a green apple for "green banana", not the brown shelf for "brown desk"), a room word
        ("bedroom chair") must be in the name, and a name with a room word the phrase lacks (the
        bathroom sink for "the sink") is taken only once no room is left to explore."""
        ws = [singular(w) for w in words_of(phrase) if w not in ARTICLES]
        key = "_".join(ws)
        if not found or found[0] == key or self.grounder.aliases.get(key) == found[0] or self.grounder.aliases.get(
                "_".join(w for w in words_of(phrase) if w not in ARTICLES)) == found[0]:
            return found
        named = sorted((c for c in kinds if set(c.split("_")) <= set(ws)), key=lambda c: -len(c.split("_")))
        cat = set(named[0].split("_")) if named else set()
        rooms = (set(ws) - cat) & ROOM_WORDS
        typed = [n for n in found if not cat or cat <= set(self.mem.known.get(n, "").split("_"))]
        fit = [n for n in typed if rooms <= set(words_of(n)) or rooms <= set(words_of(self.mem.room_of.get(n, "")))]
        plain = [n for n in fit if not (set(words_of(n)) - cat - rooms) & ROOM_WORDS]
        if plain or self._unvisited_rooms():
            return plain
        if rooms and not fit:  # every room seen, none showed this furniture standing in the room named: the unplaced ones
            unplaced = [n for n in typed if n not in self.mem.room_of and not (set(words_of(n)) - cat) & ROOM_WORDS]
            return unplaced or (typed if len(typed) == 1 else [])
        return fit

    def _unvisited_rooms(self) -> list[str]:
        return [n for n, c in self.mem.known.items() if c == "room" and n not in self.mem.rooms_visited]

    def _closable(self, rec: str) -> bool:
        t = RECEPTACLE_TYPES.get(self.mem.known.get(rec, ""))
        return bool(t and t.articulated)

    def _objects_of_kind(self, kind: str) -> list[str]:
        cats = self.grounder.category_matches(kind, sorted(OBJECT_CLASSES), GROUPS)
        return sorted(n for n, c in self._of(OBJECT_CLASSES).items() if c in cats and n not in self.mem.given_up)

    def _on(self, rec: str) -> list[str]:
        return sorted(o for o, r in self.mem.support.items() if r == rec and o != self.mem.held)

    # ---- decisions (each raises _Decision with the next subtask, or returns when its goal is done) --
    def _decide(self) -> None:
        m = self.mem
        self._arrived = []
        for i, goal in enumerate(self.plan_.goals):
            if isinstance(goal, GoTo):
                self._go_to(goal)
            elif isinstance(goal, Move):
                self._move_goal(goal)
            elif isinstance(goal, Toggle):
                self._toggle(goal)
            elif isinstance(goal, Fetch):
                self._fetch(goal)
            elif isinstance(goal, Clear):
                self._clear(goal)
            elif isinstance(goal, (IfAbsent, IfEmpty, Keep)):
                self._conditional(i, goal)
        self._close_after()
        if m.held and m.held not in self._fetched():
            self._put_down(m.held, "the task is done but my hand is not free")

    def _fetched(self) -> set[str]:
        return {o for g in self.plan_.goals if isinstance(g, Fetch) and g.pick if (o := self._object(g.thing)) is not None}

    def _go(self, target: str, why: str) -> NoReturn:
        raise _Decision(Subtask(action=Action.GO_TO, target=target), why)

    def _act(self, action: Action, target: str, why: str, place: str | None = None) -> NoReturn:
        spot = place or target
        near = self.mem.near is not None and self.mem.near in (spot, self.mem.support.get(spot))
        if not near:
            self._go(spot, f"{why}; first I go to the {spot}")
        raise _Decision(Subtask(action=action, target=target, place=place), why)

    def _explore(self, what: str, label: str | None = None) -> NoReturn:
        """Go somewhere new to find ``what``: an unvisited room, else inside a closed container;
        End when nothing is left to search. ``label`` names what is sought in the reasons."""
        m = self.mem
        rooms = self._unvisited_rooms()
        # likeliest room first: the one the phrase names, the usual rooms of the furniture it names, then by word similarity
        rooms.sort(key=lambda r: (r != m.robot_room, self._room_rank(what, r), -self._similarity(what, r), r))
        label_of, what = what, label or what
        if rooms and m.mapped and self._can_explore():
            raise _Decision(Subtask(action=Action.EXPLORE, target=rooms[0]),
                            f"I have not seen the {what} yet, so I explore the {rooms[0]}")
        if rooms:
            self._go(rooms[0], f"I have not seen the {what} yet, so I explore the {rooms[0]}")
        surfaces = [n for n in self._of(RECEPTACLE_TYPES) if not self._closable(n) and n not in m.inspected]
        surfaces.sort(key=lambda r: (r in m.glimpsed, -self._similarity(what, r), r))
        if surfaces and surfaces[0] not in m.glimpsed:  # small things are only visible from close by
            self._go(surfaces[0], f"the {what} may be on the {surfaces[0]}, too small to see from afar")
        if m.held:
            self._put_down(m.held, f"I need a free hand to look inside containers for the {what}")
        boxes = self._unsearched_boxes()
        if boxes:
            box = boxes[0]
            if m.near == box:
                m.searched.add(box)
            self._act(Action.OPEN, box, f"the {what} may be inside the {box}")
        hiding = [s for s in surfaces if self._may_hide(s, label_of)]
        if hiding:  # seen from close enough already, but something may have been hidden there
            self._go(hiding[0], f"the {what} may be on the {hiding[0]}, hidden when I looked from nearby")
        raise self._missing(label_of or what)

    def _may_hide(self, surface: str, what: str) -> bool:
        """Whether a surface seen from close enough for small things may still hide ``what``: a basin's rim
        hides what lies low in it, and a flat thing (a book, a remote) or one of unknown size needs a closer
        look; furniture and rooms are never hidden on a surface."""
        t = RECEPTACLE_TYPES.get(self.mem.known.get(surface, ""))
        if t is None or (t.relation == "in" and not t.articulated):
            return True
        cls = self._class_of(what)
        if cls is None:
            ws = {singular(w) for w in words_of(what)}
            return not (ws & ROOM_WORDS or any(set(r.split("_")) <= ws for r in RECEPTACLE_TYPES))
        return OBJECT_CLASSES[cls].size[2] < THIN

    def _missing(self, what: str) -> _Decision:
        """End, reporting what a complete search did not find (and things of its type that were seen)."""
        noun = re.sub(r"^(?:the|a|an|my|some|any|every|one)\s+", "", what.strip()).replace("another ", "other ")
        msg = f"I could not find the {noun} anywhere in this home: I searched every room, surface and container I can reach"
        seen = self._seen_instead(noun)
        if seen:
            msg += f". I saw {seen}"
        self._report = msg
        return _Decision(Subtask(action=Action.END), f"I stop to report: {msg}")

    def _seen_instead(self, phrase: str) -> str:
        """Things of the type a phrase names that were seen, with where they are ('green_apple on the kitchen_counter')."""
        head = re.split(r"\s(?:on|from|off|by|in|near|inside|out of)\s", phrase, maxsplit=1)[0]  # not the place it was said to be
        ws = {singular(w) for w in words_of(head)}
        kinds = [c for c in (*OBJECT_CLASSES, *RECEPTACLE_TYPES) if set(c.split("_")) <= ws]
        if not kinds:
            return ""
        kind = max(kinds, key=lambda c: len(c.split("_")))
        names = sorted(n for n, c in self._of((kind,)).items())
        said = []
        for n in names[:3]:
            colour = self.mem.colour.get(n) if self.mem.mapped else None
            where = self.mem.support.get(n)
            prep = "in" if where and (self._closable(where) or self.mem.known.get(where) == "sink") else "on"
            said.append(f"{'a ' + colour + ' ' if colour else ''}{n}" + (f" {prep} the {where}" if where else ""))
        return ", ".join(said) + (f" and {len(names) - 3} more" if len(names) > 3 else "")

    def _room_rank(self, what: str, room: str) -> int:
        """0: the phrase names this room; 1: the furniture it names usually stands in such a room; 2: nothing
        said either way; 3: the phrase names another room."""
        ws = {singular(w) for w in words_of(what)}
        rwords = set(words_of(room)) & ROOM_WORDS
        said = ws & ROOM_WORDS
        if said:
            return 0 if said & rwords else 3
        types = [t for t in USUAL_ROOMS if set(t.split("_")) <= ws]
        if any(rwords & set(USUAL_ROOMS[t]) for t in types):
            return 1
        return 2

    def _similarity(self, a: str, b: str) -> float:
        emb = self.grounder.embedder
        return emb.similarity(a, b.replace("_", " ")) if emb is not None else 0.0

    def _put_down(self, obj: str, why: str) -> NoReturn:
        m = self.mem
        surfaces = [n for n in self._of(RECEPTACLE_TYPES) if not self._closable(n)]
        if not surfaces:
            self._explore("a free surface")
        spot = m.near if m.near in surfaces else sorted(surfaces)[0]
        self._act(Action.PUT, obj, why, place=spot)

    def _ensure_open(self, box: str, why: str) -> None:
        if self._closable(box) and box not in self.mem.opened:
            if self.mem.held:
                self._put_down(self.mem.held, f"I must open the {box} and need a free hand")
            self._act(Action.OPEN, box, why)

    def _bring(self, obj: str, dest: str) -> None:
        """Move one known object to a known receptacle."""
        m = self.mem
        if (obj, dest) in m.done and m.support.get(obj) == dest:
            return
        if m.held and m.held != obj:
            self._put_down(m.held, f"I hold the {m.held} but need to carry the {obj}")
        if m.held == obj:
            if self._closable(dest) and dest not in m.opened:
                self._put_down(obj, f"the {dest} must be opened first")
            self._act(Action.PUT, obj, f"I carry the {obj} to the {dest}", place=dest)
        self._ensure_open(dest, f"the {obj} goes into the {dest}, so I open it while my hand is free")
        source = m.support.get(obj)
        if source and self._closable(source) and source not in m.opened:
            self._act(Action.OPEN, source, f"the {obj} is inside the closed {source}")
        self._act(Action.PICK, obj, f"the {obj} should go to the {dest}")

    def _things(self, things: Things, dest: str | None) -> list[str]:
        """Concrete objects for a Things description (exploring when they are not known yet)."""
        if things.names:
            found = []
            for phrase in things.names:
                obj = self._object(phrase)
                if obj is None:
                    self._look_where_said(phrase)
                    obj = self._object(phrase) if self.mem.mapped else None  # looked there: where the map saw it
                if obj is None:
                    self._explore(phrase)
                found.append(obj)
            return found
        assert things.kind is not None and things.count is not None
        pool = [o for o in self._objects_of_kind(things.kind) if self.mem.support.get(o) != dest or (o, dest) in self.mem.done]
        placed = [o for o in pool if (o, dest) in self.mem.done]
        pool = placed + [o for o in pool if o not in placed]
        if len(pool) < things.count:
            self._explore(things.kind)
        return pool[: things.count]

    def _dest(self, goal: Move, obj: str | None = None) -> str:
        if goal.dest_kind == "room" and goal.dest is not None:
            return self._room_dest(goal.dest, obj)
        if goal.dest is not None:
            dest = self._receptacle(goal.dest)
            if dest is None:
                self._explore(goal.dest)
            return dest
        placed = self.mem.support.get(obj or "")
        if placed is not None and self._closable(placed) and (obj, placed) in self.mem.done:
            return placed  # already put away by us: done (choosing another box would move it back and forth)
        boxes = [n for n in self._of(RECEPTACLE_TYPES) if self._closable(n) and n != placed]
        if not boxes:
            self._explore("a container that closes")
        near = [b for b in boxes if b == self.mem.near]
        return (near or sorted(boxes))[0]

    def _look_where_said(self, phrase: str) -> None:
        """'the soap on the dining room shelf' not seen yet: look there first. Find the place (its
        usual room first), go there, open it if it is closed; a thing too small to see from there is
        tried once by the name its description gives ('yellow lemon' -> yellow_lemon)."""
        m = self.mem
        said = re.search(r"\s(?:on|in|from|inside|by|near)\s+(?:the\s+)?(?P<w>[a-z_ ]+)$", phrase)
        if not said:
            return
        head = phrase[: said.start()].strip()
        if m.mapped:
            self._look_where_said_map(phrase, head, said["w"])
            return
        place = self._receptacle(said["w"])
        if place is None:
            if not self._search_done(head):
                self._explore(said["w"], f"{head} (the user said it is {phrase[said.start():].strip()})")
            return
        if place not in m.looked:
            self._look_at(place, head, f"the {head} should be inside the {place}", f"the user said the {head} is there")
        name = "_".join(w for w in words_of(head) if w not in ARTICLES)
        cls = self._class_of(head)
        if cls and not m.mapped and name not in m.guessed and name not in m.forgotten and m.near == place and not m.held:
            m.guessed[name] = cls
            m.support[name] = place
            raise _Decision(Subtask(action=Action.PICK, target=name),
                            f"I do not see the {head}, but the user said it is at the {place}: it may be too small to see, so I try to take it")

    def _look_at(self, place: str, head: str, why_open: str, why_go: str) -> None:
        """Open ``place`` when it is closed (with a free hand), go to it, and note it as looked at; each step
        that is needed is this round's decision (raised)."""
        m = self.mem
        if self._closable(place) and place not in m.opened:
            if m.held:
                self._put_down(m.held, f"I need a free hand to open the {place}, where the {head} should be")
            m.searched.add(place)
            self._act(Action.OPEN, place, why_open)
        if m.near != place:
            self._go(place, why_go)
        m.looked.add(place)

    def _look_where_said_map(self, phrase: str, head: str, where: str) -> None:
        """Mapped perception: the map may still have the thing where it was seen before someone moved it. Look
        where the user says it is first: each piece of furniture that fits (in a room: the furniture there,
        surfaces first, nearest first), opened if closed. A thing the map saw elsewhere may be here all the
        same (the map confirms a new sighting only when it repeats): reach for it here once. Returns when
        every such place was looked at (the phrase then grounds to where the map saw the thing)."""
        m = self.mem
        cls = self._class_of(head)
        if cls is not None and any(self._class_of(o) == cls for o in m.picked_from):
            m.said_done.add(phrase)  # taken from there already (and dropped since): not there any more
            return
        for place in self._said_places(where):
            if place in m.looked:
                continue
            said = f"the user said the {head} is {phrase[len(head):].strip()}"
            self._look_at(place, head, f"{said}: it may be inside the {place}", f"{said}: I look at the {place}")
            elsewhere = [c for c in self._map_candidates(head, OBJECT_CLASSES) if (c, place) not in m.reached and c != m.held]
            if elsewhere and not m.held:
                m.reached.add((elsewhere[0], place))
                raise _Decision(Subtask(action=Action.PICK, target=elsewhere[0]),
                                f"my map saw the {head} elsewhere, but the user said it is here at the {place}: I reach for it here")
        for obj, _ in sorted(m.reached):  # reached for in vain here, so no longer in the map: where the map saw it
            old = m.support.get(obj)
            if obj not in m.known and old in m.known and old not in m.looked and cls in (None, self._class_of(obj)):
                if m.near != old:
                    self._go(old, f"the {head} was not where the user said: I look where I saw it before, at the {old}")
                m.looked.add(old)
        m.said_done.add(phrase)

    def _class_of(self, phrase: str) -> str | None:
        """The object class a phrase names ('yellow lemon' -> lemon), if any."""
        ws = {singular(w) for w in words_of(phrase)}
        named = sorted((c for c in OBJECT_CLASSES if set(c.split("_")) <= ws), key=lambda c: -len(c.split("_")))
        return named[0] if named else None

    def _search_done(self, what: str) -> bool:
        """Nothing left to search: every room visited, every surface looked at, every container opened."""
        m = self.mem
        return not self._unvisited_rooms() and not [n for n in self._of(RECEPTACLE_TYPES) if n not in m.inspected and not self._closable(n)
                                                    and (n not in m.glimpsed or self._may_hide(n, what))] \
            and not self._unsearched_boxes()

    def _room_dest(self, room: str, obj: str | None) -> str:
        """Somewhere in a room: a receptacle seen there (map), one already holding the object, or a
        receptacle whose name says the room; else explore the room."""
        key = room.replace(" ", "_")
        if obj is not None and self.mem.support.get(obj) and key in (self.mem.support.get(obj) or ""):
            return self.mem.support[obj]  # type: ignore[return-value]
        recs = sorted(n for n in self._of(RECEPTACLE_TYPES))
        named = [r for r in recs if r.startswith(key) or (key == "kitchen" and self.mem.known.get(r) in ("kitchen_counter", "fridge"))
                 or (key == "bedroom" and self.mem.known.get(r) == "bed") or (key == "living_room" and self.mem.known.get(r) in ("sofa", "tv_stand"))
                 or (key == "bathroom" and r.startswith("bathroom"))]
        if named:
            return named[0]
        self._explore(room)

    def _move_goal(self, goal: Move) -> None:
        dest = self._dest(goal) if goal.dest is not None and goal.dest_kind != "room" else None
        if goal.dest_kind == "room":
            dest = self._dest(goal)
        if goal.things.kind and goal.things.count is None:  # every object of a kind
            assert dest is not None  # instructions about every object of a kind name where they go
            for obj in self._objects_of_kind(goal.things.kind):
                if self.mem.support.get(obj) != dest or (obj, dest) in self.mem.done:
                    self._bring(obj, dest)
            m = self.mem
            unexplored = any(c == "room" and n not in m.rooms_visited for n, c in m.known.items()) or any(
                self._closable(n) and n not in m.opened and n not in m.searched for n in m.known)
            if unexplored:
                self._explore(f"every {goal.things.kind}")
            return
        for obj in self._things(goal.things, dest):
            self._bring(obj, dest or self._dest(goal, obj))

    def _toggle(self, goal: Toggle) -> None:
        box = self._receptacle(goal.target)
        if box is None:
            self._explore(goal.target)
        if goal.open and box in self.mem.opened or not goal.open and box in self.mem.shut:
            return
        if not goal.open and box not in self.mem.opened and self.mem.mapped:
            return  # the map reports door states: not opened means shut
        if self.mem.held:
            self._put_down(self.mem.held, f"I need a free hand to {'open' if goal.open else 'close'} the {box}")
        self._act(Action.OPEN if goal.open else Action.CLOSE, box, f"the task asks for the {box} {'open' if goal.open else 'closed'}")

    def _fetch(self, goal: Fetch) -> None:
        obj = self._object(goal.thing)
        if obj is None and self.mem.mapped:  # a place said: look there first, then where the map saw it
            self._look_where_said(goal.thing)
            obj = self._object(goal.thing)
        if obj is None:
            self._explore(goal.thing)
        if not goal.pick:
            if self.mem.near not in (obj, self.mem.support.get(obj)):
                self._go(obj, f"the task is to find the {obj}")
            return
        if self.mem.held != obj:
            if self.mem.held:
                self._put_down(self.mem.held, f"I need a free hand to take the {obj}")
            self._act(Action.PICK, obj, f"the task is to fetch the {obj}")

    def _go_to(self, goal: GoTo) -> None:
        target = self._place(goal.place)
        if target is None:
            self._explore(goal.place)
        if self.mem.near != target:
            self._go(target, f"the task is to go to the {target}")
        self._arrived.append(f"{'in' if self._kind(target) == 'room' else 'at'} the {target}")

    def _place(self, phrase: str) -> str | None:
        """What a phrase to go to names: a room ('the living room'), an object ('the green can') or a receptacle."""
        ws = [w for w in words_of(phrase) if w not in ARTICLES]
        room = self._room_named(phrase, skip=self.mem.banned)
        if room is not None:
            return room
        key = "_".join(ws)
        if key in ("room", "") or not set(ws) - ROOM_WORDS - {"room"}:  # a room not seen yet
            return None
        if self._class_of(phrase) is not None:
            return self._object(phrase)
        return self._receptacle(phrase) or self._object(phrase)

    def _clear(self, goal: Clear) -> None:
        m = self.mem
        src = self._receptacle(goal.source)
        if src is None:
            self._explore(goal.source)
        carrying = [m.held] if m.held and m.support.get(m.held) == src else []
        if not carrying and src not in m.inspected:
            self._go(src, f"I look at what is on the {src}")
        for obj in carrying + self._on(src):
            if goal.dest:
                dest = self._receptacle(goal.dest)
                if dest is None:
                    self._explore(goal.dest)
            else:
                others = [n for n in self._of(RECEPTACLE_TYPES) if n != src and not self._closable(n)]
                if not others:
                    self._explore("another surface")
                dest = sorted(others)[0]
            self._bring(obj, dest)

    def _conditional(self, index: int, goal: IfAbsent | IfEmpty | Keep) -> None:
        m = self.mem
        box_phrase = goal.container if not isinstance(goal, Keep) else goal.dest
        box = self._receptacle(box_phrase)
        if box is None:
            self._explore(box_phrase)
        if index not in m.checked:
            if m.held:
                self._put_down(m.held, f"I need a free hand to look into the {box}")
            self._ensure_open(box, f"I must look inside the {box}")
            if m.near != box:
                self._go(box, f"I look at what is in the {box}")
            m.checked[index] = True  # we are at the open container now: what is there is in memory
        inside = self._on(box)
        if isinstance(goal, IfAbsent):
            kinds = self.grounder.category_matches(goal.kind, sorted(OBJECT_CLASSES), GROUPS)
            if any(m.known.get(o) in kinds and (o, box) not in m.done for o in inside):
                return
            self._move_goal(Move(Things(kind=goal.kind, count=1), box_phrase))
        elif isinstance(goal, IfEmpty):
            target = box_phrase if not [o for o in inside if not any(o == d[0] for d in m.done)] else goal.otherwise
            self._move_goal(Move(Things(names=(goal.thing,)), target))
        else:
            kinds = self.grounder.category_matches(goal.kind, sorted(OBJECT_CLASSES), GROUPS)
            have = [o for o in inside if m.known.get(o) in kinds]
            if len(have) < goal.count:
                self._move_goal(Move(Things(kind=goal.kind, count=goal.count - len([o for o in have if (o, box) not in m.done])
                                            ), box_phrase))

    def _close_after(self) -> None:
        if not self.plan_.close_after:
            return
        dests = []
        for goal in self.plan_.goals:
            if isinstance(goal, Move):
                dests += [d for (_, d) in self.mem.done if goal.dest is None or d == self._receptacle(goal.dest)]
        for box in dict.fromkeys(d for d in dests if self._closable(d)):
            if box in self.mem.opened:
                self._act(Action.CLOSE, box, f"the task asks me to close the {box} at the end")


def _small_thing_reach(obs) -> float:
    """How far (m) a small thing (about 8 cm) still covers a few pixels in these views, with a margin: a
    surface seen from closer than this has shown what rests on it (90 degree views; 64 px: 0.7 m, 256 px: 2.7 m)."""
    widths = [v.segmentation.shape[1] for v in obs.views.values() if v.segmentation is not None]
    return 0.08 * min(widths) / 6.0 * 0.8 if widths else 0.0


def _rename(goal: object, old: str, new: str) -> object:
    """The goal with object phrase ``old`` replaced by ``new`` (after an answer made it precise)."""
    if isinstance(goal, Move) and not goal.things.names and goal.things.kind == old and goal.things.count == 1:
        return Move(Things(names=(new,)), goal.dest, goal.dest_kind)  # one of a kind: the one meant
    if isinstance(goal, Move) and old in goal.things.names:
        names = tuple(new if n == old else n for n in goal.things.names)
        return Move(Things(names=names, kind=goal.things.kind, count=goal.things.count), goal.dest, goal.dest_kind)
    if isinstance(goal, Fetch) and goal.thing == old:
        return Fetch(new, goal.pick)
    if isinstance(goal, IfEmpty) and goal.thing == old:
        return IfEmpty(goal.container, new, goal.otherwise)
    return goal
