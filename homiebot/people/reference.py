"""What words cover in a scene: the objects and receptacles an instruction (or a question) could mean.

Only what a person can see counts: an object's class and category, its colour, the receptacle it
rests on or in and that receptacle's room; a receptacle's type, colour and room. Names are never
compared, so two red mugs called ``red_mug`` and ``red_mug_2`` are both covered by "the red mug".

A thing is described by its kind (class words such as "teddy bear", else a category word such as
"fruit" or "something to drink", see ``homiebot.core.vocabulary.CATEGORY_WORDS``), a colour among the two
words before the kind, and the place phrases after it that are not its destination ("the mug from
the desk", "the one on the shelf"). A destination is the last place phrase of its clause (clauses
are split at commas, "and" and "then").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from homiebot.core.vocabulary import CATEGORY_WORDS, COLORS, OBJECT_CLASSES
from homiebot.people.scene_facts import SceneFacts

PLACE_PREPS = ("on", "in", "into", "onto", "to", "inside", "at")
FROM_PREPS = ("from", "off", "near", "by", "under")
STOP = {"the", "a", "an", "some", "one", "of", "piece", "please", "it", "that", "is", "which", "s"}


def norm(word: str) -> str:
    """A word in singular form: ``mugs`` -> ``mug`` (not ``glass``)."""
    return word[:-1] if word.endswith("s") and len(word) > 3 and not word.endswith("ss") else word


def seq(text: str) -> list[str]:
    """The words of a text in order, lower case and singular."""
    return [norm(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def clauses(text: str) -> list[list[str]]:
    """The clauses of an instruction (split at commas, semicolons, "and" and "then"), as word lists."""
    parts = re.split(r"[,;.!?]|\band\b|\bthen\b", text.lower())
    return [s for s in (seq(p) for p in parts) if s]


def find(words: Sequence[str], phrase: Sequence[str]) -> int:
    """Index where ``phrase`` starts inside ``words`` as a contiguous run; -1 when absent."""
    n = len(phrase)
    for i in range(len(words) - n + 1):
        if n and list(words[i:i + n]) == list(phrase):
            return i
    return -1


def kind_span(words: Sequence[str], object_class: str) -> tuple[int, int, str] | None:
    """Where ``words`` name a thing of ``object_class``: (start, end, "class" | "category"); None if not."""
    cls_words = seq(object_class.replace("_", " "))
    i = find(words, cls_words)
    if i >= 0:
        return i, i + len(cls_words), "class"
    category = OBJECT_CLASSES[object_class].category if object_class in OBJECT_CLASSES else None
    for j, w in enumerate(words):
        if category and CATEGORY_WORDS.get(w) == category and not _part_of_class(words, j):
            return j, j + 1, "category"
    return None


def _part_of_class(words: Sequence[str], j: int) -> bool:
    """Whether word ``j`` belongs to a class name ("toy" in "toy block")."""
    for cls in OBJECT_CLASSES:
        cw = seq(cls.replace("_", " "))
        if len(cw) > 1 and words[j] in cw:
            k = j - cw.index(words[j])
            if list(words[k:k + len(cw)]) == cw:
                return True
    return False


def place_phrases(words: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The place phrases of a word list: (preposition, the words up to the next preposition)."""
    out: list[tuple[str, list[str]]] = []
    for w in words:
        if w in PLACE_PREPS or w in FROM_PREPS:
            out.append((w, []))
        elif out:
            out[-1][1].append(w)
    return [(p, ws) for p, ws in out if any(w not in STOP for w in ws)]


def receptacles_covered(words: Sequence[str], facts: SceneFacts) -> set[str]:
    """The receptacles a place phrase covers: by type words, then colour and room words; every
    receptacle when it names no type, colour or room."""
    said = set(words)
    found = {r for r, t in facts.receptacle_type.items() if t and set(seq(t.replace("_", " "))) <= said}
    type_words = {w for r in found for w in seq(facts.receptacle_type[r].replace("_", " "))}
    rest = said - type_words
    colours = rest & set(COLORS)
    rooms = {room for room in facts.rooms if set(seq(room.replace("_", " "))) <= rest}
    out = found if found else set(facts.receptacle_type)
    if colours:
        out = {r for r in out if facts.colour.get(r) in colours}
    if rooms:
        out = {r for r in out if facts.room_of.get(r) in rooms}
    if not (found or colours or rooms):
        return set(facts.receptacle_type)
    return out


def describes(words: Sequence[str], start: int, end: int, facts: SceneFacts, destination: bool) -> tuple[set[str], set[str]]:
    """(colours, supports) said of the thing at ``words[start:end]``: a colour among the two words
    before it, and the receptacles of the place phrases after it (all but a last one that is the
    destination when ``destination``; phrases with "from" always describe the thing)."""
    colours = {w for w in words[max(0, start - 2):start] if w in COLORS}
    phrases = place_phrases(words[end:])
    last = len(phrases) - 1 if destination else len(phrases)
    supports: set[str] = set()
    for k, (prep, ws) in enumerate(phrases):
        if k < last or prep in FROM_PREPS:
            covered = receptacles_covered(ws, facts)
            if covered != set(facts.receptacle_type):
                supports = covered if not supports else supports & covered
    return colours, supports


def objects_covered(kind: str, by: str, colours: set[str], supports: set[str], facts: SceneFacts) -> set[str]:
    """Objects of class ``kind`` (or of its category when ``by`` is "category") with one of ``colours`` and
    resting on one of ``supports`` (each filter only when given)."""
    category = OBJECT_CLASSES[kind].category if kind in OBJECT_CLASSES else None
    out = set()
    for name, cls in facts.object_class.items():
        same = cls == kind or (by == "category" and category is not None and cls in OBJECT_CLASSES
                               and OBJECT_CLASSES[cls].category == category)
        if same and (not colours or facts.colour.get(name) in colours) and (not supports or facts.support.get(name) in supports):
            out.add(name)
    return out
