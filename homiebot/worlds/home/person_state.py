"""The person's data in the embedded home: their timed plan (``Leg``) and their moving state.

Kept apart from ``person`` (how time moves them) so that the home's state model can hold a person
without importing the code that plays their script.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PERSON_RADIUS = 0.25  # plan-view footprint, for start-pose checks
CARRIED = "person"  # ObjectLocation.relation of an object the person holds


@dataclass(frozen=True)
class Leg:
    """One timed piece of the plan: a walk along ``points``, a pick, a place, or words said."""

    step: int  # the script step (1-based) this leg belongs to
    kind: str  # walk | pick | place | say
    start: float
    end: float
    target: str = ""  # the object picked, the receptacle placed on, the words said, where a walk goes
    points: tuple[tuple[float, float], ...] = ()


@dataclass
class PersonState:
    """Where the person is and what they did; JSON through ``as_json`` / ``from_json``."""

    name: str
    x: float
    y: float
    yaw: float  # radians
    held: str | None = None
    clock: float = 0.0  # seconds of the person's time played so far
    next_leg: int = 0  # index of the first leg of the plan not finished yet
    walked: float = 0.0  # metres walked so far (drives the gait)
    moving: bool = False  # in the middle of a walk
    said: list[tuple[float, str]] = field(default_factory=list)  # (when, words)
    events: list[str] = field(default_factory=list)  # what happened, in words, with the time

    def as_json(self) -> dict:
        """The person's state as plain JSON values."""
        return {"name": self.name, "pose": [self.x, self.y, self.yaw], "held": self.held, "clock": self.clock,
                "next_leg": self.next_leg, "walked": self.walked, "moving": self.moving,
                "said": [[t, w] for t, w in self.said], "events": list(self.events)}

    @classmethod
    def from_json(cls, data: dict) -> PersonState:
        """The person's state from what ``as_json`` wrote."""
        x, y, yaw = data["pose"]
        return cls(data["name"], x, y, yaw, data.get("held"), float(data.get("clock", 0.0)), int(data.get("next_leg", 0)),
                   float(data.get("walked", 0.0)), bool(data.get("moving", False)),
                   [(float(t), str(w)) for t, w in data.get("said", [])], list(data.get("events", [])))
