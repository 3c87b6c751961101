"""The concrete things and destinations a Move goal means: the objects its phrases or kind name (looking
where the user said first, exploring for those not seen), and where they go (the receptacle named, somewhere
in a room, or a container that closes)."""

from __future__ import annotations

from homiebot.core.vocabulary import RECEPTACLE_TYPES
from homiebot.planners.instructions import Move, Things

from .episode import Episode
from .referents import Referents
from .said_places import SaidPlaces
from .searching import Search


class Targets:
    """Names the objects and the receptacle of a Move goal; explores (raises) for what is not known yet."""

    def __init__(self, episode: Episode, referents: Referents, said: SaidPlaces, search: Search) -> None:
        self.ep = episode
        self.referents = referents
        self.said = said
        self.search = search

    def things(self, things: Things, dest: str | None) -> list[str]:
        """Concrete objects for a Things description (exploring when they are not known yet)."""
        m = self.ep.mem
        if things.names:
            found = []
            for phrase in things.names:
                obj = self.referents.object(phrase, going_to=dest)
                if obj is None:
                    self.said.look(phrase)
                    obj = self.referents.object(phrase, going_to=dest) if m.mapped else None  # looked there: where the map saw it
                if obj is None:
                    self.search.explore(phrase)
                found.append(obj)
            return found
        assert things.kind is not None and things.count is not None
        pool = [o for o in self.referents.of_kind(things.kind) if m.support.get(o) != dest or (o, dest) in m.done]
        placed = [o for o in pool if (o, dest) in m.done]
        pool = placed + [o for o in pool if o not in placed]
        if len(pool) < things.count:
            self.search.explore(things.kind)
        return pool[: things.count]

    def dest(self, goal: Move, obj: str | None = None) -> str:
        """Where ``obj`` goes for ``goal``: the receptacle named, a place in the room named, else a container that closes."""
        m = self.ep.mem
        if goal.dest_kind == "room" and goal.dest is not None:
            return self.room_dest(goal.dest, obj)
        if goal.dest is not None:
            dest = self.referents.receptacle(goal.dest)
            if dest is None:
                self.search.explore(goal.dest)
            return dest
        placed = m.support.get(obj or "")
        if placed is not None and m.closable(placed) and (obj, placed) in m.done:
            return placed  # already put away by us: done (choosing another box would move it back and forth)
        boxes = [n for n in m.of(RECEPTACLE_TYPES) if m.closable(n) and n != placed]
        if not boxes:
            self.search.explore("a container that closes")
        near = [b for b in boxes if b == m.near]
        return (near or sorted(boxes))[0]

    def room_dest(self, room: str, obj: str | None) -> str:
        """Somewhere in a room: a receptacle seen there (map), one already holding the object, or a
        receptacle whose name says the room; else explore the room."""
        m = self.ep.mem
        key = room.replace(" ", "_")
        if obj is not None and m.support.get(obj) and key in (m.support.get(obj) or ""):
            return m.support[obj]  # type: ignore[return-value]
        recs = sorted(n for n in m.of(RECEPTACLE_TYPES))
        named = [r for r in recs if r.startswith(key) or (key == "kitchen" and m.known.get(r) in ("kitchen_counter", "fridge"))
                 or (key == "bedroom" and m.known.get(r) == "bed") or (key == "living_room" and m.known.get(r) in ("sofa", "tv_stand"))
                 or (key == "bathroom" and r.startswith("bathroom"))]
        if named:
            return named[0]
        self.search.explore(room)
