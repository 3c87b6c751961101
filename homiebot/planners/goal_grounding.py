"""Ground an understood instruction in a known scene: phrases -> scene names -> goal conditions.

Used to score the instruction reader against goals written by hand (``benchmarks/bench_people.py``)
and by anything that knows the whole scene or map. A phrase grounds when exactly one thing fits its
words (class or type by word overlap, everyday synonyms, then sentence-embedding similarity; colour;
the place it is said to be on, in or near; the room). Several or none fitting -> ``Unsure``, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from homiebot.people.scene_facts import SceneFacts, words
from homiebot.perception.grounding import COLOUR_WORDS, SHARED_EMBEDDER, TextEmbedder, singular
from homiebot.planners.instructions import Fetch, IfEmpty, Move, Plan, Toggle
from homiebot.planners.understanding import ROOM_WORDS, STOP, SYNONYMS

_LOC = r"\s+(?:on|from|off|by|in|near|next to|at|inside)\s+(?:the\s+)?"


class Unsure(ValueError):
    """A phrase fits no thing or several; the message says which and why."""


@dataclass(frozen=True)
class _Phrase:
    head: list[str]
    colours: set[str]
    where: str | None


def _split(phrase: str) -> _Phrase:
    parts = re.split(_LOC, phrase.strip(), maxsplit=1)
    toks = [w for w in re.findall(r"[a-z]+", parts[0].lower()) if w not in STOP]
    colours = {"gray" if w == "grey" else w for w in toks if w in COLOUR_WORDS}
    head = [singular(w) for w in toks if w not in COLOUR_WORDS]
    if not head and toks:  # "the orange": a colour word that is the thing itself
        head, colours = [toks[-1]], colours - {toks[-1]}
    expanded: list[str] = []
    for w in head:
        expanded += SYNONYMS.get(w, w).split()
    return _Phrase(expanded, colours, parts[1].strip() if len(parts) > 1 else None)


def _score(head: list[str], label: str) -> float:
    lw = words(label).split()
    overlap = len(set(head) & set(lw))
    if not overlap:
        return 0.0
    return overlap - 0.5 * len(set(lw) - set(head)) - 0.5 * len(set(head) - set(lw))


class SceneGrounder:
    """Grounds phrases against one scene's facts."""

    def __init__(self, facts: SceneFacts, embedder: TextEmbedder | None = SHARED_EMBEDDER) -> None:
        self.facts = facts
        self.embedder = embedder

    def _classes(self, head: list[str], labels: set[str]) -> set[str]:
        scored = {lab: _score(head, lab) for lab in labels}
        best = max(scored.values(), default=0.0)
        if best > 0:
            return {lab for lab, s in scored.items() if s == best}
        if self.embedder is not None and head and self.embedder.embed(" ".join(head)) is not None:
            sims = {lab: self.embedder.similarity(" ".join(head), words(lab)) for lab in labels}
            top = max(sims.values(), default=0.0)
            if top >= 0.55:
                return {lab for lab, s in sims.items() if s >= top - 0.02}
        return set()

    def room(self, phrase: str) -> str | None:
        text = " ".join(w for w in re.findall(r"[a-z]+", phrase.lower()) if w not in STOP)
        return next((r for r in self.facts.rooms if words(r) == text), None)

    def receptacle(self, phrase: str) -> str:
        """The one receptacle a phrase names (Unsure otherwise)."""
        p = _split(phrase)
        cands = set(self.facts.receptacle_type)
        if p.where and (room := self.room(p.where)):
            cands = {r for r in cands if self.facts.room_of.get(r) == room}
        text = " ".join(p.head)
        for room in sorted(ROOM_WORDS, key=len, reverse=True):  # "kitchen drawer", "living room cabinet"
            if text.startswith(room + " ") and room.replace(" ", "_") in self.facts.rooms:
                named = [r for r in cands if words(r) == text]
                if named:
                    return named[0]
                cands = {r for r in cands if self.facts.room_of.get(r) == room.replace(" ", "_")}
                text = text[len(room) + 1:]
        exact = [r for r in cands if words(r) == " ".join(sorted(p.colours)) + (" " if p.colours else "") + text
                 or words(r) == text]
        if len(exact) == 1:
            return exact[0]
        types = self._classes(text.split(), {self.facts.receptacle_type[r] for r in cands})
        fits = [r for r in cands if self.facts.receptacle_type[r] in types]
        if p.colours:
            fits = [r for r in fits if self.facts.colour.get(r) in p.colours]
        if len(fits) == 1:
            return fits[0]
        raise Unsure(f"'{phrase}' fits {'no place' if not fits else 'several places: ' + ', '.join(sorted(fits))}")

    def objects(self, phrase: str) -> list[str]:
        """The objects a phrase may mean (class, colour, and the place it is said to be)."""
        p = _split(phrase)
        names = set(self.facts.object_class)
        exact = [n for n in names if words(n) == " ".join([*sorted(p.colours), *p.head])]
        if exact:
            return exact
        classes = self._classes(p.head, set(self.facts.object_class.values()))
        fits = [n for n in names if self.facts.object_class[n] in classes]
        if p.colours:
            fits = [n for n in fits if self.facts.colour.get(n) in p.colours]
        if p.where and len(fits) > 1:
            try:
                rec = self.receptacle(p.where)
                fits = [n for n in fits if self.facts.support.get(n) == rec]
            except Unsure:
                room = self.room(p.where)
                fits = [n for n in fits if room and self.facts.room_of.get(self.facts.support.get(n, "")) == room]
        return sorted(fits)

    def one_object(self, phrase: str) -> str:
        fits = self.objects(phrase)
        if len(fits) != 1:
            raise Unsure(f"'{phrase}' fits {'no object' if not fits else 'several objects: ' + ', '.join(fits)}")
        return fits[0]

    def kind(self, phrase: str) -> str:
        classes = self._classes(_split(phrase).head, set(self.facts.object_class.values()))
        if len(classes) != 1:
            raise Unsure(f"'{phrase}' names no single kind of object")
        return classes.pop()

    def _contents(self, box: str) -> list[str]:
        return [o for o, s in self.facts.support.items() if s == box]

    def conditions(self, plan: Plan) -> list[dict]:
        """Goal conditions (task goal format) for a plan; Unsure when any phrase does not ground."""
        out: list[dict] = []
        for g in plan.goals:
            if isinstance(g, Move):
                if g.dest_kind == "room":
                    room = self.room(g.dest or "")
                    if room is None:
                        raise Unsure(f"'{g.dest}' is not a room here")
                    dest: str | list[str] = sorted(r for r, rm in self.facts.room_of.items() if rm == room)
                elif g.dest is None:
                    raise Unsure("no destination")
                else:
                    dest = self.receptacle(g.dest)
                if g.things.kind is not None:
                    out.append({"kind": "object_at", "object_class": self.kind(g.things.kind), "receptacle": dest})
                for name in g.things.names:
                    out.append({"kind": "object_at", "object": self.one_object(name), "receptacle": dest})
            elif isinstance(g, Toggle):
                out.append({"kind": "container", "receptacle": self.receptacle(g.target), "open": g.open})
            elif isinstance(g, IfEmpty):
                box, other = self.receptacle(g.container), self.receptacle(g.otherwise)
                obj = self.one_object(g.thing)
                out.append({"kind": "object_at", "object": obj, "receptacle": other if self._contents(box) else box})
            elif isinstance(g, Fetch):
                raise Unsure(f"fetching '{g.thing}' has no place to check")
            else:
                raise Unsure(f"'{type(g).__name__}' goals are not grounded here")
        return out


def same_goal(a: list[dict], b: list[dict], facts: SceneFacts) -> bool:
    """Whether two goals ask for the same: each condition's set of objects and set of places agree."""
    def key(c: dict) -> tuple:
        if c["kind"] == "container":
            return ("container", c["receptacle"], c["open"])
        objs = {c["object"]} if c.get("object") else {n for n, k in facts.object_class.items() if k == c["object_class"]}
        recs = c["receptacle"] if isinstance(c["receptacle"], list) else [c["receptacle"]]
        return ("at", tuple(sorted(objs)), tuple(sorted(recs)))
    return sorted(map(repr, map(key, a))) == sorted(map(repr, map(key, b)))
