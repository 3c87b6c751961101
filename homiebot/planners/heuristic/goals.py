"""Working through the plan's goals in order: each goal's handler raises the next subtask it needs
(``acting.Decision``) or returns when the goal is done; with every goal done, what the task asks to close is
closed and the hand is freed."""

from __future__ import annotations

from homiebot.core.contracts import Action
from homiebot.core.vocabulary import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.planners.instructions import Clear, Fetch, GoTo, IfAbsent, IfEmpty, Keep, Move, Things, Toggle

from .acting import Hands
from .episode import Episode
from .referents import Referents
from .said_places import SaidPlaces
from .searching import Search
from .targets import Targets
from .words import GROUPS


class Goals:
    """Chooses the next subtask towards the plan's goals (raised), or returns when all of them are done."""

    def __init__(self, episode: Episode, referents: Referents, targets: Targets, said: SaidPlaces, search: Search,
                 hands: Hands) -> None:
        self.ep = episode
        self.referents = referents
        self.targets = targets
        self.said = said
        self.search = search
        self.hands = hands
        self.arrived: list[str] = []  # where GoTo goals took the robot ("at the sofa"), for the End's reason

    def decide(self) -> None:
        """Raise the next subtask towards the first goal not done; return when every goal is done."""
        m = self.ep.mem
        self.arrived = []
        for i, goal in enumerate(self.ep.plan.goals):
            if isinstance(goal, GoTo):
                self.go_to(goal)
            elif isinstance(goal, Move):
                self.move(goal)
            elif isinstance(goal, Toggle):
                self.toggle(goal)
            elif isinstance(goal, Fetch):
                self.fetch(goal)
            elif isinstance(goal, Clear):
                self.clear(goal)
            elif isinstance(goal, (IfAbsent, IfEmpty, Keep)):
                self.conditional(i, goal)
        self.close_after()
        if m.held and m.held not in self.fetched():
            self.hands.put_down(m.held, "the task is done but my hand is not free")

    def undone(self) -> list[str]:
        """Objects the goals cover that were given up on (every way to them or to pick them failed): the
        End must name them, not call the task done."""
        m = self.ep.mem
        kinds = [g.things.kind for g in self.ep.plan.goals if isinstance(g, Move) and g.things.kind and g.things.count is None]
        cats = {c for k in kinds for c in self.ep.grounder.category_matches(k, sorted(OBJECT_CLASSES), GROUPS)}
        return sorted(o for o in m.given_up if m.of(OBJECT_CLASSES).get(o) in cats)

    def unmet(self) -> list[str]:
        """The End's own check: goals that what the robot believes now does not show done (a thing not where
        it goes, a container not in the state asked for), in words."""
        m = self.ep.mem
        out = []
        for goal in self.ep.plan.goals:
            if isinstance(goal, Move) and goal.things.names and goal.dest and goal.dest_kind is None:
                dest = self.referents.receptacle(goal.dest)
                for phrase in goal.things.names:
                    objs = {o for o in (self.referents.object(phrase), self.referents.object(phrase, going_to=dest)) if o is not None}
                    if dest is None or not any(m.support.get(o) == dest or (o, dest) in m.done for o in objs):
                        out.append(f"the {phrase} onto or into the {goal.dest}")
            elif isinstance(goal, Move) and goal.things.at_least and goal.dest and goal.dest_kind is None:
                dest = self.referents.receptacle(goal.dest)
                there = self.placed(goal.things.kind or "", dest)
                if len(there) < goal.things.at_least:
                    out.append(f"{goal.things.at_least} of {goal.things.kind} onto or into the {goal.dest} (I found {len(there)})")
            elif isinstance(goal, Clear) and goal.dest:
                src, dest = self.referents.receptacle(goal.source), self.referents.receptacle(goal.dest)
                out += [f"the {o} onto or into the {goal.dest}" for o, was in m.picked_from.items()
                        if was == src and m.support.get(o) != dest and o not in m.given_up and not any(o == d[0] for d in m.done)]
            elif isinstance(goal, Toggle):
                box = self.referents.receptacle(goal.target)
                if box is None or (box not in m.opened if goal.open else box in m.opened):
                    out.append(f"{'open' if goal.open else 'close'} the {goal.target}")
        return out

    def fetched(self) -> set[str]:
        """The objects Fetch goals ask the robot to hold at the end."""
        return {o for g in self.ep.plan.goals if isinstance(g, Fetch) and g.pick if (o := self.referents.object(g.thing)) is not None}

    def move(self, goal: Move) -> None:
        """Bring the goal's objects to its destination; named things not seen yet are looked for before a
        destination not seen yet (the search for them, where the user said they are first, often shows it)."""
        if goal.things.names and goal.dest is not None and goal.dest_kind is None and self.referents.receptacle(goal.dest) is None:
            self.targets.things(goal.things, None)
        dest = self.targets.dest(goal) if goal.dest is not None and goal.dest_kind != "room" else None
        if goal.dest_kind == "room":
            dest = self.targets.dest(goal)
        if goal.things.kind and goal.things.count is None:  # every object of a kind
            assert dest is not None  # instructions about every object of a kind name where they go
            m = self.ep.mem
            if goal.things.source:  # every one that is there: look there, and take only those
                self.every_from(goal.things.kind, goal.things.source, dest)
                return
            for obj in self.referents.of_kind(goal.things.kind):
                if m.support.get(obj) != dest or (obj, dest) in m.done:
                    self.hands.bring(obj, dest)
            if goal.things.at_least and len(self.placed(goal.things.kind, dest)) >= goal.things.at_least:
                return  # "both": the two are there
            if any(c == "room" and n not in m.rooms_visited for n, c in m.known.items()) or any(
                    m.closable(n) and n not in m.opened and n not in m.searched for n in m.known):
                self.search.explore(f"every {goal.things.kind}")
            basins = m.basins()
            if basins:  # a sink's rim hides what lies low in it from across the room
                self.hands.go(basins[0], f"a {goal.things.kind} may lie low in the {basins[0]}, hidden from afar by its rim")
            return
        for obj in self.targets.things(goal.things, dest):
            self.hands.bring(obj, dest or self.targets.dest(goal, obj))

    def placed(self, kind: str, dest: str | None) -> list[str]:
        """Things of a kind at ``dest``: put there (a put that failed does not count) or there all along."""
        m = self.ep.mem
        return [o for o in self.referents.of_kind(kind) if m.support.get(o) == dest and ((o, dest) in m.done or o not in m.picked_from)]

    def every_from(self, kind: str, source: str, dest: str) -> None:
        """Every thing of a kind in or on a place ('all the fruit on the counter') to ``dest``: look there first."""
        m = self.ep.mem
        src = self.referents.receptacle(source)
        if src is None:
            self.search.explore(source)
        assert src is not None  # explore raised otherwise
        if m.closable(src) and src not in m.opened and src not in m.searched:
            if m.held:
                self.hands.put_down(m.held, f"I need a free hand to look into the {src}")
            self.hands.ensure_open(src, f"I must look inside the {src}")
        if src not in m.inspected and m.near != src:
            self.hands.go(src, f"I look at what is on the {src}")
        for obj in self.referents.of_kind(kind):
            if (m.support.get(obj) == src or m.picked_from.get(obj) == src) and m.support.get(obj) != dest:
                self.hands.bring(obj, dest)

    def toggle(self, goal: Toggle) -> None:
        """Open or close the container named."""
        m = self.ep.mem
        box = self.referents.receptacle(goal.target)
        if box is None:
            self.search.explore(goal.target)
        if goal.open and box in m.opened or not goal.open and box in m.shut:
            return
        if not goal.open and box not in m.opened and m.mapped:
            return  # the map reports door states: not opened means shut
        if m.held:
            self.hands.put_down(m.held, f"I need a free hand to {'open' if goal.open else 'close'} the {box}")
        self.hands.act(Action.OPEN if goal.open else Action.CLOSE, box, f"the task asks for the {box} {'open' if goal.open else 'closed'}")

    def fetch(self, goal: Fetch) -> None:
        """Find the thing named (and take it, when the goal picks it)."""
        m = self.ep.mem
        obj = self.referents.object(goal.thing)
        if obj is None and m.mapped:  # a place said: look there first, then where the map saw it
            self.said.look(goal.thing)
            obj = self.referents.object(goal.thing)
        if obj is None:
            self.search.explore(goal.thing)
        if not goal.pick:
            if m.near not in (obj, m.support.get(obj)):
                self.hands.go(obj, f"the task is to find the {obj}")
            return
        if m.held != obj:
            if m.held:
                self.hands.put_down(m.held, f"I need a free hand to take the {obj}")
            self.hands.act(Action.PICK, obj, f"the task is to fetch the {obj}")

    def go_to(self, goal: GoTo) -> None:
        """Go to the room, thing or piece of furniture named, and note being there."""
        m = self.ep.mem
        target = self.referents.place(goal.place)
        if target is None:
            self.search.explore(goal.place)
        if m.near != target:
            self.hands.go(target, f"the task is to go to the {target}")
        self.arrived.append(f"{'in' if m.kind(target) == 'room' else 'at'} the {target}")

    def clear(self, goal: Clear) -> None:
        """Take everything off a surface (to the place named, else to another surface)."""
        m = self.ep.mem
        src = self.referents.receptacle(goal.source)
        if src is None:
            self.search.explore(goal.source)
        carrying = [m.held] if m.held and m.support.get(m.held) == src else []
        if not carrying and src not in m.inspected:
            self.hands.go(src, f"I look at what is on the {src}")
        strays = [o for o, was in m.picked_from.items() if was == src and o not in carrying + m.on(src) and o not in m.given_up
                  and goal.dest and m.support.get(o) != self.referents.receptacle(goal.dest)
                  and not any(o == d[0] for d in m.done)]  # dropped on the way (not put somewhere on purpose)
        for obj in carrying + [o for o in m.on(src) if (o, src) not in m.done] + strays:  # not what a goal put there
            if goal.dest:
                dest = self.referents.receptacle(goal.dest)
                if dest is None:
                    self.search.explore(goal.dest)
            else:
                others = [n for n in m.of(RECEPTACLE_TYPES) if n != src and not m.closable(n)]
                if not others:
                    self.search.explore("another surface")
                dest = sorted(others)[0]
            self.hands.bring(obj, dest)

    def conditional(self, index: int, goal: IfAbsent | IfEmpty | Keep) -> None:
        """Look into the container first, then move what the condition asks for."""
        m = self.ep.mem
        box_phrase = goal.container if not isinstance(goal, Keep) else goal.dest
        box = self.referents.receptacle(box_phrase)
        if box is None:
            self.search.explore(box_phrase)
        if index not in m.checked:
            if m.held:
                self.hands.put_down(m.held, f"I need a free hand to look into the {box}")
            self.hands.ensure_open(box, f"I must look inside the {box}")
            if m.near != box:
                self.hands.go(box, f"I look at what is in the {box}")
            m.checked[index] = True  # we are at the open container now: what is there is in memory
        inside = m.on(box)
        grounder = self.ep.grounder
        if isinstance(goal, IfAbsent):
            kinds = grounder.category_matches(goal.kind, sorted(OBJECT_CLASSES), GROUPS)
            if any(m.known.get(o) in kinds and (o, box) not in m.done for o in inside):
                return
            self.move(Move(Things(kind=goal.kind, count=1), box_phrase))
        elif isinstance(goal, IfEmpty):
            counted = grounder.category_matches(goal.kind, sorted(OBJECT_CLASSES), GROUPS) if goal.kind else None
            there = [o for o in inside if not any(o == d[0] for d in m.done) and (counted is None or m.known.get(o) in counted)]
            target = box_phrase if bool(there) == goal.inverse else goal.otherwise
            self.move(Move(Things(names=(goal.thing,)), target))
        else:
            kinds = grounder.category_matches(goal.kind, sorted(OBJECT_CLASSES), GROUPS)
            have = [o for o in inside if m.known.get(o) in kinds]
            if len(have) < goal.count:
                self.move(Move(Things(kind=goal.kind, count=goal.count - len([o for o in have if (o, box) not in m.done])
                                      ), box_phrase))

    def close_after(self) -> None:
        """Close the containers things were put in, when the task asks for it."""
        m = self.ep.mem
        if not self.ep.plan.close_after:
            return
        dests = []
        for goal in self.ep.plan.goals:
            if isinstance(goal, Move):
                dests += [d for (_, d) in m.done if goal.dest is None or d == self.referents.receptacle(goal.dest)]
            elif isinstance(goal, IfEmpty):  # "..., and close it": whichever of the two it went into
                boxes = {self.referents.receptacle(goal.container), self.referents.receptacle(goal.otherwise)}
                dests += [d for (_, d) in m.done if d in boxes]
            elif isinstance(goal, Clear):  # "empty the cabinet ..., then close it": the one emptied, and the one filled
                src = self.referents.receptacle(goal.source)
                dests += [src] if src in m.opened else []
                dests += [d for (_, d) in m.done if goal.dest is not None and d == self.referents.receptacle(goal.dest)]
        for box in dict.fromkeys(d for d in dests if m.closable(d)):
            if box in m.opened:
                self.hands.act(Action.CLOSE, box, f"the task asks me to close the {box} at the end")
