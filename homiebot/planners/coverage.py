"""Which parts of a request a plan leaves out: the check that keeps a planner from calling a request done
when part of it was never read.

Two readers read a request (``understanding.py``'s clauses and ``reading.py``'s mentions); the planner acts on
one plan. This module reads the request once more for its mentions and lists each part that the plan does not
cover: a thing to move that no goal moves, a destination that no goal brings anything to, opening or closing
that no goal does, and a phrase in a thing's place that names nothing known ("smth to drink"). Things and places
are compared as the mention reader canonicalises them (class or furniture type, colour, room), so "the kitchen
cabinet" and "cabinet in the kitchen" are one place. The check is lenient where the plan is vague (a kind of thing,
"somewhere in the kitchen"): it must never report a part the plan does cover.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from homiebot.core.vocabulary import RECEPTACLE_TYPES
from homiebot.planners.instructions import Clear, Fetch, GoTo, IfAbsent, IfEmpty, Keep, Move, Plan, Toggle
from homiebot.planners.reading import (
    OBJECT_WORDS,
    Mention,
    _is_location,
    _negated,
    _prep,
    mentions,
    read_request,
    request_mentions,
    tokens,
)


@dataclass(frozen=True)
class _Ref:
    """A thing or place as the mention reader canonicalises it."""

    kind: str  # "object", "place", "room" or "kind" (a category or class named without a mention: 'fruit', 'drink')
    canon: str | None
    colour: str | None = None
    room: str | None = None


def _refs(phrase: str | None, head_only: bool = True) -> list[_Ref]:
    if not phrase:
        return []
    found = mentions(tokens(phrase))
    if not found and phrase.strip().lower() in OBJECT_WORDS:  # "can" alone reads as the verb
        return [_Ref("object", OBJECT_WORDS[phrase.strip().lower()])]
    if not found:
        return [_Ref("kind", "_".join(re.findall(r"[a-z]+", phrase.lower())) or None)]
    found = found[:1] if head_only else found
    return [_Ref(m.kind, m.canon, m.colour, m.room) for m in found]


@dataclass
class _Covered:
    """What a plan's goals cover: the things they move or take, the places they bring things to or go to, the
    containers they open or close."""

    things: list[_Ref] = field(default_factory=list)
    places: list[_Ref] = field(default_factory=list)
    opened: list[_Ref] = field(default_factory=list)
    closed: list[_Ref] = field(default_factory=list)
    closes_after: bool = False
    pairs: list[tuple[_Ref, _Ref]] = field(default_factory=list)  # (thing, where it goes)
    visited: list[_Ref] = field(default_factory=list)  # places gone to
    located: list[_Ref] = field(default_factory=list)  # places said as where a thing is ("the sponge on the bed")

    @classmethod
    def of(cls, plan: Plan) -> _Covered:
        c = cls(closes_after=bool(plan.close_after))
        for g in plan.goals:
            if isinstance(g, Move):
                for name in g.things.names:
                    c.things += _refs(name)
                    c.located += [r for r in _refs(name, head_only=False)[1:] if r.kind in ("place", "room")]
                if g.things.kind:
                    c.things.append(_Ref("kind", g.things.kind.replace(" ", "_")))
                if g.dest_kind == "room" and g.dest:
                    c.places.append(_Ref("room", g.dest.replace(" ", "_")))
                elif g.dest:
                    c.places += _refs(g.dest)
                elif g.dest_kind == "closable":
                    c.places.append(_Ref("kind", "closable"))
                whats = [r for n in g.things.names for r in _refs(n)] + ([_Ref("kind", "any")] if g.things.kind else [])
                wheres = [_Ref("room", g.dest.replace(" ", "_"))] if g.dest_kind == "room" and g.dest else _refs(g.dest) or [_Ref("kind", "closable")]
                c.pairs += [(a, b) for a in whats for b in wheres]
            elif isinstance(g, Toggle):
                (c.opened if g.open else c.closed).extend(_refs(g.target))
            elif isinstance(g, Fetch):
                c.things += _refs(g.thing)
            elif isinstance(g, GoTo):  # going there covers the place itself, never a destination in its room
                c.visited += _refs(g.place)
                c.things += [r for r in _refs(g.place) if r.kind == "object"]
            elif isinstance(g, IfEmpty):
                c.things += _refs(g.thing)
                c.places += _refs(g.container) + _refs(g.otherwise)
                c.pairs += [(a, b) for a in _refs(g.thing) for b in _refs(g.container) + _refs(g.otherwise)]
            elif isinstance(g, (IfAbsent, Keep)):
                c.things.append(_Ref("kind", g.kind.replace(" ", "_")))
                c.places += _refs(g.container if isinstance(g, IfAbsent) else g.dest)
            elif isinstance(g, Clear):
                c.things.append(_Ref("kind", "everything"))
                c.places += _refs(g.dest) + _refs(g.source)
        return c

    def thing(self, t: _Ref) -> bool:
        return any(_same_thing(p, t) for p in self.things)

    def place(self, d: _Ref) -> bool:
        return any(_same_place(p, d) for p in self.places) or any(p.kind == d.kind and p.canon == d.canon for p in self.visited)

    def pair(self, t: _Ref, d: _Ref) -> bool:
        if not self.pairs:  # goals other than moves (conditions on counts, clearing): not compared pairwise
            return True
        return any(_same_thing(a, t) and _same_place(b, d) for a, b in self.pairs)

    def toggle(self, t: _Ref, open_: bool) -> bool:
        if not open_ and self.closes_after:
            return True  # "..., then close it": the containers things went into
        return any(_same_place(p, t) for p in (self.opened if open_ else self.closed))


def _same_thing(have: _Ref, want: _Ref) -> bool:
    if have.kind == "kind":  # a kind or category of things: whatever of it (lenient)
        return True
    if want.kind == "kind":
        return False
    if want.canon is not None and have.canon is not None and have.canon != want.canon:
        return False
    return have.colour is None or want.colour is None or have.colour == want.colour


def _same_place(have: _Ref, want: _Ref) -> bool:
    if have.kind == "kind" or want.kind == "kind":
        return have.kind == want.kind and have.canon == want.canon or have.canon == "closable"
    if want.kind == "room":
        return have.canon == want.canon if have.kind == "room" else have.room in (None, want.canon)
    if have.kind == "room":  # "somewhere in the kitchen" covers a place there (or one whose room is not said)
        return want.room in (None, have.canon)
    if have.canon != want.canon:
        return False
    return (have.room is None or want.room is None or have.room == want.room) and (
        have.colour is None or want.colour is None or have.colour == want.colour)


def unread_parts(text: str, plan: Plan) -> list[str]:
    """The parts of ``text`` that ``plan`` does not cover, in words ('the remote', 'onto or into the tv stand',
    'close the drawer', 'the condition ...'); empty when every part the request names is in the plan."""
    covered = _Covered.of(plan)
    out = _against_mentions(text, covered)
    words = tokens(text)
    found = request_mentions(words)
    for m in found:
        if m.kind not in ("place", "room") or not (m.restated or _wanted_there(words, m)) or _alternative(words, m) \
                or _called_off(words, found, m):
            continue
        where = _Ref(m.kind, m.canon, m.colour, m.room)
        if not covered.place(where):
            out.append(f"onto or into the {m.phrase().replace('_', ' ')}")
            continue
        start = max((k + 1 for k, w in enumerate(words[:m.start]) if w in (",", ".", ";", "!", "?")), default=0)
        said = [t for t in mentions(words) if t.kind == "object" and start <= t.start < m.start]
        thing = said[-1] if said and _corrects(words, start) else None  # "sorry, the cereal box in the fridge": this one there
        if m.restated:  # the same, read back where the corrected place was
            thing = next((t for t in reversed(found) if t.kind == "object" and t.end <= m.start), None)
        if thing is not None and (m.start - thing.end <= 4 or m.restated) and not set(words[thing.end:m.start]) & {",", ".", ";", "and", "from", "off"} \
                and not covered.pair(_Ref("object", thing.canon, thing.colour), where):
            out.append(f"the {thing.phrase()} onto or into the {m.phrase().replace('_', ' ')}")
    out += _unread_toggles(words, found, covered)
    out += _unread_condition(" ".join(words), plan)
    out += _unread_quantity(words, plan)
    out += _unread_words(text, plan)
    # "the orange - same place as the lemon": read only when a goal sends another thing where the lemon goes
    out += [m.group(0) for m in _REFERENCE.finditer(" ".join(words)) if not _shares_place(plan, m["x"])]
    return list(dict.fromkeys(out))


def _called_off(words: list[str], found: list[Mention], m: Mention) -> bool:
    """'... into the fridge. nvm the fridge, ...': the same place named again later to call it off."""
    return any(n.kind == m.kind and n.canon == m.canon and n.start > m.start
               and set(words[max(0, n.start - 3):n.start]) & {"nvm", "mind", "forget", "scratch", "not"} for n in found)


def _alternative(words: list[str], m: Mention) -> bool:
    """'in the fridge or on the counter': one of places offered as alternatives."""
    return "or" in words[max(0, m.start - 4):m.start] or "or" in words[m.end:m.end + 2]


def _said_as_where_it_is(text: str, dest: str) -> bool:
    """'I left it on the bed', 'it is on the sofa': the place is where a thing is, whatever the mention reader made of it."""
    want = _refs(dest)
    words = tokens(text)
    for m in mentions(words):
        if want and _same_place(want[0], _Ref(m.kind, m.canon, m.colour, m.room)):
            before = words[max(0, m.start - 4):m.start]
            if _is_location(words, m) or set(before) & {"left", "saw", "found", "is", "are", "was", "were"} or _alternative(words, m):
                return True
    return False


def _against_mentions(text: str, covered: _Covered) -> list[str]:
    """What the mention reader's own plan holds that the plan does not."""
    reading = read_request(text)
    out: list[str] = []
    for g in reading.plan.goals:
        if isinstance(g, Move):
            for name in g.things.names:
                if not all(covered.thing(r) for r in _refs(name)):
                    out.append(f"the {name}")
            dest = [_Ref("room", g.dest.replace(" ", "_"))] if g.dest_kind == "room" and g.dest else _refs(g.dest)
            if dest and not all(covered.place(r) or r in covered.located for r in dest) and not _said_as_where_it_is(text, g.dest or ""):
                out.append(f"onto or into the {g.dest}")
        elif isinstance(g, Toggle):
            if not all(covered.toggle(r, g.open) for r in _refs(g.target)):
                out.append(f"{'open' if g.open else 'close'} the {g.target}")
        elif isinstance(g, Fetch) and not all(covered.thing(r) for r in _refs(g.thing)):
            out.append(f"the {g.thing}")
    for u in reading.unsure:
        m = re.fullmatch(r"where the (?P<t>.+) should go", u)
        if m and not all(covered.thing(r) for r in _refs(m["t"])):
            out.append(f"the {m['t']}")
    return out


_DEST_VERBS = {"goes", "go", "belongs", "belong", "be", "put", "place", "leave", "chuck", "stick", "pop", "set", "lives", "live",
               "stay", "stays", "move", "bring", "take", "drop", "toss", "store", "hang", "end"}


def _wanted_there(words: list[str], m: Mention) -> bool:
    """Whether a place is said as where something must end up: after into / onto / to, or after in / on right
    behind a verb of placing ('goes in the sink', 'put it on the bed'); never a source, a location or a negated one."""
    prep = _prep(words, m)
    if _negated(words, m) or _is_location(words, m) or prep in ("from", "off", "out of", "of", "out") or _denied(words, m) \
            or set(words[max(0, m.start - 3):m.start]) & {"mind", "forget", "nvm"}:  # "never mind the fridge"
        return False
    if _alone(words, m):
        return True  # "can in the bathroom sink? fridge please": a place said on its own is where to
    if prep in ("into", "onto", "to", "in to", "on to"):
        return not (m.start >= 2 and words[m.start - 2:m.start] == ["next", "to"])
    k = m.start
    while k > 0 and words[k - 1] in ("the", "a", "an", "my", "your", "its", "back", "that", "this", "our"):
        k -= 1
    before = words[max(0, k - 4):max(0, k - 1)]
    if prep not in ("in", "on", "inside") or set(before) & {"is", "are", "was", "from"}:
        return False
    start = max((i + 1 for i, w in enumerate(words[:k]) if w in (",", ".", ";", "!", "?")), default=0)
    if set(before) & _DEST_VERBS or before[-1:] in (["both"], ["all"]):  # "both in the fridge", not "all the cups in the sink"
        return True
    end = next((i for i in range(m.end, len(words)) if words[i] in (".", ";", "!", "?")), len(words))
    return _corrects(words, start) and not set(words[m.end:end]) & _DEST_VERBS  # "sorry, the cereal box in the fridge too"


def _alone(words: list[str], m: Mention) -> bool:
    """A place that is a whole sentence or clause by itself, with at most 'please' or an article beside it."""
    stops = (",", ".", ";", "!", "?")
    begin = max((i + 1 for i, w in enumerate(words[:m.start]) if w in stops), default=0)
    end = next((i for i in range(m.end, len(words)) if words[i] in stops), len(words))
    rest = words[begin:m.start] + words[m.end:end]
    full_stop = next((i for i in range(m.end, len(words)) if words[i] in (".", "?", "!", ";")), len(words))
    sentence = words[max((i + 1 for i, w in enumerate(words[:m.start]) if w in (".", "?", "!", ";")), default=0):full_stop]
    return begin > 0 and set(rest) <= {"the", "my", "a", "please", "to", "into", "onto"} and not set(sentence) & {"open", "close", "shut"}


def alone_place(text: str) -> str | None:
    """The one place said on its own after the thing ('crackers in the bathroom cabinet?? kitchen counter please'), in
    the words a plan uses, or None."""
    words = tokens(text)
    places = [m for m in request_mentions(words) if m.kind == "place" and _alone(words, m) and not _negated(words, m)]
    return places[0].phrase().replace("_", " ") if len(places) == 1 else None


def _corrects(words: list[str], start: int) -> bool:
    """Whether the clause starting at ``start`` follows a correction ('sorry, ...', 'no, ...', 'wait no, ...')."""
    for i in range(max(0, start - 3), min(start + 1, len(words))):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if words[i] in ("sorry", "nah", "oops", "mean", "actually") or words[i] in ("no", "wait") and nxt in (",", "sorry", "wait", "no", "the"):
            return True
    return False


def _denied(words: list[str], m: Mention) -> bool:
    """'does not need to be in the fridge': a negation earlier in the same clause."""
    before = words[max(0, m.start - 7):m.start]
    cut = max((i for i, w in enumerate(before) if w in (",", ".", ";", "!", "?", "but")), default=-1)
    return bool(set(before[cut + 1:]) & {"not", "never", "no"})


_PRONOUNS = {"it", "them", "em", "both", "that", "those", "whichever", "all", "each", "everything", "one"}


def _unread_toggles(words: list[str], found: list[Mention], covered: _Covered) -> list[str]:
    """Opening and closing asked for ('close the drawer', 'then shut it', 'close whichever you used') that no goal does."""
    out = []
    for k, w in enumerate(words):
        if w not in ("open", "close", "shut") or words[max(0, k - 1)] in ("is", "are", "was", "still", "all", "left", "been", "wide"):
            continue
        end = next((i for i in range(k + 1, len(words)) if words[i] in (".", ";", "!", "?", "open", "close", "shut", "put", "you")
                    or words[i] == "," and words[i + 1:i + 2] in (["and"], ["then"])), len(words))
        targets = [m for m in found if m.kind == "place" and k < m.start < end and m.start - k <= 8]
        nxt = [x for x in words[k + 1:k + 3] if x not in ("up", "please", "the")]
        if not targets and not (nxt and nxt[0] in _PRONOUNS):
            continue
        if not targets and nxt and nxt[0] in ("them", "em", "all", "both") and w != "open":  # "... all open, close them all"
            begin = max((i + 1 for i, x in enumerate(words[:k]) if x in (".", ";", "!", "?")), default=0)
            targets = [m for m in found if m.kind == "place" and begin <= m.start < k and _closable(m.canon)]
        for m in targets[:3]:
            if not covered.toggle(_Ref(m.kind, m.canon, m.colour, m.room), w == "open"):
                out.append(f"{'open' if w == 'open' else 'close'} the {m.phrase().replace('_', ' ')}")
        if not targets and not (covered.closed if w != "open" else covered.opened) and not (w != "open" and covered.closes_after):
            out.append(" ".join(words[k:k + 3]))
    return out


def _closable(canon: str | None) -> bool:
    kind = RECEPTACLE_TYPES.get(canon or "")
    return bool(kind and kind.articulated)


_CONDITION = re.compile(r"\b(?:if|unless|as long as|only if|provided)\b(?! (?:you|that is|that'?s|possible|needed|you can))"
                        r"(?: \w+){0,8}? (?:empty|nothing|no|free|already|full|open|closed|shut|something|anything|room|space|clear)\b")


def _unread_condition(text: str, plan: Plan) -> list[str]:
    """A condition on the home ('if the drawer is empty', 'unless something is in there') with no conditional goal read."""
    if any(isinstance(g, (IfEmpty, IfAbsent, Keep)) for g in plan.goals):
        return []
    m = _CONDITION.search(text)
    return [f"the condition '{m.group(0)}'"] if m else []


_EVERY = re.compile(r"\b(?:all|every|each|everything|both)\b(?! (?:of them|the same|right|good|set|done|closed|shut|open|fine|over))")


_NOT_A_THING = {"open", "closed", "shut", ".", ",", "and", "then", "are", "of", "go", "goes", "put", "on", "in", "to", "into", "onto",
                "belong", "should", "need", "can", "must", "will", "have", "inside", "there", "here", "away", "back", "as", "else",
                "ok", "okay", "fine", "good", "week", "day", "morning", "night", "evening", "time", "along", "together", "year"}


def _unread_quantity(words: list[str], plan: Plan) -> list[str]:
    """'all the fruit', 'everything on the shelf', 'both cups' with no goal about every one of a kind or a set of things."""
    text = " ".join(words)
    m = _EVERY.search(text)
    if m is None:
        return []
    if any(isinstance(g, (Clear, Keep)) or isinstance(g, Move) and (g.things.kind and g.things.count is None or len(g.things.names) > 1)
           for g in plan.goals):
        return []
    rest = text[m.end():].split()[:4]
    if not rest or rest[0] in _NOT_A_THING - ({"on", "in", "inside", "of"} if m.group(0) == "everything" else set()) \
            or text[:m.start()].split()[-1:] == ["leave"]:
        return []  # "close em all", "make sure both are closed"
    if any(isinstance(g, Toggle) for g in plan.goals) and set(rest[:2]) & {"open", "closed", "shut", "are", "drawers", "cabinets", "doors"}:
        return []
    return [" ".join([m.group(0), *rest[:3]])]


# everyday shorthand for "something" that no reader resolves to a thing
_VAGUE = re.compile(r"\b(?:smth|sth|smthg|somethin|stuff|thingy|whatsit|thingamajig)\b(?: to (?:drink|eat))?")


_REFERENCE = re.compile(r"\bsame (?:place|spot|shelf|cabinet|drawer|one|way) as (?:the |my )?(?P<x>\w+(?: \w+)?)")


def _shares_place(plan: Plan, thing: str) -> bool:
    """A move names ``thing`` (its first word: 'lemon' of 'lemon and') and another move goes to the same place."""
    word = thing.split()[0]
    moves = [g for g in plan.goals if isinstance(g, Move) and g.dest]
    dests = {g.dest for g in moves if any(word in n.split() for n in g.things.names)}
    return any(g.dest in dests and not any(word in n.split() for n in g.things.names) for g in moves)


def _unread_words(text: str, plan: Plan) -> list[str]:
    """Vague words in a thing's place ('get me smth to drink') that the plan did not turn into a kind of thing."""
    if any(isinstance(g, Move) and g.things.kind for g in plan.goals) or any(isinstance(g, (IfAbsent, Keep, Clear)) for g in plan.goals):
        return []
    return [m.group(0) for m in _VAGUE.finditer(text.lower())]
