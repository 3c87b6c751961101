"""Grounding planner phrases ("green can", "the can on the brown table", "fridge", "kitchen") to
semantic-map instances, with answers a language model can act on when that fails."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from homiebot.perception.grounding import COLOUR_WORDS, SHARED_EMBEDDER, Grounder, TextEmbedder, words_of
from homiebot.perception.semantic_map import MapInstance, SemanticMap
from homiebot.perception.vocabulary import LABEL_GROUP

FILLER = {"the", "a", "an", "my", "one", "some", "that", "this"}
SIZE_WORDS = {"big": 1, "large": 1, "bigger": 1, "larger": 1, "small": -1, "little": -1, "smaller": -1, "tiny": -1}
_RELATION = re.compile(r"^(?P<head>.+?)\s+(?:that is\s+|which is\s+)?(?P<rel>on|in|inside|from|at)\s+(?:top of\s+)?(?P<place>.+)$")


@dataclass(frozen=True)
class GroundingResult:
    """``status`` is "ok" (``target`` is a map instance id or room name), "ambiguous" or "unknown";
    ``candidates`` are up to five descriptions; ``message`` says what to do next."""

    status: str
    target: str | None
    message: str
    candidates: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class MapGrounder:
    """Finds the map instance a phrase refers to, using the shared Grounder for names and categories."""

    def __init__(self, smap: SemanticMap, aliases: Mapping[str, str] | None = None,
                 embedder: TextEmbedder | None = SHARED_EMBEDDER) -> None:
        self.map = smap
        self.grounder = Grounder(aliases, embedder)
        self.embedder = embedder

    def ground(self, phrase: str) -> GroundingResult:
        """Resolve a phrase to one instance or room, or say why not."""
        words = [w for w in words_of(phrase.replace("_", " ")) if w not in FILLER]
        if not words:
            return GroundingResult("unknown", None, f"'{phrase}' names nothing; name an object, a piece of furniture or a room.")
        key = "_".join(words)
        rooms = {r.name: r for r in self.map.rooms}
        if key in self.map and not self.map.get(key).stale:
            return GroundingResult("ok", key, f"'{phrase}' is {self.map.description(self.map.get(key))}.")
        if key in rooms:
            return GroundingResult("ok", key, f"'{phrase}' is a room.")
        text = " ".join(words)
        m = _RELATION.match(text)
        place = None
        if m and m.group("head") and m.group("place"):
            inner = self.ground(m.group("place"))
            if inner.ok:
                place = inner.target
                words = [w for w in words_of(m.group("head")) if w not in FILLER]
        cands = self._candidates(words, place)
        if isinstance(cands, GroundingResult):
            return cands
        if len(cands) == 1:
            return GroundingResult("ok", cands[0].id, f"'{phrase}' is {self.map.description(cands[0])}.")
        descr = tuple(self.map.description(c) for c in cands[:5])
        if cands:
            return GroundingResult("ambiguous", None, f"'{phrase}' matches {len(cands)} things: {'; '.join(descr)}. "
                                   "Name one by its id or say where it is (e.g. 'the can on the table').", descr)
        return self._unknown(phrase, words)

    def _candidates(self, words: list[str], place: str | None) -> list[MapInstance] | GroundingResult:
        colours = [w for w in words if w in COLOUR_WORDS]
        colours = ["gray" if c == "grey" else c for c in colours]
        sizes = [SIZE_WORDS[w] for w in words if w in SIZE_WORDS]
        rooms = {r.name for r in self.map.rooms}
        room_words = [r for r in rooms if set(words_of(r)) <= set(words) and len(words) > len(words_of(r))]
        head = [w for w in words if w not in COLOUR_WORDS and w not in SIZE_WORDS and w not in {"grey"}]
        for r in room_words:  # "kitchen cabinet": the room narrows, the rest names the thing
            head = [w for w in head if w not in words_of(r)] or head
        insts = self.map.instances()
        labels = sorted({i.label for i in insts})
        matched = self.grounder.category_matches(" ".join(head), labels, LABEL_GROUP) if head else []
        if not matched and head:  # aliases and id-like names ("green_can") through the shared grounder
            known = {i.id: i.label for i in insts}
            ids = self.grounder.ground(" ".join(head), known)
            matched = sorted({known[i] for i in ids})
        if not matched:
            return []
        exact = [lab for lab in matched if lab == "_".join(head)] or matched
        pool = [i for i in insts if i.label in exact]
        if place is not None:
            if place in rooms:
                pool = [i for i in pool if i.room == place]
            else:
                pool = [i for i in pool if i.support == place]
        if room_words:
            pool = [i for i in pool if i.room in room_words] or pool
        if colours:
            coloured = [i for i in pool if i.colour in colours]
            if coloured or len(pool) != 1:  # one thing of that kind: colour estimates may be off
                pool = coloured
        if sizes and len(pool) > 1:
            vol = sorted(pool, key=lambda i: float(i.extent.prod()), reverse=sizes[0] > 0)
            pool = vol[:1]
        return pool

    def _unknown(self, phrase: str, words: list[str]) -> GroundingResult:
        insts = self.map.instances()
        if not insts:
            return GroundingResult("unknown", None, f"'{phrase}' matches nothing: no object has been seen yet; explore first.")
        text = " ".join(words)
        embedder = self.embedder
        if embedder is not None:
            scored = sorted(insts, key=lambda i: -embedder.similarity(text, i.phrase()))
        else:
            scored = insts
        descr = tuple(self.map.description(i) for i in scored[:5])
        return GroundingResult("unknown", None, f"'{phrase}' matches no object seen so far; seen: {'; '.join(descr)}. "
                               "Pick one of these or explore another room.", descr)
