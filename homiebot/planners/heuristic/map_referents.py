"""What an instruction phrase names among the semantic map's instances (mapped perception): by category
(name or group), room words and colour, the usual room of furniture breaking ties; and where to look for a
thing the user said is at a place."""

from __future__ import annotations

from collections.abc import Collection

from homiebot.core.vocabulary import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.perception.grounding import COLOUR_WORDS, Grounder, words_of

from .episode import Episode
from .words import GROUPS, ROOM_WORDS, USUAL_ROOMS


class MapReferents:
    """Grounds phrases to map instance ids (``can_1``) from their categories, colours and rooms."""

    def __init__(self, episode: Episode) -> None:
        self.ep = episode

    def ground(self, phrase: str, kinds: Collection[str]) -> str | None:
        """Map instance for an instruction phrase: category by name or group, then colour; a thing of
        another colour is accepted only when no room is left to explore."""
        found = self.candidates(phrase, kinds)
        return found[0] if found else None

    def candidates(self, phrase: str, kinds: Collection[str]) -> list[str]:
        """Every map instance a phrase may name, best first (``ground`` takes the first)."""
        m = self.ep.mem
        grounder = self.ep.grounder
        pool = {n: c for n, c in m.of(kinds).items() if n not in m.given_up}
        key = "_".join(words_of(phrase))
        if key in pool:
            return [key]
        if grounder.aliases.get(key) in pool:
            return [grounder.aliases[key]]
        words = words_of(phrase.replace("_", " "))
        colours = {"gray" if w == "grey" else w for w in words if w in COLOUR_WORDS}
        toks = [w for w in words if w not in ("the", "a", "an", "my", "one", "some")]
        kept = [w for w in toks if w not in COLOUR_WORDS]
        if not kept and toks:  # "the orange orange": the last colour word is the thing itself
            kept, colours = toks[-1:], {"gray" if w == "grey" else w for w in toks[:-1]}
        head = " ".join(kept)
        if not head:
            return []
        unexplored = any(c == "room" and n not in m.rooms_visited for n, c in m.known.items())
        labels = sorted(set(pool.values()))
        # by name or group first; similar categories ("drawer" ~ "cabinet") only once every room was explored
        cats = Grounder(None, None).category_matches(head, labels, GROUPS)
        if not cats and not unexplored:
            cats = grounder.category_matches(head, labels, GROUPS)
        cands = sorted(n for n, c in pool.items() if c in cats)
        # "dining room table": a table, in the dining room (a room word of the type's own name, "kitchen counter", is not a room)
        rooms_said = set(kept) & ROOM_WORDS - {w for c in cats for w in c.split("_")}
        if rooms_said:  # the room the phrase names: only what the map has standing (or lying) there
            cands = [n for n in cands if rooms_said <= set(words_of(m.map_room.get(n, "")))]
        if colours:
            strict = [n for n in cands if m.colour.get(n) in colours]
            cands = strict if strict or unexplored or len(cands) != 1 else cands
        return sorted(cands, key=lambda n: (self.usual_rank(n), n))

    def usual_rank(self, name: str) -> int:
        """How usual the room the map has a piece of furniture in is for its type (``USUAL_ROOMS``, 0: the
        usual one): of several that fit a phrase equally, a person most likely means the one where such
        furniture usually stands. Things with no usual room rank alike."""
        m = self.ep.mem
        usual = USUAL_ROOMS.get(m.known.get(name, ""), ())
        room = set(words_of(m.map_room.get(name, "")))
        return next((i for i, r in enumerate(usual) if r in room), len(usual))

    def object(self, phrase: str, head: str, where: str) -> str | None:
        """The map instance a phrase names. With a place said ("the mug on the tv stand", "... in the
        bathroom": the person's word on where it went) the one the map has resting there; none there: None
        until that place was looked at (``SaidPlaces.look``), then the one the map saw elsewhere."""
        if not where:
            return self.ground(head, OBJECT_CLASSES)
        there = [c for c in self.candidates(head, OBJECT_CLASSES) if self.rests_at(c, where)]
        if there:
            return there[0]
        if phrase not in self.ep.mem.said_done:
            return None
        return self.ground(head, OBJECT_CLASSES)

    def rests_at(self, obj: str, where: str) -> bool:
        """Whether the map has a thing in the room a phrase names, or on or in furniture the phrase fits."""
        m = self.ep.mem
        if obj == m.held and obj not in m.picked_from:
            return False
        support = m.picked_from.get(obj) or m.support.get(obj)
        room = m.room_named(where)
        if room is not None:
            return (m.map_room.get(support) if support else m.map_room.get(obj)) == room
        return support is not None and support in self.said_places(where)

    def said_places(self, where: str) -> list[str]:
        """Where to look for a thing said to be at ``where``, nearest first: the furniture the phrase fits,
        or in a room the furniture the map has there (surfaces before containers)."""
        m = self.ep.mem
        if m.said_at.get(where):  # as first taken: the map's colour of a piece may change as it is seen closer
            return m.said_at[where]
        room = m.room_named(where)
        if room is not None:
            places = [n for n in m.of(RECEPTACLE_TYPES) if m.map_room.get(n) == room]
        else:
            places = self.candidates(where, RECEPTACLE_TYPES)

        def far(n: str) -> float:
            xy = m.map_xy.get(n)
            return (xy[0] - m.robot_xy[0]) ** 2 + (xy[1] - m.robot_xy[1]) ** 2 if xy and m.robot_xy else 0.0
        m.said_at[where] = sorted(places, key=lambda n: (m.closable(n), far(n), n))
        return m.said_at[where]
