"""A simulated user (Ask-to-Act style): answers from the task's hidden intent and the scene, and
judges each question relevant or not.

The hidden intent is the task's goal. From it and the instruction the user works out the *open
slots*: which object it means when the instruction's words fit several (``object``), and where a thing
goes when the instruction does not pin one receptacle (``place``). A question is relevant when it
asks about an open slot not answered yet; anything else (a slot already fixed by the instruction or
by an earlier answer, or something the intent does not care about) is irrelevant. The minimum
number of questions K of a task is the number of its open slots (``open_slots``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from homiebot.contracts import Exchange
from homiebot.people.base import User
from homiebot.people.scene_facts import SceneFacts, tokens, words
from homiebot.tasks import Condition, ContainerState, ObjectAt

WHERE_WORDS = {"where", "which place", "put it", "place", "go", "goes", "destination", "leave it", "bring it"}


@dataclass(frozen=True)
class Slot:
    """One thing the instruction leaves open: which ``object`` (of condition ``index``), or its ``place``."""

    index: int
    kind: str  # "object" | "place"
    answer: str


def _mentions(text_tokens: set[str], name: str) -> bool:
    return set(words(name).split()) <= text_tokens


def open_slots(instruction: str, goal: Sequence[Condition], facts: SceneFacts) -> list[Slot]:
    """The slots an instruction leaves open for this goal in this scene (K = their number)."""
    said = tokens(instruction)
    slots: list[Slot] = []
    for i, cond in enumerate(goal):
        if not isinstance(cond, ObjectAt):
            continue
        if cond.object is not None:
            cls = facts.object_class.get(cond.object, "")
            named = _mentions(said, cond.object)
            others = [n for n in facts.same_class(cond.object) if n != cond.object]
            if not named and (others or not _mentions(said, cls)):
                slots.append(Slot(i, "object", f"I mean {facts.describe_object(cond.object)}."))
        recs = cond.receptacles
        if len(recs) == 1:
            rec = recs[0]
            rtype = facts.receptacle_type.get(rec, rec)
            same = [r for r, t in facts.receptacle_type.items() if t == rtype]
            pinned = _mentions(said, rec) or (_mentions(said, rtype) and len(same) == 1)
            if not pinned:
                slots.append(Slot(i, "place", f"It goes {facts.preposition(rec)} the {words(rec)}."))
    return slots


class SimulatedUser(User):
    """Answers from the hidden intent (``goal``) and the scene; records relevance per question."""

    name = "simulated"

    def __init__(self, instruction: str, goal: Sequence[Condition], scene: dict | None) -> None:
        self.facts = SceneFacts.from_scene(scene)
        self.goal = list(goal)
        self.slots = open_slots(instruction, self.goal, self.facts)
        self.answered: set[Slot] = set()

    @property
    def min_questions(self) -> int:
        """K: the questions a perfect asker needs."""
        return len(self.slots)

    def _about(self, question: str) -> tuple[list[int], bool, bool]:
        """(conditions the question names, asks where, asks which)."""
        q = tokens(question)
        conds = []
        for i, cond in enumerate(self.goal):
            if isinstance(cond, ObjectAt):
                subject = cond.object_class or self.facts.object_class.get(cond.object or "", "")
                if subject and set(words(subject).split()) & q:
                    conds.append(i)
        low = question.lower()
        places = any(set(words(t).split()) <= q for t in set(self.facts.receptacle_type.values()) | set(self.facts.rooms))
        where = any(w in low for w in WHERE_WORDS) or places
        which = bool(conds) and not any(w in low for w in WHERE_WORDS) or (
            not places and bool(re.search(r"\b(which|what|do you mean|the one|one of)\b", low))) or not where
        return conds, where, which

    def statement(self) -> str:
        """The whole intent in plain words, for a question about what to do at all."""
        parts = []
        for cond in self.goal:
            if isinstance(cond, ObjectAt):
                what = self.facts.describe_object(cond.object) if cond.object else f"a {words(cond.object_class or '')}"
                where = " or ".join(f"{self.facts.preposition(r)} the {words(r)}" for r in cond.receptacles)
                parts.append(f"put {what} {where}")
            elif isinstance(cond, ContainerState):
                parts.append(f"{'open' if cond.open else 'close'} the {words(cond.receptacle)}")
        return "Please " + " and ".join(parts) + "." if parts else "Nothing needs doing."

    def answer(self, question: str, round_index: int) -> Exchange:
        if re.search(r"\b(?:what (?:should|do you want|would you like)|did not understand|didn't understand|rephrase|say again|"
                     r"not sure what you mean)\b", question.lower()):
            return Exchange(question=question, answer=self.statement(), relevant=False, answerer=self.name)
        conds, where, which = self._about(question)
        if not conds:  # a question naming nothing of the intent is about the one condition, if there is one
            open_conds = sorted({s.index for s in self.slots if s not in self.answered})
            conds = open_conds[:1] if len(open_conds) == 1 or len(self.goal) == 1 else []
        hits = [s for s in self.slots if s.index in conds and ((s.kind == "place" and where) or (s.kind == "object" and which))]
        fresh = [s for s in hits if s not in self.answered]
        if fresh:
            self.answered.update(fresh)
            return Exchange(question=question, answer=" ".join(s.answer for s in fresh), relevant=True, answerer=self.name)
        if hits:
            return Exchange(question=question, answer="I told you already: " + " ".join(s.answer for s in hits),
                            relevant=False, answerer=self.name)
        return Exchange(question=question, answer=self._plain(conds, where), relevant=False, answerer=self.name)

    def _plain(self, conds: list[int], where: bool) -> str:
        """A truthful answer to a question that did not need asking."""
        for i in conds:
            cond = self.goal[i]
            if isinstance(cond, ObjectAt) and cond.object and not where:
                return f"Just as I said: {self.facts.describe_object(cond.object)}."
            if isinstance(cond, ObjectAt) and where and len(cond.receptacles) == 1:
                rec = cond.receptacles[0]
                return f"As I said, {self.facts.preposition(rec)} the {words(rec)}."
        return "That does not matter to me; please just do what I asked."
