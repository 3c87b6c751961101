"""Settling on a subtask, and the hand's part in it. A part that settles on the round's subtask raises
``Decision`` from however deep in the goal logic it is; the planner's round catches it. Acting on a thing
means going to it first, and the robot has one hand: it is freed, or used to open a container, before
what needs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from homiebot.core.contracts import Action, Subtask
from homiebot.core.vocabulary import RECEPTACLE_TYPES

from .episode import Episode


class Decision(Exception):
    """The round's subtask and why it was chosen."""

    def __init__(self, sub: Subtask, why: str) -> None:
        self.sub, self.why = sub, why


class Hands:
    """Turns an intent on one thing into the next subtask: go there first, free the hand, open, carry."""

    def __init__(self, episode: Episode, explore: Callable[[str], NoReturn]) -> None:
        self.ep = episode
        self.explore = explore  # where a free surface is to be found when none is known

    def go(self, target: str, why: str) -> NoReturn:
        """Decide to go to ``target``."""
        raise Decision(Subtask(action=Action.GO_TO, target=target), why)

    def act(self, action: Action, target: str, why: str, place: str | None = None) -> NoReturn:
        """Decide ``action`` on ``target`` (at ``place``), going there first when the robot is not near it."""
        spot = place or target
        mem = self.ep.mem
        near = mem.near is not None and mem.near in (spot, mem.support.get(spot))
        if not near:
            self.go(spot, f"{why}; first I go to the {spot}")
        raise Decision(Subtask(action=action, target=target, place=place), why)

    def put_down(self, obj: str, why: str) -> NoReturn:
        """Free the hand: put ``obj`` on the surface the robot is at, else on the first known one."""
        mem = self.ep.mem
        surfaces = [n for n in mem.of(RECEPTACLE_TYPES) if not mem.closable(n)]
        if not surfaces:
            self.explore("a free surface")
        spot = mem.near if mem.near in surfaces else sorted(surfaces)[0]
        self.act(Action.PUT, obj, why, place=spot)

    def ensure_open(self, box: str, why: str) -> None:
        """Open ``box`` (with a free hand) unless it is open or has no door; returns when it is open."""
        mem = self.ep.mem
        if mem.closable(box) and box not in mem.opened:
            if mem.held:
                self.put_down(mem.held, f"I must open the {box} and need a free hand")
            self.act(Action.OPEN, box, why)

    def bring(self, obj: str, dest: str) -> None:
        """Move one known object to a known receptacle; returns when it is there."""
        mem = self.ep.mem
        if (obj, dest) in mem.done and (mem.support.get(obj) == dest or any(o == obj and d != dest for o, d in mem.done)):
            return  # there, or taken there and then on to where another goal wants it: never back and forth
        if mem.held and mem.held != obj:
            self.put_down(mem.held, f"I hold the {mem.held} but need to carry the {obj}")
        if mem.held == obj:
            if mem.closable(dest) and dest not in mem.opened:
                self.put_down(obj, f"the {dest} must be opened first")
            self.act(Action.PUT, obj, f"I carry the {obj} to the {dest}", place=dest)
        self.ensure_open(dest, f"the {obj} goes into the {dest}, so I open it while my hand is free")
        source = mem.support.get(obj)
        if source and mem.closable(source) and source not in mem.opened:
            self.act(Action.OPEN, source, f"the {obj} is inside the closed {source}")
        self.act(Action.PICK, obj, f"the {obj} should go to the {dest}")
