"""Handing things to a person, for the heuristic planner: perception and words only, no privileged state.

An instruction that asks for something to be brought to the speaker or to a named person ("bring me my
white mug, I'll be in the bathroom", "give the red book to mum") is read as two parts: fetching the
object, which the heuristic planner does as for "fetch the white mug", and handing it over, done here:

* a person in view (``Observation.people``) within reach is given the object; one farther away is
  followed (``[Follow, person]``), which leaves the robot beside them;
* nobody in view: go to the room the instruction says they will be in, else where they were last seen,
  else rooms not visited yet, one by one; arriving there shows them in the next round's views.

After a successful Give the task is done (End).

A remark on where a moved object is ("put the red book on the sofa; I left it on the brown table", or "...;
I took it along when I washed my face") becomes the place the fetching part searches first: the
instruction is read as "put the red book on the brown table onto the sofa" ("... in the bathroom ...").
Activities stand for rooms by common sense (``ACTIVITY_ROOMS``): washing one's face, the bathroom;
watching tv, the living room; and so on. A person's words about what they will be doing name the room
they go to the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from homiebot.core.contracts import Action, ErrorCode, PersonSeen, Subtask
from homiebot.perception.grounding import words_of
from homiebot.planners.base import ModelInfo, PlannerRequest

ACTIVITY_ROOMS = (  # (words of an activity, the room it usually happens in)
    (r"wash(?:ed|ing)? my face|brush(?:ed|ing)? my teeth|(?:took|taking|take) a shower", "bathroom"),
    (r"watch(?:ed|ing)? tv|watch(?:ed|ing)? a film", "living room"),
    (r"(?:getting|got|get) ready for bed|going to sleep|went to bed", "bedroom"),
    (r"cook(?:ed|ing)?|making (?:some )?tea|made (?:some )?tea", "kitchen"),
    (r"(?:having|had|at) dinner", "dining room"),
    (r"work(?:ed|ing)?(?: for a while)?\b", "office"),
)
GIVE_GAP = 1.2  # hand over from at most this gap (metres): the privileged hand-over reaches about 1.3 m
MIN_GAP = 0.1  # the detector's D2 below this
_WHO = r"(?:me|us|him|her|them|mum|mom|dad|(?:the\s+)?person)"
_TO_WHO = re.compile(r"^(?:please\s+)?(?:can you\s+)?(?:bring|give|hand|take|fetch|get)\s+(?P<obj>.+?)\s+(?:back\s+)?to\s+"
                     + _WHO + r"\b", re.IGNORECASE)
_WHO_FIRST = re.compile(r"^(?:please\s+)?(?:can you\s+)?(?:bring|give|hand|fetch|get)\s+(?:me|us)\s+(?P<obj>[^,.;!?]+)",
                        re.IGNORECASE)
_WHERE = re.compile(r"\b(?:be|am|i'm|will be|i'll be|is|going|go|heading)\s+(?:in|to|into)\s+the\s+(?P<room>[a-z ]+?)\b"
                    r"(?:[,.;!?]|$|\s+(?:washing|getting|to|and|for|reading|sleeping|cooking))", re.IGNORECASE)


@dataclass
class HandOver:
    """What to hand over (the phrase the fetch part grounds) and what is known about the person."""

    thing: str
    said_room: str | None = None  # a room word from the instruction ("bathroom", "living room")
    last_seen: PersonSeen | None = None
    visited: set[str] = field(default_factory=set)  # rooms gone to while looking for the person
    given: bool = False

    @property
    def instruction(self) -> str:
        """The fetch part, in a form the heuristic planner reads ("fetch the white mug")."""
        return f"fetch the {self.thing}"


def read_hand_over(instruction: str) -> HandOver | None:
    """The hand-over an instruction asks for, or None when it asks for something else (read it only for
    tasks with a person: "bring me the apple" is a plain fetch in a home where nobody is)."""
    text = instruction.strip()
    first = text.split(",")[0].split(";")[0]
    match = _TO_WHO.match(first) or _WHO_FIRST.match(first)
    if match is None:
        return None
    thing = " ".join(w for w in words_of(match["obj"]) if w not in ("the", "my", "a", "an", "our", "your", "some"))
    if not thing:
        return None
    where = _WHERE.search(text)
    return HandOver(thing, where["room"].strip().lower() if where else activity_room(text))


def activity_room(text: str) -> str | None:
    """The room an activity the text mentions usually happens in ("washing my face": bathroom), or None."""
    return next((room for words, room in ACTIVITY_ROOMS if re.search(words, text, re.IGNORECASE)), None)


_MOVE = re.compile(r"^(?P<verb>(?:please\s+)?(?:put|place|move|take|bring))\s+the\s+(?P<obj>.+?)\s+"
                   r"(?P<rel>in|into|inside|on|onto|to)\s+the\s+(?P<dest>[^;.]+)$", re.IGNORECASE)
_LEFT_ON = re.compile(r"\b(?:left|put|moved|placed|dropped)\s+it\s+(?P<rel>on|in|into|onto|by)\s+the\s+(?P<place>[a-z ]+)",
                      re.IGNORECASE)


def situate_remark(instruction: str) -> str | None:
    """The instruction with the remark about a moved object folded in as the place to search first, or None
    when it has no such remark: "put the X onto the Y; I left it on the Z" -> "put the X on the Z onto the Y"."""
    head, sep, remark = instruction.partition(";")
    if not sep:
        head, sep, remark = instruction.partition(". ")
    match = _MOVE.match(head.strip())
    if not sep or match is None:
        return None
    left = _LEFT_ON.search(remark)
    if left is not None:
        where = f"{'in' if left['rel'] in ('in', 'into') else 'on'} the {left['place'].strip()}"
    elif (room := activity_room(remark)) is not None:
        where = f"in the {room}"
    else:
        return None
    return f"{match['verb']} the {match['obj']} {where} {match['rel']} the {match['dest'].strip()}"


def hand_over_step(h: HandOver, request: PlannerRequest, held: str | None, fetched: bool, rooms: list[str],
                   models: list[ModelInfo], robot_room: str | None) -> tuple[Subtask, str] | None:
    """The next step of handing ``held`` over, or None while the fetching part is still under way (``fetched``
    False: the planner's own step stands).

    ``rooms`` are the rooms the planner knows (seen floors), ``robot_room`` where the robot stands."""
    fb = request.feedback
    if fb is not None and fb.success and _last_action(request) == Action.GIVE.value:
        h.given = True
    if h.given:
        return Subtask(action=Action.END), "I handed the object over; the task is done"
    if held is None or not fetched:
        return None
    seen = request.observation.people if request.observation is not None else []
    if seen:
        h.last_seen = seen[0]
    person = seen[0] if seen else None
    if person is not None and fb is not None and fb.code in (ErrorCode.D1, ErrorCode.E1) and _last_action(request) == "Give":
        return _keep_up(person, held, models, "the hand-over failed")
    if person is not None:
        if MIN_GAP <= person.distance <= GIVE_GAP:
            return (Subtask(action=Action.GIVE, target=held, place=person.name),
                    f"the {person.name} is {person.distance:.1f} m away: I hand over the {held}")
        return _keep_up(person, held, models, f"the {person.name} is {person.distance:.1f} m away")
    if robot_room is not None:
        h.visited.add(robot_room)
    for room in _search_order(h, rooms):
        if room != robot_room and room not in h.visited:
            h.visited.add(room)  # looked for there once: after this step the person is in view, or elsewhere
            return Subtask(action=Action.GO_TO, target=room), f"I hold the {held} and look for the person in the {room}"
    return Subtask(action=Action.END), f"I hold the {held} but found nobody to give it to"


def _keep_up(person: PersonSeen, held: str, models: list[ModelInfo], why: str) -> tuple[Subtask, str]:
    if any(Action.FOLLOW.value in m.actions for m in models):
        return Subtask(action=Action.FOLLOW, target=person.name), f"{why}; I follow them to hand over the {held}"
    return Subtask(action=Action.GO_TO, target=person.name), f"{why}; I go to them with the {held}"


def _search_order(h: HandOver, rooms: list[str]) -> list[str]:
    """Rooms to look for the person in: the one they said, then where they were last seen, then the rest."""
    said = [r for r in rooms if h.said_room and set(words_of(h.said_room)) <= set(words_of(r.replace("_", " ")))]
    if h.said_room and not said:  # a room not seen yet, by the name the person gave it
        said = ["_".join(words_of(h.said_room))]
    last = [h.last_seen.room] if h.last_seen is not None and h.last_seen.room in rooms else []
    return [*said, *last, *sorted(rooms)]


def _last_action(request: PlannerRequest) -> str | None:
    """The action of the previous round, from the history line "(n) [Action, ...] ..."."""
    if not request.history:
        return None
    match = re.search(r"\[([A-Za-z ]+?)[,\]]", request.history[-1])
    return match.group(1) if match else None
