"""A simulated user and strict judge (Ask-to-Act style): answers from the task's hidden intent and the
scene, and judges each question relevant or not.

The hidden intent is the task's goal. From it, the instruction and the scene the user works out the
*open slots*: which object a goal condition means when the instruction's words cover several objects
in the scene (``object``), and where it goes when they cover several receptacles (``place``). Words
cover things by what a person sees (class or category, colour, support, room), never by their names
(``homiebot.people.reference``). K, the fewest questions a perfect asker needs, is the number of open
slots (``open_slots``).

A question is relevant only if its answer changes which candidate or place is meant:

* a which/where question about an open slot not answered yet is answered in full and counts once per
  slot it settles ("Which sponge, and where should it go?" settles two and counts two);
* a yes/no question about an open slot gets "Yes." or "No." and counts once when the answer rules out
  at least one remaining candidate; the slot is settled when only meant candidates remain (a "no"
  between two candidates settles it, a "yes" to a description that fits two does not);
* everything else counts as irrelevant: a question about a slot the instruction or an earlier answer
  already fixed (answered truthfully), and off-topic questions ("Is it raining outside?", "Hello?"),
  which get "I don't know what you mean." even while a slot is open.

A request to restate the whole task ("what should I do?") gets the whole intent, and is irrelevant.
The count a question earns is recorded in ``Exchange.resolved``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from homiebot.core.contracts import Exchange
from homiebot.core.tasks import Condition, ContainerState, ObjectAt
from homiebot.people.base import User
from homiebot.people.questions import STATEMENT, Question, read_question, subject_class
from homiebot.people.reference import (
    PLACE_PREPS,
    clauses,
    describes,
    kind_span,
    objects_covered,
    place_phrases,
    receptacles_covered,
)
from homiebot.people.scene_facts import SceneFacts, words

DONT_KNOW = "I don't know what you mean."


@dataclass
class Slot:
    """One thing the instruction leaves open: which ``object`` condition ``index`` moves, or its ``place``.
    ``target`` is what is meant, ``candidates`` what the words (and answers so far) still allow."""

    index: int
    kind: str  # "object" | "place"
    target: frozenset[str]
    candidates: set[str]
    answer: str
    answered: bool = False


def _object_candidates(instruction: str, cond: ObjectAt, facts: SceneFacts) -> set[str]:
    cls = subject_class(cond, facts)
    for clause in clauses(instruction):
        if cls and (got := kind_span(clause, cls)):
            start, end, by = got
            colours, supports = describes(clause, start, end, facts, destination=True)
            return objects_covered(cls, by, colours, supports, facts)
    return set(facts.object_class)  # the instruction does not describe it: anything could be meant


def _place_candidates(instruction: str, cond: ObjectAt, facts: SceneFacts) -> set[str]:
    parts = clauses(instruction)
    cls = subject_class(cond, facts)
    own = next((k for k, c in enumerate(parts) if cls and kind_span(c, cls)), 0)
    order = [own] + list(range(own + 1, len(parts))) + list(range(own - 1, -1, -1))
    for k in order:
        got = kind_span(parts[k], cls) if k == own and cls else None
        phrases = [ws for p, ws in place_phrases(parts[k][got[1]:] if got else parts[k]) if p in PLACE_PREPS]
        if phrases:
            return receptacles_covered(phrases[-1], facts)
    return set(facts.receptacle_type)


def open_slots(instruction: str, goal: Sequence[Condition], facts: SceneFacts) -> list[Slot]:
    """The slots an instruction leaves open for this goal in this scene (K = their number)."""
    slots: list[Slot] = []
    for i, cond in enumerate(goal):
        if not isinstance(cond, ObjectAt):
            continue
        if cond.object is not None:
            cands = _object_candidates(instruction, cond, facts) | {cond.object}
            if cands != {cond.object}:
                slots.append(Slot(i, "object", frozenset({cond.object}), cands, f"I mean {describe(cond.object, cands, facts)}."))
        recs = frozenset(cond.receptacles)
        places = _place_candidates(instruction, cond, facts)
        if not places or not places <= recs:
            where = " or ".join(f"{facts.preposition(r)} the {words(r)}" for r in cond.receptacles)
            slots.append(Slot(i, "place", recs, places | recs, f"It goes {where}."))
    return _drop_plural(slots)


def _drop_plural(slots: list[Slot]) -> list[Slot]:
    """Object slots whose candidates are exactly the things the goal moves are not open ("put the mugs
    in the sink" with both mugs in the goal)."""
    objs = [s for s in slots if s.kind == "object"]
    closed = set()
    for s in objs:
        same = [t for t in objs if t.candidates == s.candidates]
        if len(same) > 1 and frozenset().union(*(t.target for t in same)) == frozenset(s.candidates):
            closed |= {id(t) for t in same}
    return [s for s in slots if id(s) not in closed]


def describe(name: str, candidates: set[str], facts: SceneFacts) -> str:
    """``name`` as a person tells it apart from the other ``candidates``: 'the red mug on the brown desk',
    with the room, and at last the name, when that is not enough."""
    text = facts.describe_object(name)
    alike = [c for c in candidates if c != name and facts.describe_object(c) == text]
    room = facts.room_of.get(facts.support.get(name, ""), "")
    if alike and room and all(facts.room_of.get(facts.support.get(c, ""), "") != room for c in alike):
        return f"{text} in the {words(room)}"
    return f"{text}, the one called {words(name)}" if alike else text


class SimulatedUser(User):
    """Answers from the hidden intent (``goal``) and the scene; records relevance per question."""

    name = "simulated"

    def __init__(self, instruction: str, goal: Sequence[Condition], scene: dict | None) -> None:
        self.facts = SceneFacts.from_scene(scene)
        self.goal = list(goal)
        self.slots = open_slots(instruction, self.goal, self.facts)

    @property
    def min_questions(self) -> int:
        """K: the questions a perfect asker needs."""
        return len(self.slots)

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
        if STATEMENT.search(question.lower()):
            return self._reply(question, self.statement())
        q = read_question(question, self.goal, self.facts)
        return self._yes_no(question, q) if q.yesno else self._which(question, q)

    def _reply(self, question: str, text: str, resolved: int = 0) -> Exchange:
        return Exchange(question=question, answer=text, relevant=resolved > 0, answerer=self.name, resolved=resolved)

    def _single(self, kind: str) -> list[Slot]:
        """The one slot of ``kind`` a question that names nothing can be about: the only open one, or the
        only one at all; none when that is not clear."""
        every = [s for s in self.slots if s.kind == kind]
        still = [s for s in every if not s.answered]
        return still if len(still) == 1 else every if not still and len(every) == 1 else []

    def _of(self, kind: str, conds: Sequence[int]) -> list[Slot]:
        return [s for s in self.slots if s.kind == kind and s.index in conds]

    def _which(self, question: str, q: Question) -> Exchange:
        """A which / where question: every slot it asks about, answered in full."""
        hits = self._of("object", q.which_objects)
        if q.which_one and not q.which_objects:
            hits += self._of("object", q.mentioned) if q.mentioned else self._single("object")
        if q.where or q.which_place is not None:
            places = self._of("place", q.mentioned) if q.mentioned else self._single("place")
            hits += [s for s in places if q.which_place is None or q.which_place & s.candidates]
        if not hits:  # "the red one or the black one?": names candidates that differ
            hits = [s for s in self.slots if not s.answered and s.kind == "object" and q.objects
                    and q.objects & s.candidates and not s.candidates <= q.objects]
        fresh = [s for s in hits if not s.answered]
        if fresh:
            for s in fresh:
                s.answered = True
            return self._reply(question, " ".join(s.answer for s in fresh), resolved=len(fresh))
        if hits:
            return self._reply(question, "I told you already: " + " ".join(s.answer for s in hits))
        return self._reply(question, self._plain(q))

    def _yes_no(self, question: str, q: Question) -> Exchange:
        """A yes/no question: 'Yes.' or 'No.', relevant when it rules out a remaining candidate."""
        kind, named = ("place", q.places) if q.where else ("object", q.objects)
        if named is None:
            return self._reply(question, DONT_KNOW if not q.mentioned else self._plain(q))
        slots = [s for s in self.slots if s.kind == kind and (s.index in q.mentioned or s.candidates & named)]
        slot = next((s for s in slots if not s.answered), slots[0] if slots else None)
        if slot is None:
            return self._reply(question, "Yes." if self._meant(kind, q) & named else "No.")
        yes = bool(slot.target & named)
        left = slot.candidates & named if yes else slot.candidates - named
        if slot.answered or not left or left == slot.candidates:
            return self._reply(question, "Yes." if yes else "No.")
        slot.candidates = left
        slot.answered = left <= slot.target
        return self._reply(question, "Yes." if yes else "No.", resolved=1)

    def _meant(self, kind: str, q: Question) -> set[str]:
        """What the goal means of ``kind`` for the conditions the question names (all when it names none)."""
        out: set[str] = set()
        for i, cond in enumerate(self.goal):
            if isinstance(cond, ObjectAt) and (not q.mentioned or i in q.mentioned):
                out |= set(cond.receptacles) if kind == "place" else ({cond.object} if cond.object else set())
        return out

    def _plain(self, q: Question) -> str:
        """A truthful answer to a question that did not need asking; 'I don't know what you mean' to one
        that is not about the intent at all."""
        conds = q.mentioned or ([i for i, c in enumerate(self.goal) if isinstance(c, ObjectAt)][:1]
                                if (q.where or q.which_one or q.which_place is not None) else [])
        for i in conds:
            cond = self.goal[i]
            if isinstance(cond, ObjectAt) and (q.where or q.which_place is not None) and len(cond.receptacles) == 1:
                rec = cond.receptacles[0]
                return f"As I said, {self.facts.preposition(rec)} the {words(rec)}."
            if isinstance(cond, ObjectAt) and cond.object:
                return f"Just as I said: {self.facts.describe_object(cond.object)}."
        return DONT_KNOW
