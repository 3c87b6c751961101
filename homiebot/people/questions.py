"""Reading a planner's question: which goal things it names, whether it asks which or where, whether
it is a yes/no question, and which objects or receptacles it names (by what a person sees, as in
``homiebot.people.reference``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from homiebot.core.tasks import Condition, ObjectAt
from homiebot.people.reference import (
    CATEGORY_WORDS,
    PLACE_PREPS,
    describes,
    kind_span,
    objects_covered,
    place_phrases,
    receptacles_covered,
    seq,
)
from homiebot.people.scene_facts import SceneFacts

AUX = {"do", "doe", "did", "is", "are", "was", "were", "should", "shall", "can", "could", "would", "will", "may", "must",
       "am", "have", "ha"}
WHERE_VERBS = {"go", "goe", "put", "place", "leave", "belong", "set", "move", "drop", "bring", "take"}
PLACE_WORDS = {"place", "spot", "furniture", "where"}
STATEMENT = re.compile(r"\b(?:what (?:should|do you want|would you like)|did not understand|didn't understand|rephrase|"
                       r"say again|not sure what you mean)\b")


@dataclass
class Question:
    """What one question is about."""

    yesno: bool
    where: bool  # asks where something goes (a "where" question, or a yes/no question about a place)
    mentioned: list[int] = field(default_factory=list)  # goal conditions whose object kind it names
    which_objects: list[int] = field(default_factory=list)  # conditions it asks "which <kind>" about
    which_one: bool = False  # a generic "which one" / "what do you mean"
    which_place: set[str] | None = None  # receptacles a "which <type>" covers
    objects: set[str] | None = None  # objects it names (None: none)
    places: set[str] | None = None  # receptacles a place phrase of it covers (None: none)


def subject_class(cond: ObjectAt, facts: SceneFacts) -> str:
    """The class of the thing an ObjectAt condition moves."""
    return cond.object_class or facts.object_class.get(cond.object or "", "")


def _named_objects(words: Sequence[str], facts: SceneFacts) -> set[str] | None:
    """Objects the words name: the first kind (class, else category) with its colour and place phrases,
    or "the <colour> one" / "the one on the shelf"; None when no object is named."""
    spans = [(s, e, by, c) for c in sorted(set(facts.object_class.values())) if (got := kind_span(words, c)) for s, e, by in [got]]
    if spans:
        s, e, by, cls = min(spans, key=lambda x: (x[0], x[2] != "class", -(x[1] - x[0])))
        colours, supports = describes(words, s, e, facts, destination=False)
        return objects_covered(cls, by, colours, supports, facts)
    anchor = next((i for i, w in enumerate(words) if w in ("one", "it")), None)
    if anchor is None:
        return None
    colours, supports = describes(words, anchor, anchor + 1, facts, destination=False)
    if not colours and not supports:
        return None
    return {n for n in facts.object_class if (not colours or facts.colour.get(n) in colours)
            and (not supports or facts.support.get(n) in supports)}


def read_question(text: str, goal: Sequence[Condition], facts: SceneFacts) -> Question:
    """What ``text`` asks, in terms of ``goal``'s conditions and the scene."""
    words = seq(text)
    low = f" {text.lower()} "
    yesno = bool(words) and words[0] in AUX and not {"which", "where", "what"} & set(words) and " or " not in low
    spans: dict[int, tuple[int, int]] = {}
    for i, cond in enumerate(goal):
        if isinstance(cond, ObjectAt) and (cls := subject_class(cond, facts)) and (got := kind_span(words, cls)):
            spans[i] = got[:2]
    q = Question(yesno=yesno, where="where" in words, mentioned=sorted(spans))
    for j, w in enumerate(words):
        if w not in ("which", "what"):
            continue
        after = words[j + 1:j + 5]
        about = [i for i, (s, _) in spans.items() if j < s <= j + 4]
        covered = receptacles_covered(after, facts)
        if about:
            q.which_objects += about
        elif covered != set(facts.receptacle_type) and not any(CATEGORY_WORDS.get(x) for x in after):
            q.which_place = covered
        elif PLACE_WORDS & set(after):
            q.where = True
        else:
            q.which_one = True
    q.objects = _named_objects(words, facts)
    phrases = [ws for p, ws in place_phrases(words) if p in PLACE_PREPS]
    if phrases:
        covered = receptacles_covered(phrases[-1], facts)
        q.places = covered if covered != set(facts.receptacle_type) else None
    if yesno and WHERE_VERBS & set(words) and q.places is not None:
        q.where = True
    return q
