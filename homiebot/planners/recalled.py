"""Instructions that refer to a demonstration, resolved with the segments recalled from memory.

"Put the toy block away like I showed you", "put the cereal where I keep it", "put the mug where it
belongs": the destination is not in the words but in what the user demonstrated. ``resolve`` finds
such a reference and, from the recalled segments' structured put records (object, place; see
``homiebot.memory.segmentation.Segment``), rewrites the instruction into one the heuristic planner
reads ("put the red toy block in the drawer"). The object the instruction names picks the record
(word overlap with the demonstrated object's name, best-recalled segment first); a pronoun takes the
best-recalled put. A place named by its category only (a demonstration from a robot's bag, where a
detector knows "sink" but not which sink) is qualified by the room it was demonstrated in ("in the
sink in the kitchen"). Without a matching record the reference stays unresolved: the planner asks or
reports it, never guesses a place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from homiebot.core.vocabulary import RECEPTACLE_TYPES
from homiebot.perception.grounding import singular
from homiebot.planners.base import RecalledSegment

_REFERENCE = re.compile(
    r"\b(?:just |exactly )?(?:like|as|the way) (?:i|we) (?:showed you|have shown you|showed|taught you|did|do|do it|always do)"
    r"(?: it| them)?(?: before| earlier| last time| yesterday)?\b"
    r"|\b(?:back )?where (?:i|we) (?:always |usually |normally )?(?:keep|like|store|put|leave|want) (?:it|them|that|those|these)\b"
    r"|\b(?:back )?where (?:it|they|this|that|these|those) (?:belongs|belong|goes|go|lives|live)\b"
    r"|\b(?:back )?(?:in|to) (?:its|their) (?:usual |proper |own )?place\b")
_VERB = re.compile(r"^(?:put|place|move|bring|take|carry|set|get|return|tidy|store|stash|clear)\b\s*")
_FILLER = re.compile(r"\b(?:please|could you|can you|would you|will you|kindly|for me|now)\b")
_DROP = {"the", "a", "an", "my", "your", "our", "this", "that", "these", "those", "some", "away", "back", "up", "out", "again",
         "it", "them", "of", "off"}
_EVERYDAY = {"cup": "mug", "toys": "toy", "blocks": "block", "telly": "remote", "couch": "sofa", "cupboard": "cabinet"}


@dataclass(frozen=True)
class Resolution:
    """What became of an instruction: the text to read, and the reference phrase left unresolved (if any)."""

    instruction: str
    reference: str | None = None  # the phrase that refers to a demonstration
    unresolved: bool = False
    source: str | None = None  # the demonstration whose put record resolved it


def reference_in(instruction: str) -> str | None:
    """The phrase by which ``instruction`` refers to a demonstration ("like I showed you"), or None."""
    found = _REFERENCE.search(instruction.lower().replace("’", "'"))
    return found.group(0).strip() if found else None


def resolve(instruction: str, memories: Sequence[RecalledSegment]) -> Resolution:
    """The instruction with a demonstration reference replaced by the recalled place (unchanged when
    it has no reference; ``unresolved`` when no recalled put record fits its object)."""
    reference = reference_in(instruction)
    if reference is None:
        return Resolution(instruction)
    thing = thing_words(instruction, reference)
    record = placement(thing, memories)
    if record is None:
        return Resolution(instruction, reference, unresolved=True)
    (obj, place), segment = record
    where = f" in the {_words(segment.room)}" if segment.room and place in RECEPTACLE_TYPES and segment.room not in place else ""
    return Resolution(f"put the {_words(obj)} {_relation(place)} the {_words(place)}{where}", reference, source=segment.demo)


def unresolved_phrase(resolution: Resolution) -> str:
    """What the planner says it could not ground when no recalled demonstration resolves the reference."""
    return f"{resolution.reference} (I remember no demonstration that shows where)"


def thing_words(instruction: str, reference: str) -> list[str]:
    """The content words of what the instruction asks to move (empty for a pronoun)."""
    text = instruction.lower().replace("’", "'").replace(reference, " ")
    text = _VERB.sub("", re.sub(r"[^\w\s']", " ", _FILLER.sub(" ", text)).strip())
    return [_EVERYDAY.get(singular(w), singular(w)) for w in text.split() if w not in _DROP]


def placement(thing: Sequence[str], memories: Sequence[RecalledSegment]) -> tuple[tuple[str, str], RecalledSegment] | None:
    """The recalled put record (object, place) whose object shares the most words with ``thing``
    (best-recalled first among equals) and its segment; with no thing words, the best-recalled put;
    None when nothing fits."""
    records = [((obj, place), m) for m in memories for obj, place in m.put]
    if not thing:
        return records[0] if records else None
    wanted = set(thing)
    scored = [(len(wanted & set(_name_words(obj))), -i) for i, ((obj, _), _) in enumerate(records)]
    if not scored or max(scored)[0] == 0:
        return None
    return records[-max(scored)[1]]


def _name_words(name: str) -> list[str]:
    return [singular(w) for w in name.lower().split("_") if w]


def _words(name: str) -> str:
    return name.replace("_", " ")


def _relation(place: str) -> str:
    """'in' for a container (its type by the name's longest known suffix), else 'on'."""
    kinds = [t for t in RECEPTACLE_TYPES if place == t or place.endswith("_" + t)]
    kind = max(kinds, key=len) if kinds else None
    return RECEPTACLE_TYPES[kind].relation if kind else "on"
