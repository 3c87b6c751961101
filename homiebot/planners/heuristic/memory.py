"""What the heuristic planner knows of the home in one episode, and the questions answered from that alone
(what kind a name is, which rooms are unvisited, which containers were not looked into...)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from homiebot.core.vocabulary import RECEPTACLE_TYPES
from homiebot.perception.grounding import words_of
from homiebot.planners.candidates import Thing, things_from

from .words import ARTICLES


@dataclass
class Memory:
    """Names seen (or mapped) with their categories, where things rest, and what the robot did and found."""

    known: dict[str, str] = field(default_factory=dict)  # name -> category
    support: dict[str, str | None] = field(default_factory=dict)  # object -> receptacle it rests on/in
    rooms_visited: set[str] = field(default_factory=set)
    opened: set[str] = field(default_factory=set)
    searched: set[str] = field(default_factory=set)  # containers opened only to look inside
    inspected: set[str] = field(default_factory=set)  # receptacles the robot has stood next to
    forgotten: set[str] = field(default_factory=set)  # names the detector rejected (F2)
    banned: set[str] = field(default_factory=set)  # names a safety rule or the operator forbade (S1, S2)
    given_up: set[str] = field(default_factory=set)  # objects that failed too often
    near: str | None = None
    held: str | None = None
    done: set[tuple[str, str]] = field(default_factory=set)  # (object, receptacle) put successfully
    checked: dict[int, bool] = field(default_factory=dict)  # goal index -> result of a look inside
    fails: dict[str, list[str]] = field(default_factory=dict)  # subtask text -> models that failed it
    inapplicable: dict[str, str] = field(default_factory=dict)  # subtask text -> why it does not apply (L4)
    mapped: bool = False  # knowledge comes from the semantic map's summary
    colour: dict[str, str | None] = field(default_factory=dict)  # map instance id -> estimated colour
    robot_room: str | None = None
    glimpsed: set[str] = field(default_factory=set)  # surfaces seen from close enough to see small things on them
    looked: set[str] = field(default_factory=set)  # places the user said a thing is, checked (reached, opened)
    guessed: dict[str, str] = field(default_factory=dict)  # names tried from the user's words -> their class
    room_of: dict[str, str] = field(default_factory=dict)  # furniture -> the room whose floor it was seen standing on
    shut: set[str] = field(default_factory=set)  # containers this robot closed (their state is otherwise unseen)
    picked_from: dict[str, str] = field(default_factory=dict)  # thing -> where it was when this robot picked it up
    map_room: dict[str, str] = field(default_factory=dict)  # map instance id -> the room of the floor plan it is in
    map_xy: dict[str, tuple[float, float]] = field(default_factory=dict)  # map instance id -> where the map has it
    robot_xy: tuple[float, float] | None = None  # where the map has the robot
    said_done: set[str] = field(default_factory=set)  # phrases whose said place was looked at without finding the thing
    said_at: dict[str, list[str]] = field(default_factory=dict)  # a place said -> the map's furniture it was taken for
    reached: set[tuple[str, str]] = field(default_factory=set)  # (map object, place): reached for it there once
    sighted: dict[str, tuple[int, float]] = field(default_factory=dict)  # furniture -> (round last seen, its depth then)

    def kind(self, name: str | None) -> str:
        """'room', 'receptacle' or 'object' (what is not known counts as an object)."""
        cat = self.known.get(name or "")
        if cat == "room":
            return "room"
        return "receptacle" if cat in RECEPTACLE_TYPES else "object"

    def of(self, kinds: Collection[str]) -> dict[str, str]:
        """Known names (not banned) whose category is one of ``kinds``, with their categories."""
        return {n: c for n, c in self.known.items() if c in kinds and n not in self.banned}

    def closable(self, rec: str) -> bool:
        """Whether a known receptacle has a door or lid."""
        t = RECEPTACLE_TYPES.get(self.known.get(rec, ""))
        return bool(t and t.articulated)

    def unvisited_rooms(self) -> list[str]:
        """Rooms known but not visited yet."""
        return [n for n, c in self.known.items() if c == "room" and n not in self.rooms_visited]

    def unsearched_boxes(self) -> list[str]:
        """Containers that can be opened and were neither opened nor looked into, by name."""
        return sorted(n for n in self.of(RECEPTACLE_TYPES) if self.closable(n) and n not in self.opened and n not in self.searched)

    def on(self, rec: str) -> list[str]:
        """What rests on or in a receptacle, but for what the robot holds."""
        return sorted(o for o, r in self.support.items() if r == rec and o != self.held)

    def basins(self) -> list[str]:
        """Open containers (sinks) not yet looked into from close by: what lies low in them shows only from there."""
        return sorted(n for n, c in self.of(RECEPTACLE_TYPES).items() if RECEPTACLE_TYPES[c].relation == "in"
                      and not RECEPTACLE_TYPES[c].articulated and n not in self.inspected)

    def room_named(self, phrase: str, skip: Collection[str] = ()) -> str | None:
        """The known room a phrase names ("the living room", "kitchen"), or None; rooms in ``skip`` are not named."""
        key = "_".join(w for w in words_of(phrase) if w not in ARTICLES)
        rooms = {n for n, c in self.known.items() if c == "room" and n not in skip}
        return key if key in rooms else f"{key}_room" if f"{key}_room" in rooms else None

    def known_things(self) -> dict[str, Thing]:
        """What is known of every thing seen or mapped, for matching phrases and answers."""
        return things_from({n: c for n, c in self.known.items() if n not in self.banned and n not in self.given_up},
                           {**self.support, **self.picked_from}, self.room_of, self.colour if self.mapped else None)
