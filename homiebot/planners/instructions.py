"""The instructions the heuristic planner understands, read into small goal records.

Supported forms (case, politeness and filler words such as "hey", "please", "could you", "thanks"
are ignored):

* put / place / move / bring / carry / take / leave / drop X on / onto / in / into / to Y
  (X may be a list "A, B and C", "one of the Xs", "any X", "something to drink"; "from the Z" is ignored)
* take X out of Z and put / leave / set it on Y
* find X  (go next to it)   |  fetch / get / grab X  (pick it up and keep it)
* go / come / walk (over) / head / navigate to X  (X: an object, a piece of furniture or a room)
* open Y / close Y
* clean up / clear (everything off) Y [onto Z]   |   the Y should end up empty
* if there is no X in / on Y, put one there
* if the Y is empty, put X inside it; if not, put it on Z
* every X that is not yet in / on Y belongs there  |  put all (the) Xs on Y
* keep N Xs on Y
* hide X inside something that can be shut
* "..., then close it" / "and make sure both are closed" / "and shut it afterwards" add closing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from homiebot.perception.grounding import singular
from homiebot.planners.phrasing import tidy

NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


class UnsupportedInstruction(ValueError):
    """An instruction outside the heuristic planner's subset; the message lists the subset."""


@dataclass(frozen=True)
class Things:
    """Which objects: named phrases, or ``count`` of a kind (``kind`` may be a class or a group)."""

    names: tuple[str, ...] = ()
    kind: str | None = None
    count: int | None = None  # None with kind: every one of that kind
    exclude_at_dest: bool = False
    at_least: int = 0  # every one of the kind, and the request says how many there are ("both": 2)
    source: str | None = None  # every one of the kind that is in or on this place ("all the fruit on the counter")


@dataclass(frozen=True)
class Move:
    things: Things
    dest: str | None  # None: anywhere else (clear)
    dest_kind: str | None = None  # "closable": any container with a door or drawer


@dataclass(frozen=True)
class Toggle:
    target: str
    open: bool


@dataclass(frozen=True)
class Fetch:
    thing: str
    pick: bool  # fetch: pick it up; find: only go next to it


@dataclass(frozen=True)
class GoTo:
    """Go to a place (an object, a receptacle or a room) and stay there."""

    place: str


@dataclass(frozen=True)
class Clear:
    source: str
    dest: str | None


@dataclass(frozen=True)
class IfAbsent:
    kind: str
    container: str


@dataclass(frozen=True)
class IfEmpty:
    container: str
    thing: str
    otherwise: str
    kind: str | None = None  # only things of this kind count ("if there's no fruit in it")
    inverse: bool = False  # the container when something (of the kind) is already in it ("if there's already fruit in it")


@dataclass(frozen=True)
class Keep:
    count: int
    kind: str
    dest: str


@dataclass
class Plan:
    goals: list = field(default_factory=list)
    close_after: list[str] = field(default_factory=list)  # containers to close at the end ("it" = last dest)


_FILLER = re.compile(r"\b(hey|hi|ugh|please|thanks|thank you|for me|could you|can you|would you mind|would you|kindly|"
                     r"i'll need|i will need|later|again|then|afterwards|when you are done|so)\b[,!.]?", re.I)
_ART = r"(?:the |a |an |my |one |some )?"
_OBJ = r"(?P<obj>something to (?:drink|eat)|.+?)"
_DEST = r"(?P<dest>[\w\s-]+?)"


def _clean(text: str) -> str:
    t = text.lower().strip().replace(":", ",")
    t = re.sub(r"\.\.+", ",", t)
    t = re.sub(r"[?!]+", ".", t)
    t = re.sub(r",?\s*whichever you like", "", t)
    return re.sub(r"\s+", " ", t).strip(" .")


def _things(phrase: str) -> Things:
    p = phrase.strip()
    p = re.sub(r"^(?:the|my|a|an)\s+", "", p)
    p = re.sub(r"\s+from (?:the )?[\w\s]+$", "", p)  # "the can from the table"
    if m := re.match(r"^(?:one of the|any one of the|any|one)\s+(.+?)(?:s)?(?:,.*)?$", p):
        return Things(kind=m.group(1).strip(), count=1)
    if m := re.match(r"^something to (drink|eat)$", p):
        return Things(kind=m.group(1), count=1)
    parts = [re.sub(r"^(?:the|my)\s+", "", x.strip()) for x in re.split(r",\s*(?:and\s+)?|\s+and\s+", p) if x.strip()]
    return Things(names=tuple(parts))


def parse_instruction(text: str) -> Plan:
    """Read an instruction into goals; raises UnsupportedInstruction with the supported forms."""
    t = _clean(tidy(text))
    plan = Plan()
    # trailing "close it" clauses
    for pat, which in ((r",? (?:and )?(?:make sure both are closed|close both)(?: when you are done)?$", "both"),
                       (r",? (?:and )?(?:then )?(?:close|shut) it(?: afterwards)?$", "it"),
                       (r",? (?:and )?leave it shut$", "it")):
        m = re.search(pat, t)
        if m:
            plan.close_after.append(which)
            t = t[: m.start()].strip(" ,")
    goals = []
    # the whole text, then its sentences from the last ("guests are coming. the x goes in the y")
    sentences = [p for p in t.split(". ") if p]
    for part in [sentences[-1], t.replace(". ", ", ")] + sentences[-2::-1]:
        body = re.sub(r"\s+", " ", _FILLER.sub(" ", part)).strip(" ,.")
        goals = _goals(body) or _goals(part.strip(" ,."))
        if goals:
            break
    if not goals:
        raise UnsupportedInstruction(
            f"the heuristic planner does not understand '{text.strip()}'. It understands: put/place/move/bring X on/in/to Y "
            "(X may be a list or 'one of the Xs'); take X out of Z and put it on Y; find X; fetch X; go to X; open/close Y; "
            "clear Y (onto Z); if there is no X in Y, put one there; if Y is empty put X in it, otherwise on Z; "
            "every X that is not on Y belongs there; keep N Xs on Y; hide X inside something that can be shut")
    plan.goals = goals
    return plan


def _goals(t: str) -> list:
    if m := re.match(rf"^if there is no (?P<kind>[\w\s]+?) (?:in|on|inside) (?:the )?{_DEST},? put one (?:in it|there|on it|inside)"
                     r"(?:\s*\(.*\))?(?: .*)?$", t):
        return [IfAbsent(m["kind"].strip(), m["dest"].strip())]
    if m := re.match(rf"^if (?:the )?(?P<box>[\w\s]+?) is empty,? put {_ART}(?P<obj>[\w\s]+?) (?:inside it|in it|there)[;,.]? "
                     rf"(?:if not|otherwise),? put it (?:on|in|onto|into) (?:the )?{_DEST}$", t):
        return [IfEmpty(m["box"].strip(), m["obj"].strip(), m["dest"].strip())]
    if m := re.match(rf"^every (?P<kind>[\w\s]+?) that is not (?:yet |already )?(?:in|on) (?:the )?{_DEST} belongs there.*$", t):
        return [Move(Things(kind=m["kind"].strip(), exclude_at_dest=True), m["dest"].strip())]
    if m := re.match(rf"^keep (?P<n>\d+|one|two|three|four|five) (?P<kind>[\w\s]+?) (?:on|in) (?:the )?{_DEST}$", t):
        n = int(m["n"]) if m["n"].isdigit() else NUMBERS[m["n"]]
        return [Keep(n, singular(m["kind"].strip()), m["dest"].strip())]
    if m := re.match(rf"^(?:put|move|bring|carry|take) all (?:the |of the )?(?P<kind>[\w\s]+?) (?:on|onto|in|into|to) (?:the )?{_DEST}$", t):
        return [Move(Things(kind=singular(m["kind"].strip())), m["dest"].strip())]
    if m := re.match(r"^(?:hide|put) (?:the )?(?P<obj>[\w\s]+?) (?:inside something that can be shut|away behind a door or in a drawer).*$", t):
        return [Move(Things(names=(m["obj"].strip(),)), None, dest_kind="closable")]
    if m := re.match(rf"^(?:clean up|clear|tidy up|empty) (?:everything off |everything from )?(?:the )?(?P<src>[\w\s-]+?)"
                     rf"(?:[;,] put the things on any other surface)?(?: (?:onto|on|into|to) (?:the )?{_DEST})?$", t):
        return [Clear(m["src"].strip(), (m["dest"] or "").strip() or None)]
    if m := re.match(r"^(?:the )?(?P<src>[\w\s-]+?) should end up empty.*$", t):
        return [Clear(m["src"].strip(), None)]
    if m := re.match(rf"^(?:take|get) (?:the )?(?P<obj>[\w\s]+?) (?:out of|from inside|from) (?:the )?[\w\s]+? and "
                     rf"(?:leave|set|put|place) it (?:on|in|onto|into) (?:the )?{_DEST}$", t):
        return [Move(Things(names=(m["obj"].strip(),)), m["dest"].strip())]
    if m := re.match(r"^(?:go and )?(?P<verb>open|close|shut) (?:the )?(?P<rec>[\w\s-]+)$", t):
        return [Toggle(m["rec"].strip(), m["verb"] == "open")]
    if m := re.match(rf"^(?:put|place|move|bring|carry|take|leave|drop|set|putting|collect|gather) {_OBJ} (?:and put them |and drop it )?"
                     rf"(?:on top of|on|onto|in|into|inside|to|over to|at) (?:the )?{_DEST}(?: for me| whichever you like)?$", t):
        first = _move_pair(m["obj"], m["dest"])
        if first:
            return first
    if m := re.search(rf"(?:bring me|get me|grab me) (?P<obj>something to drink|something to eat|.+?),? i'?m (?:at|on|by) (?:the )?{_DEST}$", t):
        return [Move(_things(m["obj"]), m["dest"].strip())]
    if m := re.match(rf"^(?:any )?(?P<kind>[\w\s]+?) will do,? bring one to (?:the )?{_DEST}$", t):
        return [Move(Things(kind=m["kind"].strip(), count=1), m["dest"].strip())]
    if m := re.match(rf"^grab {_OBJ} and (?:drop|put|leave) it (?:on|in|onto|into|at) (?:the )?{_DEST}$", t):
        return [Move(_things(m["obj"]), m["dest"].strip())]
    if m := re.match(rf"^(?:the )?(?P<obj>[\w\s,]+?) (?:is|are) in the wrong place.*? (?:it|they) (?:goes|go|belongs?) (?:on|in|into|onto) (?:the )?{_DEST}$", t):
        return [Move(_things(m["obj"]), m["dest"].strip())]
    if m := re.match(rf"^(?:tidy up,? )?(?:the )?(?P<obj>[\w\s,]+?) (?:all )?(?:go|goes|belong) (?:on|in|into|onto) (?:the )?{_DEST}$", t):
        return [Move(_things(m["obj"]), m["dest"].strip())]
    if m := re.match(rf"^(?:the )?(?P<obj>[\w\s]+?),? leave it (?:on|in) (?:the )?{_DEST}$", t):
        return [Move(_things(m["obj"]), m["dest"].strip())]
    if place := go_to_place(t):
        return [GoTo(place)]
    if m := re.match(r"^(?P<verb>find|fetch|get|grab|look for) (?:me )?(?:the |a |an )?(?P<obj>[\w\s-]+)$", t):
        return [Fetch(m["obj"].strip(), m["verb"] != "find" and m["verb"] != "look for")]
    return []


_GO = re.compile(r"^(?:(?:go|come|walk|head|move|navigate|drive|run|roll|get|make your way|find your way)"
                 r"(?: (?:over|back|across|down|up|along|on|straight|right))*|(?:come|go) (?:here|there|over here),?)"
                 r" (?:to|towards?|into|in|next to|up to|over to|near|by) (?:the |my |your |a |an )?(?P<p>[\w\s'-]+?)"
                 r"(?: (?:now|right now|quickly|asap|for me|whenever you can|when you can))?$")


def go_to_place(text: str) -> str | None:
    """The place of 'go / come / walk over / head / navigate to (the) X'; None for other sentences."""
    m = _GO.match(text.strip(" ,."))
    if not m or re.search(r"\b(?:and|then|but|or)\b", m["p"]):  # "go to the kitchen and ...": more than going
        return None
    return m["p"].strip()


def _move_pair(obj: str, dest: str) -> list | None:
    """'A in D1 and B in D2' -> two moves; otherwise one move of the listed things."""
    m = re.match(r"^(?P<d1>[\w\s-]+?) and (?:the )?(?P<b>[\w\s]+?) (?:in|into|on|onto) (?:the )?(?P<d2>[\w\s-]+)$", dest)
    if m:
        return [Move(_things(obj), m["d1"].strip()), Move(_things(m["b"]), m["d2"].strip())]
    return [Move(_things(obj), dest.strip())]
