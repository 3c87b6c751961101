"""Asking from the scene: the phrases of a plan that may fit several things in a home ("the sponge",
"the shelf", "a piece of fruit") are slots, settled from what has been seen (``planners/candidates.py``)
or by asking, and answers are read into them. A shared helper the planners can use: it says what to do
next for the slots (ask, or look at the rooms not seen yet) and renames a settled phrase through a
callback; the planner decides how to look and what an Ask costs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from homiebot.core.vocabulary import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.perception.grounding import words_of
from homiebot.planners.candidates import Thing, candidates, descriptive, pinned, question, read_answer, read_phrase
from homiebot.planners.instructions import Fetch, IfEmpty, Move

ARTICLES = ("the", "a", "an", "my", "one", "some")


@dataclass
class Slot:
    """One phrase to settle: an object (``objects``) or a place, with what asking about it gave so far."""

    objects: bool
    phrase: str  # the phrase as it stands in the plan (replaced by a name once settled)
    done: bool = False
    asks: int = 0
    offered: list[str] = field(default_factory=list)  # the candidates the last question named
    excluded: set[str] = field(default_factory=set)  # things an answer ruled out ("no")
    unusable: list[str] = field(default_factory=list)  # answers that said nothing usable


@dataclass(frozen=True)
class AskStep:
    """Ask ``question`` about slot ``slot``."""

    question: str
    slot: int
    why: str


@dataclass(frozen=True)
class LookStep:
    """Look at the rooms not seen yet (then, for a small thing, into basins) before settling ``phrase``;
    ``inside``: every room was seen and one thing fits, so look into the closed containers where another
    that the words fit may be shut away."""

    phrase: str
    objects: bool
    inside: bool = False


def open_slots(goals: list) -> list[Slot]:
    """A slot for every object phrase (or one-of-a-kind: "a piece of fruit") and every destination that
    names a piece of furniture."""
    slots: list[Slot] = []
    for goal in goals:
        if isinstance(goal, Move):
            slots += [Slot(True, name) for name in goal.things.names]
            if not goal.things.names and goal.things.kind and goal.things.count == 1:
                slots.append(Slot(True, goal.things.kind))
            if goal.dest and goal.dest_kind is None:
                slots.append(Slot(False, goal.dest))
        elif isinstance(goal, (Fetch, IfEmpty)):
            slots.append(Slot(True, goal.thing))
    seen: set[tuple[bool, str]] = set()
    return [s for s in slots if (s.objects, s.phrase) not in seen and not seen.add((s.objects, s.phrase))]  # type: ignore[func-returns-value]


class Asker:
    """The slots of one plan and what to do about them. ``rename(objects, old, new)`` puts a settled
    phrase's new words into the plan; ``named(phrase, objects)`` names what a phrase means for sure
    without looking (an alias, or a piece of furniture a home has one of), if anything."""

    def __init__(self, goals: list, rename: Callable[[bool, str, str], None],
                 named: Callable[[str, bool], str | None] = lambda phrase, objects: None,
                 shut_away: Callable[[str], bool] = lambda phrase: False) -> None:
        self.slots = open_slots(goals)
        self.rename = rename
        self.named = named
        self.shut_away = shut_away

    def next(self, things: Mapping[str, Thing], unseen: Callable[[bool], bool]) -> AskStep | LookStep | None:
        """What to do for the slots now (``unseen(objects)``: places are left to look at for a small thing,
        or for furniture, that is rooms): ask about a phrase that fits
        several seen things (places first: an object question that names places answers both); look at
        the rooms not seen yet while a phrase fits one thing or none; with every room seen and one thing
        that a phrase naming a kind only fits, look into the closed containers that may hold another
        (``shut_away(phrase)``: some are left, and there are rounds for them); then one left settles it,
        and none found is asked about for a phrase naming a kind only. None: nothing to do."""
        waiting: list[Slot] = []  # rooms (or basins) to look at first
        shut: list[Slot] = []  # closed containers to look into first
        for slot in sorted((s for s in self.slots if not s.done), key=lambda s: s.objects):
            key = "_".join(w for w in words_of(slot.phrase) if w not in ARTICLES)
            exact = pinned(slot.phrase, things, slot.objects) or self.named(slot.phrase, slot.objects)
            if exact and exact in things:
                slot.done = True
                continue
            cands = candidates(slot.phrase, things, slot.objects, slot.excluded)
            want = read_phrase(slot.phrase, slot.objects)
            specific = bool(want.named_kind and (want.colours or want.rooms or want.where))
            if len(cands) >= 2 or slot.unusable and slot.asks <= len(slot.unusable):
                return self._ask(slot, cands, things)
            by_name = cands == [key] and key not in (OBJECT_CLASSES if slot.objects else RECEPTACLE_TYPES)  # not a type's name
            if by_name and descriptive(key, slot.objects) and unseen(False):
                waiting.append(slot)  # "the pink peach" names how it looks: one alike may stand in a room not seen yet
            elif by_name or (slot.objects and want.where):  # its name, or a place to look first: searched for as usual
                slot.done = True
            elif specific and cands and not slot.objects:  # "the brown shelf", "the kitchen sink": furniture shows from afar
                self._settle(slot, cands[0])
            elif unseen(slot.objects) and (cands or not specific):
                waiting.append(slot)
            elif specific and not cands:
                continue  # searched for as usual; asked about only if several turn up
            elif slot.objects and not specific and len(cands) == 1 and self.shut_away(slot.phrase):
                shut.append(slot)
            elif len(cands) == 1:
                self._settle(slot, cands[0])
            elif not cands and not specific and slot.asks == 0:
                return self._ask(slot, cands, things)
            else:
                slot.done = True
        if waiting:
            return LookStep(waiting[0].phrase, waiting[0].objects)
        return LookStep(shut[0].phrase, True, inside=True) if shut else None

    def _ask(self, slot: Slot, cands: list[str], things: Mapping[str, Thing]) -> AskStep:
        slot.asks += 1
        slot.offered = cands
        text = question(slot.phrase, cands, things, slot.objects)
        if slot.unusable:
            text = f"Sorry, I could not tell from '{slot.unusable[-1]}'. {text}"
        why = f"the words '{slot.phrase}' fit {len(cands) or 'nothing I have seen'}{': ' + ', '.join(cands) if cands else ''}"
        return AskStep(text, self.slots.index(slot), f"{why}, so I ask: {text}")

    def _settle(self, slot: Slot, name: str) -> None:
        slot.done = True
        new = name.replace("_", " ")
        if new != slot.phrase:
            self.rename(slot.objects, slot.phrase, new)
            slot.phrase = new

    def answer(self, index: int, answer: str | None, things: Mapping[str, Thing]) -> str | None:
        """Read an answer about slot ``index``: a thing picked, a description to search for, things ruled
        out, or nothing usable (asked again once). Returns what to report when the answers stay unusable."""
        slot = self.slots[index]
        if answer is None:  # nobody answered: go on with what the words say
            slot.done = True
            return None
        got = read_answer(answer, slot.phrase, slot.offered, things, slot.objects)
        if got.chosen or got.description:
            self._settle(slot, got.chosen or got.description or "")
        elif got.excluded:
            slot.excluded |= set(got.excluded)
        else:
            slot.unusable.append(answer)
            if len(slot.unusable) >= 2:
                return f"I could not tell which {slot.phrase} you mean from your answers ({', '.join(repr(a) for a in slot.unusable)})"
        return None
