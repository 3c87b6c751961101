"""Deciding from the scene, before acting, whether the plan's open phrases need a question or a look first
(``planners/asking.py``): several things fit, ask what differs; rooms not seen yet, look at them (and, for a
small thing, into the sinks); one thing fits, but another may be shut in a closed container and the rounds
left allow it, look inside first."""

from __future__ import annotations

from typing import NoReturn

from homiebot.core.contracts import Action, Subtask
from homiebot.core.vocabulary import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.planners.asking import AskStep, LookStep
from homiebot.planners.candidates import read_phrase
from homiebot.planners.instructions import Fetch, IfEmpty, Move

from .acting import Decision, Hands
from .dialogue import Dialogue
from .episode import Episode
from .searching import Search

# rounds kept when looking for another thing alike: per move still to do (go or ask, pick, go, put, a failure), and for
# the End and a dropped thing picked up again; with less (4 and 3) clear requests ran out of rounds
LOOK_RESERVE = 5
LOOK_EXTRA = 4


class SceneCheck:
    """Raises the question or the look the scene calls for before the plan is acted on; returns when none is."""

    def __init__(self, episode: Episode, dialogue: Dialogue, search: Search, hands: Hands) -> None:
        self.ep = episode
        self.dialogue = dialogue
        self.search = search
        self.hands = hands

    def check(self) -> None:
        """Ask or look for the plan's open phrases before acting (``planners/asking.py``)."""
        asker = self.dialogue.asker
        if asker is None:
            return
        m = self.ep.mem
        step = asker.next(m.known_things(), lambda objects: bool(m.unvisited_rooms() or objects and m.basins()))
        if isinstance(step, AskStep):
            self.dialogue.asked = f"slot:{step.slot}"
            raise Decision(Subtask(action=Action.ASK, target=step.question), step.why)
        if isinstance(step, LookStep):
            label = f"{step.phrase} (to see every one there is before I choose)"
            if step.inside:
                self.look_inside(step.phrase)
            if m.unvisited_rooms() or not step.objects:
                self.search.explore(step.phrase, label)
            if m.held:
                self.hands.put_down(m.held, f"I look into the {m.basins()[0]} with a free hand")
            self.hands.go(m.basins()[0], f"a {step.phrase} may lie low in the {m.basins()[0]}, out of sight from afar")

    def closed_for(self, phrase: str) -> list[str]:
        """Closed containers not looked into that a thing the phrase names fits in, those in the robot's room first."""
        kinds = read_phrase(phrase, objects=True).kinds
        m = self.ep.mem
        boxes = [n for n in m.unsearched_boxes() if any(RECEPTACLE_TYPES[m.known[n]].fits(OBJECT_CLASSES[k]) for k in kinds)]

        def far(n: str) -> tuple[int, float]:  # seen lately and close by first
            last, depth = m.sighted.get(n, (0, 99.0))
            return -last, depth

        return sorted(boxes, key=lambda n: (n != m.near, m.room_of.get(n) != m.robot_room, far(n), n))

    def shut_away(self, phrase: str) -> bool:
        """Whether another thing that ``phrase`` fits may be shut in a container not looked into, and the rounds
        left allow a look there and the task after it (LOOK_RESERVE per move still to do, LOOK_EXTRA more)."""
        boxes = self.closed_for(phrase)
        if not boxes:
            return False
        ep = self.ep
        if ep.max_rounds is None:
            return True
        moves = sum(1 for g in ep.plan.goals if isinstance(g, (Move, Fetch, IfEmpty)))
        cost = 1 if ep.mem.near == boxes[0] else 2
        return ep.max_rounds - ep.round + 1 - cost >= LOOK_RESERVE * moves + LOOK_EXTRA

    def look_inside(self, phrase: str) -> NoReturn:
        """Open the nearest closed container another thing ``phrase`` fits may be shut in, with a free hand."""
        box = self.closed_for(phrase)[0]
        m = self.ep.mem
        if m.held:
            self.hands.put_down(m.held, f"I need a free hand to look inside the {box}")
        if m.near == box:
            m.searched.add(box)
        self.hands.act(Action.OPEN, box, f"I have seen one {phrase.removeprefix('the ')}; before I choose it I look inside the {box}, "
                                         "where another may be shut away")
