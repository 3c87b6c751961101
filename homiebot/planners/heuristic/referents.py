"""What a phrase of the instruction names among the things known: strictly (a phrase naming a class or
furniture type means only things of that type, its colour and room words must be in the name, and a plain
type name is not taken for a room-named one while rooms remain unseen), and by where the user said a thing
is. With mapped perception the map's instances are grounded instead (``map_referents.py``)."""

from __future__ import annotations

import re
from collections.abc import Collection

from homiebot.core.vocabulary import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.perception.grounding import COLOUR_WORDS, singular, words_of

from .episode import Episode
from .map_referents import MapReferents
from .searching import Search
from .words import ARTICLES, GROUPS, ROOM_WORDS, class_of


class Referents:
    """Grounds object, receptacle and place phrases to known names (None: not known yet)."""

    def __init__(self, episode: Episode, on_map: MapReferents, search: Search) -> None:
        self.ep = episode
        self.on_map = on_map
        self.search = search  # whether the search is complete decides how strictly a said place holds

    def object(self, phrase: str, going_to: str | None = None) -> str | None:
        """The known object a phrase names ("the green can", "the mug on the tv stand", "the purple thing").
        ``going_to``: where it is to be put; of several that fit, one already there by itself is the last
        choice (nobody asks for the candle that is on the shelf to be put on the shelf)."""
        m = self.ep.mem
        head, _, where = re.split(r"\s+(on|from|off|by|in|near|inside|out of)\s+(?:the\s+)?", phrase, maxsplit=1) + ["", ""][:0] \
            if re.search(r"\s(?:on|from|off|by|in|near|inside|out of)\s", phrase) else (phrase, "", "")
        if m.mapped:
            return self.on_map.object(phrase, head, where)
        colours = [w for w in words_of(head) if w in COLOUR_WORDS]
        rest = set(words_of(head)) - set(colours) - set(ARTICLES)
        by_colour = bool(colours) and bool(rest) and rest <= {"thing", "one", "item", "object", "stuff"}
        if by_colour:  # "the purple thing": whatever of that colour, where the user says it is
            found = sorted(n for n in m.of(OBJECT_CLASSES) if set(colours) <= set(words_of(n)) and n not in m.given_up)
        else:
            found = self.strict(head, self.ep.grounder.ground(head, m.of(OBJECT_CLASSES)), OBJECT_CLASSES)
        if where:  # "the mug on the tv stand": the one resting there
            there = [f for f in found if self.rests_at(f, where)]
            # with someone to ask, the place comes from a person's answer: one seen resting elsewhere is another one
            elsewhere = [f for f in found if f not in there and (m.picked_from.get(f) or m.support.get(f))] \
                if self.ep.can_ask else []
            if there or (by_colour and not self.search.done(phrase)):
                found = there
            elif elsewhere and not self.search.done(phrase):
                found = [f for f in found if f not in elsewhere]
        if going_to is not None and len(found) > 1:
            moved = [f for f in found if (f, going_to) in m.done]  # the one this episode took there stays the one
            away = [f for f in found if m.support.get(f) != going_to]
            found = moved or away or found
        return found[0] if found else None

    def rests_at(self, obj: str, where: str) -> bool:
        """Whether a thing was seen on or in the place a phrase names (a piece of furniture, or a room)."""
        m = self.ep.mem
        support = m.picked_from.get(obj) or m.support.get(obj)  # where the user saw it: before this robot moved it
        if support is None:
            return False
        room = "_".join(w for w in words_of(where) if w not in ARTICLES)
        if room in {n for n, c in m.known.items() if c == "room"}:
            return m.room_of.get(support) == room or room.split("_")[0] in words_of(support)
        return support == self.receptacle(where)

    def receptacle(self, phrase: str) -> str | None:
        """The known receptacle a phrase names."""
        if self.ep.mem.mapped:
            return self.on_map.ground(phrase, RECEPTACLE_TYPES)
        known = self.ep.mem.of(RECEPTACLE_TYPES)
        found = self.ep.grounder.ground(phrase, known)
        ws = {singular(w) for w in words_of(phrase)}
        if ws & ROOM_WORDS:  # "the dining room shelf": every shelf is a candidate (the white one too); the room decides
            found = found + sorted(n for n, t in known.items() if set(t.split("_")) <= ws and n not in found)
        found = self.strict(phrase, found, RECEPTACLE_TYPES)
        return found[0] if found else None

    def strict(self, phrase: str, found: list[str], kinds: Collection[str]) -> list[str]:
        """Keep the grounder's candidates that can be what the phrase says. An exact name or alias stands;
        otherwise a phrase naming a class or furniture type ("banana", "desk") means only things of that
        type (not a green apple for "green banana", not the brown shelf for "brown desk"), a room word
        ("bedroom chair") must be in the name, and a name with a room word the phrase lacks (the
        bathroom sink for "the sink") is taken only once no room is left to explore."""
        m = self.ep.mem
        aliases = self.ep.grounder.aliases
        ws = [singular(w) for w in words_of(phrase) if w not in ARTICLES]
        key = "_".join(ws)
        if not found or found[0] == key or aliases.get(key) == found[0] or aliases.get(
                "_".join(w for w in words_of(phrase) if w not in ARTICLES)) == found[0]:
            return found
        named = sorted((c for c in kinds if set(c.split("_")) <= set(ws)), key=lambda c: -len(c.split("_")))
        cat = set(named[0].split("_")) if named else set()
        rooms = (set(ws) - cat) & ROOM_WORDS
        typed = [n for n in found if not cat or cat <= set(m.known.get(n, "").split("_"))]
        fit = [n for n in typed if rooms <= set(words_of(n)) or rooms <= set(words_of(m.room_of.get(n, "")))]
        plain = [n for n in fit if not (set(words_of(n)) - cat - rooms) & ROOM_WORDS]
        if plain or m.unvisited_rooms():
            return plain
        if rooms and not fit:  # every room seen, none showed this furniture standing in the room named: the unplaced ones
            unplaced = [n for n in typed if n not in m.room_of and not (set(words_of(n)) - cat) & ROOM_WORDS]
            other = [n for n in typed if (set(words_of(n)) - cat - rooms) & ROOM_WORDS]  # it names another room
            return unplaced or (typed if len(typed) == 1 and not other else [])
        return fit

    def place(self, phrase: str) -> str | None:
        """What a phrase to go to names: a room ('the living room'), an object ('the green can') or a receptacle."""
        ws = [w for w in words_of(phrase) if w not in ARTICLES]
        room = self.ep.mem.room_named(phrase, skip=self.ep.mem.banned)
        if room is not None:
            return room
        key = "_".join(ws)
        if key in ("room", "") or not set(ws) - ROOM_WORDS - {"room"}:  # a room not seen yet
            return None
        if class_of(phrase) is not None:
            return self.object(phrase)
        return self.receptacle(phrase) or self.object(phrase)

    def of_kind(self, kind: str) -> list[str]:
        """Every known object of a kind ("fruit", "mug"), but those given up on."""
        m = self.ep.mem
        cats = self.ep.grounder.category_matches(kind, sorted(OBJECT_CLASSES), GROUPS)
        return sorted(n for n, c in m.of(OBJECT_CLASSES).items() if c in cats and n not in m.given_up)
