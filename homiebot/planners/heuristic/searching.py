"""Searching the home for what is not seen yet: the likeliest unvisited room first, then surfaces not seen
from close by, then closed containers, then surfaces that may still hide it; with nothing left, the End that
reports what was not found (and what of its type was seen instead)."""

from __future__ import annotations

import re
from typing import NoReturn

from homiebot.core.contracts import Action, Subtask
from homiebot.core.vocabulary import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.perception.grounding import singular, words_of

from .acting import Decision, Hands
from .episode import Episode
from .words import ROOM_WORDS, USUAL_ROOMS, class_of

THIN = 0.05  # m: a thing flatter than this may go unseen on a surface that showed rounder small things


class Search:
    """Chooses where to look next for something not seen, and says when the search is complete."""

    def __init__(self, episode: Episode, hands: Hands) -> None:
        self.ep = episode
        self.hands = hands

    def explore(self, what: str, label: str | None = None) -> NoReturn:
        """Go somewhere new to find ``what``: an unvisited room, else inside a closed container;
        End when nothing is left to search. ``label`` names what is sought in the reasons."""
        m = self.ep.mem
        rooms = m.unvisited_rooms()
        # likeliest room first: the one the phrase names, the usual rooms of the furniture it names, then by word similarity
        rooms.sort(key=lambda r: (r != m.robot_room, self.room_rank(what, r), -self.similarity(what, r), r))
        label_of, what = what, label or what
        if rooms and m.mapped and self.ep.can_explore():
            raise Decision(Subtask(action=Action.EXPLORE, target=rooms[0]),
                           f"I have not seen the {what} yet, so I explore the {rooms[0]}")
        if rooms:
            self.hands.go(rooms[0], f"I have not seen the {what} yet, so I explore the {rooms[0]}")
        surfaces = [n for n in m.of(RECEPTACLE_TYPES) if not m.closable(n) and n not in m.inspected]
        surfaces.sort(key=lambda r: (r in m.glimpsed, -self.similarity(what, r), r))
        if surfaces and surfaces[0] not in m.glimpsed:  # small things are only visible from close by
            self.hands.go(surfaces[0], f"the {what} may be on the {surfaces[0]}, too small to see from afar")
        if m.held:
            self.hands.put_down(m.held, f"I need a free hand to look inside containers for the {what}")
        boxes = self.boxes_left()
        if boxes:
            self.hands.act(Action.OPEN, boxes[0], f"the {what} may be inside the {boxes[0]}")
        hiding = [s for s in surfaces if self.may_hide(s, label_of)]
        if hiding:  # seen from close enough already, but something may have been hidden there
            self.hands.go(hiding[0], f"the {what} may be on the {hiding[0]}, hidden when I looked from nearby")
        raise self.missing(label_of or what)

    def done(self, what: str) -> bool:
        """Nothing left to search: every room visited, every surface looked at, every container opened."""
        m = self.ep.mem
        return not m.unvisited_rooms() and not [n for n in m.of(RECEPTACLE_TYPES) if n not in m.inspected and not m.closable(n)
                                                and (n not in m.glimpsed or self.may_hide(n, what))] \
            and not self.boxes_left()

    def boxes_left(self) -> list[str]:
        """Containers still to look into: a door that failed to open is tried once more (another model may manage),
        one the world says cannot open is not."""
        m = self.ep.mem
        opening = {b: Subtask(action=Action.OPEN, target=b).text() for b in m.unsearched_boxes()}
        return [b for b, text in opening.items() if len(m.fails.get(text, [])) < 2 and text not in m.inapplicable]

    def may_hide(self, surface: str, what: str) -> bool:
        """Whether a surface seen from close enough for small things may still hide ``what``: a basin's rim
        hides what lies low in it, and a flat thing (a book, a remote) or one of unknown size needs a closer
        look; furniture and rooms are never hidden on a surface."""
        t = RECEPTACLE_TYPES.get(self.ep.mem.known.get(surface, ""))
        if t is None or (t.relation == "in" and not t.articulated):
            return True
        cls = class_of(what)
        if cls is None:
            ws = {singular(w) for w in words_of(what)}
            return not (ws & ROOM_WORDS or any(set(r.split("_")) <= ws for r in RECEPTACLE_TYPES))
        return OBJECT_CLASSES[cls].size[2] < THIN

    def missing(self, what: str) -> Decision:
        """End, reporting what a complete search did not find (and things of its type that were seen)."""
        noun = re.sub(r"^(?:the|a|an|my|some|any|every|one)\s+", "", what.strip()).replace("another ", "other ")
        msg = f"I could not find the {noun} anywhere in this home: I searched every room, surface and container I can reach"
        seen = self.seen_instead(noun)
        if seen:
            msg += f". I saw {seen}"
        self.ep.report = msg
        return Decision(Subtask(action=Action.END), f"I stop to report: {msg}")

    def seen_instead(self, phrase: str) -> str:
        """Things of the type a phrase names that were seen, with where they are ('green_apple on the kitchen_counter')."""
        m = self.ep.mem
        head = re.split(r"\s(?:on|from|off|by|in|near|inside|out of)\s", phrase, maxsplit=1)[0]  # not the place it was said to be
        ws = {singular(w) for w in words_of(head)}
        kinds = [c for c in (*OBJECT_CLASSES, *RECEPTACLE_TYPES) if set(c.split("_")) <= ws]
        if not kinds:
            return ""
        kind = max(kinds, key=lambda c: len(c.split("_")))
        names = sorted(n for n, c in m.of((kind,)).items())
        said = []
        for n in names[:3]:
            colour = m.colour.get(n) if m.mapped else None
            where = m.support.get(n)
            prep = "in" if where and (m.closable(where) or m.known.get(where) == "sink") else "on"
            said.append(f"{'a ' + colour + ' ' if colour else ''}{n}" + (f" {prep} the {where}" if where else ""))
        return ", ".join(said) + (f" and {len(names) - 3} more" if len(names) > 3 else "")

    def room_rank(self, what: str, room: str) -> int:
        """0: the phrase names this room; 1: the furniture it names usually stands in such a room; 2: nothing
        said either way; 3: the phrase names another room."""
        ws = {singular(w) for w in words_of(what)}
        rwords = set(words_of(room)) & ROOM_WORDS
        said = ws & ROOM_WORDS
        if said:
            return 0 if said & rwords else 3
        types = [t for t in USUAL_ROOMS if set(t.split("_")) <= ws]
        if any(rwords & set(USUAL_ROOMS[t]) for t in types):
            return 1
        return 2

    def similarity(self, a: str, b: str) -> float:
        """How alike two phrases are by sentence embedding (0 without one)."""
        emb = self.ep.grounder.embedder
        return emb.similarity(a, b.replace("_", " ")) if emb is not None else 0.0
