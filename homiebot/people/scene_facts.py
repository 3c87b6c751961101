"""What a simulated user knows about a home: object classes, colours and supports, receptacle types and
rooms, read from a world's scene description (``World.scene_description()``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

INSIDE_TYPES = {"fridge", "cabinet", "drawer", "sink", "wardrobe", "box", "basket", "bin"}


def words(name: str) -> str:
    """``kitchen_counter`` -> ``kitchen counter``."""
    return name.replace("_", " ")


def tokens(text: str) -> set[str]:
    """The words of a text, lower case, each plural also in its singular (``cans`` -> ``can``)."""
    out = set()
    for w in re.split(r"[^a-z0-9]+", text.lower()):
        if w:
            out.add(w)
            if w.endswith("s") and len(w) > 3:
                out.add(w[:-1])
    return out


@dataclass
class SceneFacts:
    """Names, classes, colours, supports and rooms of one scene."""

    object_class: dict[str, str] = field(default_factory=dict)
    colour: dict[str, str] = field(default_factory=dict)
    support: dict[str, str] = field(default_factory=dict)
    receptacle_type: dict[str, str] = field(default_factory=dict)
    room_of: dict[str, str] = field(default_factory=dict)
    rooms: list[str] = field(default_factory=list)

    @classmethod
    def from_scene(cls, scene: dict[str, Any] | None) -> SceneFacts:
        """Read a scene description; unknown or missing parts are left empty."""
        facts = cls()
        scene = scene or {}
        facts.rooms = [str(r.get("name")) for r in scene.get("rooms", []) if r.get("name")]
        for r in scene.get("receptacles", []):
            facts.receptacle_type[r["name"]] = str(r.get("type", ""))
            facts.room_of[r["name"]] = str(r.get("room", ""))
            if r.get("color"):
                facts.colour[r["name"]] = str(r["color"])
        for o in scene.get("objects", []):
            facts.object_class[o["name"]] = str(o.get("class", ""))
            if o.get("color"):
                facts.colour[o["name"]] = str(o["color"])
            where = o.get("on") or o.get("in")
            if where:
                facts.support[o["name"]] = str(where)
        return facts

    def preposition(self, receptacle: str) -> str:
        """'in' for containers, 'on' for surfaces."""
        return "in" if self.receptacle_type.get(receptacle) in INSIDE_TYPES else "on"

    def describe_object(self, name: str) -> str:
        """'the red mug on the brown desk'."""
        cls = words(self.object_class.get(name, name))
        colour = self.colour.get(name)
        text = f"the {colour + ' ' if colour and colour not in cls else ''}{cls}"
        where = self.support.get(name)
        return f"{text} {self.preposition(where)} the {words(where)}" if where else text

    def same_class(self, name: str) -> list[str]:
        """Objects of ``name``'s class (itself included)."""
        cls = self.object_class.get(name)
        return sorted(n for n, c in self.object_class.items() if c == cls)
