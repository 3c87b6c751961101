"""The person of a scene, as written in scene and task files: where they start and what they do when.

A scene may hold one person. Their script is a list of steps; each step does one thing:

* ``walk: <room | receptacle>`` or ``walk: [x, y]`` - walk there along the home's free floor;
* ``pick: <object>`` - walk to the object and take it in hand (skipped if it is no longer where it was
  put: the robot holds it, or someone moved it out of reach);
* ``place: <receptacle>`` - walk there and put down what they carry;
* ``say: <text>`` - an utterance, heard by whoever listens (kept in the person's state).

A step starts when its ``round`` begins (round 1 is the episode's first) or when the step before it
ends, whichever is later. Steps of round 0 happen before the task, where the robot does not see them
(after the exploration phase, when the task has one): the changes a situated task is about. Names are checked against the scene (``SceneSpec``); that every walk has a
path is checked when the home is built (``homiebot.worlds.home.person``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from homiebot.core.vocabulary import COLORS

STEP_KINDS = ("walk", "pick", "place", "say")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PersonStep(_Strict):
    """One scripted thing the person does."""

    round: int = Field(1, ge=0, description="the round at whose start the step begins, at the earliest; 0: before the "
                                           "task, unseen by the robot")
    walk: str | tuple[float, float] | None = Field(None, description="a room, a receptacle, or a point [x, y]")
    pick: str | None = Field(None, description="an object to take in hand")
    place: str | None = Field(None, description="a receptacle to put the carried object on or in")
    say: str | None = Field(None, description="what the person says")

    @model_validator(mode="after")
    def _one_thing(self) -> PersonStep:
        given = [k for k in STEP_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"a person step does exactly one of {', '.join(STEP_KINDS)}; got {given or 'none'}")
        if self.say is not None and not self.say.strip():
            raise ValueError("'say' needs some words")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in STEP_KINDS if getattr(self, k) is not None)

    @property
    def target(self) -> str | tuple[float, float]:
        value = getattr(self, self.kind)
        assert value is not None
        return value  # type: ignore[no-any-return]


class PersonSpec(_Strict):
    """The person in a scene: name (what a planner calls them), start pose, look, script."""

    name: str = "person"
    position: tuple[float, float] | None = Field(None, description="start (x, y) in metres")
    room: str | None = Field(None, description="start in the free middle of this room instead of at a position")
    yaw: float = Field(0.0, description="degrees")
    color: str = Field("blue", description="the shirt's colour")
    speed: float = Field(1.0, gt=0.2, le=2.0, description="walking speed, metres per second")
    script: list[PersonStep] = []

    @field_validator("color")
    @classmethod
    def _known_color(cls, value: str) -> str:
        if value not in COLORS:
            raise ValueError(f"unknown color '{value}'; known: {', '.join(sorted(COLORS))}")
        return value

    @model_validator(mode="after")
    def _start_and_order(self) -> PersonSpec:
        if (self.position is None) == (self.room is None):
            raise ValueError(f"person '{self.name}' needs exactly one of 'position' or 'room' to start from")
        rounds = [s.round for s in self.script]
        for i in range(1, len(rounds)):
            if rounds[i] < rounds[i - 1]:
                raise ValueError(f"person script step {i + 1} (round {rounds[i]}) comes before step {i} "
                                 f"(round {rounds[i - 1]}); list the steps in time order")
        holding = False
        for i, step in enumerate(self.script, 1):
            if step.pick is not None:
                if holding:
                    raise ValueError(f"person script step {i}: picks '{step.pick}' with the hand full; place first")
                holding = True
            elif step.place is not None:
                if not holding:
                    raise ValueError(f"person script step {i}: places on '{step.place}' with nothing in hand; pick first")
                holding = False
        return self

    def check_names(self, rooms: set[str], receptacles: set[str], objects: set[str]) -> None:
        """Raise ValueError naming the first step (or start) that refers to something the scene lacks."""
        def choices(names: set[str]) -> str:
            return ", ".join(sorted(names)) or "none"

        if self.name in rooms | receptacles | objects:
            raise ValueError(f"the person's name '{self.name}' is already a room, receptacle or object; choose another")
        if self.room is not None and self.room not in rooms:
            raise ValueError(f"person '{self.name}' starts in unknown room '{self.room}'; rooms: {choices(rooms)}")
        for i, step in enumerate(self.script, 1):
            where = f"person script step {i} ({step.kind})"
            if step.walk is not None and isinstance(step.walk, str) and step.walk not in rooms | receptacles:
                raise ValueError(f"{where}: unknown place '{step.walk}'; a room or receptacle: {choices(rooms | receptacles)}")
            if step.pick is not None and step.pick not in objects:
                raise ValueError(f"{where}: unknown object '{step.pick}'; objects: {choices(objects)}")
            if step.place is not None and step.place not in receptacles:
                raise ValueError(f"{where}: unknown receptacle '{step.place}'; receptacles: {choices(receptacles)}")
