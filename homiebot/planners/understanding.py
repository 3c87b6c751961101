"""Free-form instructions -> goals, without a language model.

People phrase requests as questions ("could you put ..."), wrap them in politeness, refer back with
pronouns ("see the mug on the TV stand? put it in the sink"), give several objects different places
("bottle in the fridge, towel on the shelf"), locate things ("the remote on the black table"), leave the
place open ("somewhere in the bathroom") or the object ("one of the mugs"), add conditions ("if the
fridge is empty ...") and negations ("not the soup can"). ``understand`` rewrites such text clause by
clause into the goal records of ``homiebot.planners.instructions`` (falling back to its grammar), and
checks that every object and place phrase names something of the household vocabulary (exactly, by
word overlap, or by sentence-embedding similarity with the shipped MiniLM model). Anything it cannot
read or ground is listed in ``Understanding.unsure``: the planner then asks or reports, never guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from homiebot.core.vocabulary import CATEGORY_WORDS, OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.perception.grounding import COLOUR_WORDS, SHARED_EMBEDDER, TextEmbedder, singular
from homiebot.planners.conditions import condition
from homiebot.planners.instructions import (
    Clear,
    Fetch,
    GoTo,
    IfAbsent,
    IfEmpty,
    Keep,
    Move,
    Plan,
    Things,
    Toggle,
    UnsupportedInstruction,
    go_to_place,
    parse_instruction,
)
from homiebot.planners.phrasing import tidy
from homiebot.planners.quantities import closing_goals, quantity_goals

ROOM_WORDS = {"bathroom", "bedroom", "living room", "office", "dining room", "kitchen", "hallway"}
VOCAB_OBJECTS = {c.replace("_", " ") for c in OBJECT_CLASSES} | {c.category for c in OBJECT_CLASSES.values()} | {"drink"}
VOCAB_PLACES = {t.replace("_", " ") for t in RECEPTACLE_TYPES} | {"tv", "counter", "couch", "table"}
# everyday words for things the vocabulary names otherwise
SYNONYMS = {"crackers": "cracker box", "cracker": "cracker box", "teddy": "teddy bear", "couch": "sofa", "tv": "tv stand",
            "telly": "tv stand", "cereal": "cereal box", "sugar": "sugar box", "soup": "soup can", "block": "toy block",
            "cupboard": "cabinet", "counter": "kitchen counter", "refrigerator": "fridge"}
EMBED_THRESHOLD = 0.55  # a phrase with no vocabulary word must be this close to one to count as grounded
STOP = {"the", "a", "an", "my", "your", "this", "that", "some", "of", "one", "any", "other", "it", "them"}
_PREP = r"(?:on top of|onto|on|into|inside|in|to|over to|at|under)"
_LOC = r"(?:on|from|off|by|in|near|next to|at|out of|inside)"
_VERB = r"(?:put|place|move|bring|take|carry|set|drop|leave|get|grab|stick|pop|return|toss|hang|store|stash)"


@dataclass
class Understanding:
    """What an instruction was read to mean: the plan, its statement in words, and what stayed unclear."""

    plan: Plan
    unsure: list[str] = field(default_factory=list)  # phrases or clauses it could not read or ground

    @property
    def confident(self) -> bool:
        return bool(self.plan.goals) and not self.unsure

    def statement(self) -> str:
        """The goal in words, e.g. 'move red mug -> kitchen counter; open fridge'."""
        return "; ".join(describe_goal(g) for g in self.plan.goals) + (
            f"; then close {', '.join(self.plan.close_after)}" if self.plan.close_after else "")


def describe_goal(goal: object) -> str:
    """One goal record in words."""
    if isinstance(goal, Move):
        t = goal.things
        what = " and ".join(t.names) if t.names else (f"one {t.kind}" if t.count == 1 else f"every {t.kind}" + (
            f" from the {t.source}" if t.source else ""))
        where = f"somewhere in the {goal.dest}" if goal.dest_kind == "room" else (
            goal.dest or ("inside something that closes" if goal.dest_kind == "closable" else "anywhere else"))
        return f"move {what} -> {where}"
    if isinstance(goal, Toggle):
        return f"{'open' if goal.open else 'close'} {goal.target}"
    if isinstance(goal, Fetch):
        return f"{'fetch' if goal.pick else 'find'} {goal.thing}"
    if isinstance(goal, GoTo):
        return f"go to {goal.place}"
    if isinstance(goal, IfEmpty):
        state = f"{'has' if goal.inverse else 'has no'} {goal.kind}" if goal.kind else ("is not empty" if goal.inverse else "is empty")
        return f"if {goal.container} {state} move {goal.thing} into it, else -> {goal.otherwise}"
    if isinstance(goal, IfAbsent):
        return f"if no {goal.kind} in {goal.container}, put one there"
    if isinstance(goal, Keep):
        return f"keep {goal.count} {goal.kind} on {goal.dest}"
    if isinstance(goal, Clear):
        return f"clear {goal.source}" + (f" -> {goal.dest}" if goal.dest else "")
    return str(goal)


# ---- normalising ---------------------------------------------------------------------------------
_POLITE = [
    r"\bif that'?s ok(?:ay)?\b", r"\bif that is ok(?:ay)?\b", r"\bi do not mind(?: which)?\b",
    r"^(?:right|alright|well|so),\s*(?:so,\s*)?", r"\bi have a (?:favou?r|request|question) to ask\b",
    r"\b(?:that|it) would be (?:lovely|great|wonderful|nice|perfect|amazing|brilliant|fantastic)\b",
    r"\bwhen you have a (?:moment|minute|second|sec)\b",
    r"\b(?:hey|hi|hello|ok|okay|ugh|oh)\b,?", r"\bplease\b", r"\bthanks?(?: you)?(?: so much| very much| a lot)?\b!?", r"\bfor me\b",
    r"\bif that'?s ok(?:ay)?\b",
    r"\bi don'?t mind which\b", r"\b(?:either|any) one(?: of them)?(?: is fine| will do)?\b", r"\bwhichever(?: you like)?\b",
    r"\banywhere (?:in )?there is fine\b", r"\banywhere in there\b", r"\banywhere is fine\b", r"\bif you can\b",
    r"\bwhen you get a chance\b", r"\bfor (?:a|one) second\b", r"\btwo things\b", r"\bjust\b", r"\bthough\b",
]
# openers and closers of chatty requests, dropped before the older grammar reads the rest
_COURTESY = [r"^(?:(?:hi|hello|hey|oh),?\s*)+[.!,]?\s*", r"^i have a (?:favou?r|request|question) to ask[.!,]?\s*",
             r"^when you have a (?:moment|minute|second|sec),?\s*", r"^(?:right|alright|well|so),\s*(?:so,\s*)?",
             r",?\s*(?:that|it) would be (?:lovely|great|wonderful|nice|perfect|amazing|brilliant|fantastic)[.!]*$",
             r",?\s*thanks?(?: you)?(?: so much| very much| a lot)?[.!?]*$", r",?\s*please[.!?]*$"]
_ASKING = r"^(?:could|can|would|will) you (?:please )?(?:mind )?|^would you mind |^do you mind |^(?:i'?d|i would) like you to |" \
          r"^i need you to |^(?:could|can) i ask you to |^make sure you "
_WANT = r"^(?:i'?d like|i would like|i want|i need|i'?d love|we need|we want)\s+(?=(?:the|a|an|my|one|some|any)\b)"
_GERUND = {"bringing": "bring", "putting": "put", "taking": "take", "moving": "move", "opening": "open", "closing": "close",
           "shutting": "shut", "placing": "place", "carrying": "carry", "dropping": "drop", "leaving": "leave"}


def _normalise(text: str) -> str:
    t = text.lower().strip()
    t = t.replace("’", "'").replace("–", "-").replace(" - ", ", ").replace("!", ".").replace(":", ",")
    t = re.sub(r"\bthere'?s\b", "there is", t)
    t = re.sub(r"\bwhere'?s\b", "where is", t)
    t = re.sub(r"\bdon'?t\b", "do not", t)
    t = re.sub(r"\bdoesn'?t\b", "does not", t)
    t = re.sub(r"\bit'?s\b", "it is", t)
    t = re.sub(r"\bi'?m\b", "i am", t)
    t = re.sub(r"\b(?:that|which) (?:is|are)\b|\bthat'?s\b|\b(?:sitting|lying|standing)\b", " ", t)
    for g, v in _GERUND.items():
        t = re.sub(rf"\b{g}\b", v, t)
    t = re.sub(r"\bopen up\b", "open", t)
    t = re.sub(r"\bover to\b", "to", t)
    t = re.sub(r"\bfrom inside\b", "from", t)
    t = re.sub(r"\b(?:down|back|up) (?=(?:on|in|onto|into)\b)", "", t)
    t = re.sub(r"\b(?:in|to) the (?P<r>bathroom|bedroom|living room|office|dining room|kitchen) (?:somewhere|anywhere)\b",
               r"somewhere in the \g<r>", t)
    t = re.sub(r"\(([^()]*)\)", r", \1,", t)  # parentheses become their own clause
    for pat in _POLITE:
        t = re.sub(pat, " ", t)
    t = re.sub(r"\s+([?.,;])", r"\1", re.sub(r"\s+", " ", t))
    return re.sub(r"([?.,;])(?:\s*[?.,;])+", r"\1", t).strip(" ,.?;")


def _sentences(t: str) -> list[str]:
    parts = re.split(r"(?<=[a-z0-9])\s*[.?;]\s*|\s*[.?;]\s+", t)
    return [p.strip(" ,") for p in parts if re.search(r"[a-z0-9]", p)]


def _clauses(sentence: str) -> list[str]:
    s = re.sub(_ASKING, "", sentence.strip())
    s = re.sub(_WANT, "put ", s)
    s = re.sub(r"^make sure (?:there is|there are) ", "put ", s)
    parts = re.split(r",\s*(?:and\s+)?(?:then\s+)?|\s+and\s+(?:then\s+)?|\s+then\s+", s)
    out = []
    for p in parts:
        p = re.sub(_ASKING, "", p.strip(" ,"))
        p = re.sub(r"^(?:and|also|then|so|but)\s+", "", p)
        if re.search(r"[a-z0-9]", p):
            out.append(p)
    return out


def _strip_article(p: str) -> str:
    return re.sub(r"^(?:the|my|a|an|your|this|that)\s+", "", p.strip())


# ---- reading clauses -----------------------------------------------------------------------------
@dataclass
class _State:
    goals: list = field(default_factory=list)
    referent: str | None = None  # the last object mentioned (for it / them)
    pending: str | None = None  # an object mentioned without a place yet
    intro: bool = False  # the last clause introduced a thing ("there is a mug ...")
    unsure: list[str] = field(default_factory=list)
    close_after: list[str] = field(default_factory=list)  # "make sure both are closed when you are done"


TO_DO = {"eat": "food", "drink": "drink", "clean": "cleaning", "play": "toy"}  # "something to eat" -> the category
_KIND = re.compile(r"^(?:one of (?:the|my) |any one of the |any |either |a |an |some )(?P<k>[\w\s]+?)$")


def _thing(phrase: str, st: _State) -> Things | None:
    p = phrase.strip()
    if re.fullmatch(r"(?:it|them|that|this one|that one|this)", p):
        return _thing(st.referent, st) if st.referent else None
    p = re.sub(r"^me\s+", "", p)  # "get me something to drink"
    if m := re.match(rf"^(?:something|anything)[ _]to[ _](?P<k>drink|eat|clean[ _]with|play[ _]with)(?:\s+{_LOC}\s+(?:the\s+)?[\w\s]+)?$", p):
        return Things(kind=TO_DO[m["k"].split("_")[0].split()[0]], count=1)
    if m := re.match(r"^(?:a |an |some |one )?(?:piece|bit) of (?P<k>[a-z]+)$", p):  # "a piece of fruit": any fruit
        return Things(kind=_category(m["k"]), count=1)
    if m := re.match(r"^one of (?:the|my) (?P<k>[\w\s]+?)$", p):
        return Things(kind=singular(m["k"].strip()), count=1)
    if m := re.match(r"^(?:any|either|a|an) (?P<k>[\w\s]+?)$", p):
        kind = singular(m["k"].strip())
        if not any(w in COLOUR_WORDS for w in kind.split()) and " " not in re.sub(rf"\s+{_LOC}\s+.*$", "", kind):
            return Things(kind=_category(kind), count=1)
        return Things(names=(kind,))
    return Things(names=(_strip_article(p),))


def _category(word: str) -> str:
    """A category's everyday word in the vocabulary's terms ('dish' -> kitchenware, 'snack' -> food); others stay."""
    return CATEGORY_WORDS.get(singular(word), word) if word not in OBJECT_CLASSES else word


def _said_place(phrase: str, st: _State) -> Move | None:
    """The move whose destination ``phrase`` points back to: 'it' or 'there' (the last one sent somewhere), 'the
    same place (as the lemon)' (the lemon's); None when the phrase names a place itself or nothing was sent yet."""
    m = re.fullmatch(r"it|there|(?:the )?same (?:place|spot)(?: as (?:the |my )?(?P<x>[\w\s]+?))?", phrase)
    moves = [g for g in st.goals if isinstance(g, Move) and g.dest] if m else []
    if m and m["x"]:
        moves = [g for g in moves if any(singular(m["x"]) in n for n in g.things.names)]
    return moves[-1] if moves else None


def _record(st: _State, things: Things | None, dest: str | None, room: bool = False) -> None:
    if things is None:
        st.unsure.append("it (nothing mentioned before it)")
        return
    dest_clean = _strip_article(dest or "")
    if said := _said_place(dest_clean, st):  # "the plate next to it": where the last thing went
        dest_clean, room = said.dest or "", said.dest_kind == "room"
    room = room or dest_clean in ROOM_WORDS
    st.goals.append(Move(things, dest_clean, dest_kind="room" if room else None))
    st.referent = things.names[-1] if things.names else f"a {things.kind}"
    st.pending = None
    st.intro = False


def _somewhere(rest: str) -> str | None:
    """'somewhere in the bathroom' / 'anywhere in the kitchen' / 'to the kitchen' (a room) -> the room."""
    m = re.search(r"(?:somewhere|anywhere)\s+(?:in|inside)\s+(?:the\s+)?(?P<r>[\w\s]+?)(?:\s+(?:somewhere|anywhere))?$", rest)
    if m and m["r"].strip() in ROOM_WORDS:
        return m["r"].strip()
    m = re.search(r"^(?:in|to|into)\s+(?:the\s+)?(?P<r>[\w\s]+?)(?:\s+(?:somewhere|anywhere))?$", rest)
    if m and m["r"].strip() in ROOM_WORDS:
        return m["r"].strip()
    return None


def _clause(c: str, st: _State, later: str = "") -> bool:
    """Read one clause into ``st`` (``later``: the text after it); False when it is not understood."""
    c = c.strip()
    if not c:
        return True
    if not re.search(r"\b(?:is|are|was|were)\b", c):  # "the plate next to it" / "the plate there too": where the last thing went
        c = re.sub(r" (?:(?:next to|beside|alongside|with) it|there)(?: too| as well)?$", " at it", c)
    # "the bathroom sink is full of junk, get everything out of it ...": a place to clear, for a later 'it'
    if (m := re.fullmatch(r"(?:the |my )?(?P<p>[\w\s]+?) is (?:full of \w+|covered in \w+|a mess|messy|cluttered|overflowing)", c)) \
            and _is_place(m["p"]):
        st.goals.append(Clear(_strip_article(m["p"]), None))
        return True
    if _sets_and_closing(c, st):
        return True
    # "the orange on the tv stand, can you put it ...": a thing located, for a later 'it'
    if re.search(r"\b(?:it|them)\b", later) and (m := re.fullmatch(r"(?P<o>[\w\s]+?) (?:on|by|near|in) (?:the )?(?P<l>[\w\s]+)", c)) \
            and _is_thing(m["o"]) and not re.search(rf"\b(?:it|them|should|goes|go|be|belongs?|needs|see|there|where|left|{_VERB})\b", m["o"]):
        st.referent = st.pending = f"{_strip_article(m['o'])} on the {m['l']}"
        st.intro = True
        return True
    # negations: drop the clause but remember the thing it names (a later 'it' may refer to it)
    if m := re.match(rf"^(?:do not|never) (?:touch|move|put|leave|take) (?:the )?(?P<o>[\w\s]+?)(?: {_PREP} .*| where it is)?$", c):
        if not re.fullmatch(r"it|them", m["o"]):
            st.referent = st.pending = _strip_article(m["o"])
        return True
    if re.match(r"^(?:not|leave|do not)\b", c) and re.search(r"\b(?:alone|where it is|where they are|other way round|the other one)\b|^not\b|^do not\b", c):
        return True
    if re.fullmatch(r"(?:the )?other one|anywhere (?:there )?is fine|anywhere|somewhere|either|i do not mind", c):
        return True
    if place := go_to_place(c):
        st.goals.append(GoTo(_strip_article(place)))
        return True
    # open / close
    if re.fullmatch(r"(?:make sure|check that) (?:both|they|all of them|them all)(?: are)? (?:closed|shut)"
                    r"(?: when you are (?:done|finished)| afterwards| at the end)?|close (?:both|them)(?: afterwards)?", c) \
            and sum(isinstance(g, Move) for g in st.goals) >= 2:
        st.close_after.append("both")
        return True
    if m := re.match(r"^(?:make sure|check that) (?:the )?(?P<r>[\w\s]+?) is (?P<s>closed|shut|open)$", c) or \
            re.match(r"^(?:get|leave) (?:the )?(?P<r>[\w\s]+?) (?P<s>open|closed|shut)$", c):
        st.goals.append(Toggle(_strip_article(m["r"]), m["s"] == "open"))
        return True
    if m := re.match(r"^(?:go and )?(?P<v>open|close|shut) (?:up )?(?:the )?(?P<r>[\w\s]+?)$", c):
        if m["r"] in ("it", "them"):
            return False
        st.goals.append(Toggle(_strip_article(m["r"]), m["v"] == "open"))
        return True
    # introductions: "there is a mug on the tv stand", "see the mug on the tv stand", "where is the x", "i left an x on the y"
    if m := re.match(rf"^(?:there is|there are|see|you see|where is|i left|i put) (?P<o>[\w\s]+?)(?: sitting| lying)?(?: {_LOC} (?:the )?(?P<l>[\w\s]+))?$", c):
        obj = _strip_article(m["o"]) + (f" on the {m['l']}" if m["l"] else "")
        st.referent = st.pending = obj
        st.intro = True
        return True
    if re.fullmatch(r"(?:the )?same (?:place|spot) as (?:the |my )?[\w\s]+", c) and st.goals and isinstance(last := st.goals[-1], Move) \
            and (said := _said_place(c, st)) is not None and said is not last and last.things.names:
        # "the orange on the bathroom shelf - same place as the lemon": the shelf is where the orange is
        name = last.things.names[-1]
        where = name if " on the " in name or not last.dest else f"{name} on the {last.dest}"
        st.goals[-1] = Move(Things(names=(*last.things.names[:-1], where)), said.dest, said.dest_kind)
        return True
    if (m := re.fullmatch(r"(?:on|in|by|near|at|inside) (?:the )?(?P<l>[\w\s]+)", c)) and st.intro and st.pending:
        if " on the " not in st.pending:
            st.referent = st.pending = f"{st.pending} on the {m['l']}"
        return True
    if (m := re.fullmatch(r"(?P<o>[\w\s]+?) (?:is|are) (?:on|in|by|near|at|inside) (?:the )?(?P<l>[\w\s]+)", c)) and _is_thing(m["o"]):
        st.referent = st.pending = f"{_strip_article(m['o'])} on the {m['l']}"
        st.intro = True
        return True
    if st.intro and st.pending and (m := re.fullmatch(r"(?P<o>[\w\s]+?) (?:on|by|near) (?:the )?(?P<l>[\w\s]+)", c)) \
            and _is_thing(m["o"]) and not re.search(rf"\b(?:it|them|should|goes|go|be|belongs?|{_VERB})\b", m["o"]):
        st.referent = st.pending = f"{_strip_article(m['o'])} on the {m['l']}"
        return True
    if m := re.fullmatch(r"(?:the )?(?P<d>[\w\s]+?) for (?:the )?(?P<o>[\w\s]+)", c):
        if _is_place(m["d"]) and _is_thing(m["o"]):
            _record(st, _thing(m["o"], st), m["d"])
            return True
    cop0 = r"(?:goes|go|belongs|belong|should be|should go|needs to go|has to go)"
    if (m := re.fullmatch(rf"{cop0} (?:{_PREP}) (?:the )?(?P<d>[\w\s]+)", c)) and st.pending:
        _record(st, _thing(st.pending, st), m["d"])
        return True
    # take X out of / off / from Z (a place to come later)
    if (m := re.match(r"^(?:take|get|grab|pick up|lift) (?P<o>[\w\s]+?) (?:out of|off|from|from inside) (?:the )?(?P<z>[\w\s]+?)$", c)) \
            and not re.search(r"\b(?:to|onto|into)\b", m["z"]):
        th = _thing(m["o"], st)
        if th and th.names:
            obj = th.names[0] if th.names[0] != st.referent else th.names[0]
            st.referent = st.pending = f"{obj} on the {m['z']}" if " on the " not in obj else obj
            return True
    # copula: "X goes / belongs / should be / should go / needs to go / can go in Y"
    c = re.sub(r"^(?:can|could|will) (.+?) go\b", r"\1 goes", c)
    cop = r"(?:goes|go|belongs|belong|should be|should go|should end up|needs to go|need to go|has to go|is going)"
    if m := re.match(rf"^(?:can |could |will )?(?P<o>[\w\s]+?) {cop}(?: back)? (?P<rest>.+)$", c):
        room = _somewhere(m["rest"])
        obj = m["o"]
        if room:
            _record(st, _thing(obj, st), room, room=True)
            return True
        if dm := re.match(rf"^(?:{_PREP}) (?:the )?(?P<d>[\w\s]+)$", m["rest"]):
            _record(st, _thing(obj, st), dm["d"])
            return True
    # verb-led: "put X (from the Z) on Y", "bring X to Y", "X somewhere in room"
    if m := re.match(rf"^{_VERB}(?: me)? (?P<body>.+)$", c):
        body = m["body"]
        room_m = re.match(r"^(?P<o>[\w\s]+?) (?P<rest>(?:somewhere|anywhere) .+|to (?:the )?[\w\s]+)$", body)
        if room_m and _somewhere(room_m["rest"]):
            _record(st, _thing(room_m["o"], st), _somewhere(room_m["rest"]), room=True)
            return True
        pm = re.match(rf"^(?P<o>[\w\s]+)(?: (?:from|off) (?:the )?(?P<z>[\w\s]+?))? (?:down )?(?:{_PREP}) (?:the )?(?P<d>[\w\s]+)$", body)
        if pm and (pm["d"].strip() in ROOM_WORDS or not _is_place(pm["d"])) and re.search(rf"\s{_PREP}\s", f" {pm['o']} "):
            pm = None  # "the mug on the table in the kitchen": the last place belongs to the destination
        pm = pm or re.match(rf"^(?P<o>[\w\s]+?)(?: (?:from|off) (?:the )?(?P<z>[\w\s]+?))? (?:down )?(?:{_PREP}) (?:the )?(?P<d>[\w\s]+)$", body)
        if pm:
            obj = pm["o"]
            if pm["z"]:
                obj = f"{_strip_article(obj)} on the {pm['z']}"
            _record(st, _thing(obj, st), pm["d"])
            return True
        # a verb with an object only: remember it ("grab the black mug", then "leave it in the sink")
        if re.fullmatch(r"[\w\s]+", body) and not re.search(rf"\s{_PREP}\s", f" {body} "):
            th = _thing(body, st)
            if th:
                st.referent = st.pending = body if th.kind else th.names[0]
                return True
    # bare: "bottle in the fridge", "apple to the fridge", "red candle into the cabinet"
    if m := re.match(rf"^(?P<o>[\w\s]+?) (?:{_PREP}) (?:the )?(?P<d>[\w\s]+)$", c):
        if m["o"] not in ("it", "them") or st.referent:
            room = _somewhere(c[len(m["o"]) + 1:])
            if room:
                _record(st, _thing(m["o"], st), room, room=True)
            else:
                _record(st, _thing(m["o"], st), m["d"])
            return True
    # an object alone ("the red can", "a towel"): what comes next is about it
    if re.fullmatch(r"[\w\s]+", c) and _is_thing(c) and not _is_place(c):
        st.referent = st.pending = c
        return True
    # a bare place after an object was named: "..., the gray table"
    if st.pending and re.fullmatch(r"(?:the )?[\w\s]+", c) and _is_place(c):
        _record(st, Things(names=(st.pending,)), c)
        return True
    return False


def _same_box(goals: list) -> list:
    """'... into the office cabinet, and close that cabinet': the cabinet closed is the one named before."""
    out: list = []
    for g in goals:
        if isinstance(g, Toggle) and len(g.target.split()) == 1:
            named = [x for p in out for x in ((p.dest,) if isinstance(p, Move) else (p.source, p.dest) if isinstance(p, Clear) else ())
                     if x and x != g.target and x.split()[-1] == g.target]
            if len(set(named)) == 1:
                g = Toggle(named[0], g.open)
        out.append(g)
    return out


def _clearing_last(goals: list) -> list:
    """'empty the cabinet: the sponge to the counter, the book on the desk', 'everything on the tv stand to the kitchen: the
    cup in the sink ...': the things named go where they are told first; clearing what is left comes after them."""
    loose = [g for g in goals if isinstance(g, Clear) and (g.dest is None or not _names_furniture(g.dest))]
    if not loose or not any(isinstance(g, Move) for g in goals):
        return goals
    rest = [g for g in goals if g not in loose]
    last = max(i for i, g in enumerate(rest) if isinstance(g, Move))
    return rest[:last + 1] + loose + rest[last + 1:]


def _sets_and_closing(c: str, st: _State) -> bool:
    """Quantities and scope ('all the fruit ... goes in the fridge', 'everything on it goes in the cabinet') and what
    is shut after ('then close it', '... and the bedroom drawer afterwards'), read by ``planners/quantities.py``."""
    clearing = next((g for g in reversed(st.goals) if isinstance(g, Clear)), None)
    goals = quantity_goals(c, clearing.source if clearing is not None else None)
    if goals == []:
        return True
    if goals and all(_is_place(g.dest or "") for g in goals if isinstance(g, Move)) and all(
            _is_place(x) for g in goals if isinstance(g, Clear) for x in (g.source, g.dest) if x):
        if isinstance(goals[0], Clear) and clearing is not None and clearing.dest is None and goals[0].source == clearing.source:
            st.goals.remove(clearing)  # "clear the desk, everything on it goes in the cabinet": one clearing, with its place
        st.goals += goals
        return True
    moved = any(isinstance(g, (Move, Clear, IfEmpty)) for g in st.goals)
    closing = closing_goals(c, moved, bool(st.goals) and isinstance(st.goals[-1], Toggle) and not st.goals[-1].open)
    if closing is None:
        return False
    toggles, after = closing
    if not all(_is_place(t.target) for t in toggles):
        return False
    if after:
        st.close_after.append("it")
    st.goals += toggles
    return True


def _is_thing(phrase: str) -> bool:
    return _phrase_ok(phrase, None, places=False)


def _is_place(phrase: str) -> bool:
    words = " ".join(w for w in phrase.split() if w not in STOP)
    return any(p in words for p in VOCAB_PLACES | ROOM_WORDS)


# ---- conditions --------------------------------------------------------------------------------
def _condition(t: str) -> IfEmpty | None:
    """The ways of saying 'if the box is empty put X in it, otherwise on Y'."""
    o, b, z = r"(?:the )?(?P<o>[\w\s]+?)", r"(?:the )?(?P<b>[\w\s]+?)", r"(?:the )?(?P<z>[\w\s]+?)"
    empty = r"(?:is empty|has nothing in it|is empty inside)"
    full = r"(?:there is (?:already )?something in (?:the )?(?P<b2>[\w\s]+?)|(?:the )?(?P<b3>[\w\s]+?) has something in it)"
    pats = [
        rf"^if {b} {empty},? (?:put|place) {o} (?:inside it|in it|in there|there|inside)[,;.]? (?:otherwise|if not|else),? (?:put it )?(?:on|in|onto|into) {z}$",
        rf"^if {full},? (?:put|place) {o} (?:on|in|onto|into) {z}[,;.]? (?:otherwise|if not|else),? (?:put it )?(?:in|into|inside) (?:the )?(?P<b>[\w\s]+?)$",
        rf"^(?:put|place) {o} (?:in|into|inside) {b} unless (?:something|anything) is (?:already )?in (?:there|it)[,;.]? (?:in that case |then |if so )?(?:put it )?(?:on |in |onto |into )?{z}$",
        rf"^{o} (?:goes|go|should go) (?:in|into) {b} unless (?:something|anything) is (?:already )?in (?:there|it)[,;.]? (?:in that case |then |if so )?(?:on |in )?{z}$",
        rf"^{o} (?:goes|go|should go) (?:in|into) {b} if (?:the )?(?:[\w\s]+?) {empty}[,;.]? (?:if not|otherwise|else),? (?:then )?(?:on |in |onto )?{z}$",
        rf"^{o} (?:goes|go|should go) (?:in|into) {b} if there is nothing in (?:it|there)[,;.]? (?:if not|otherwise|else),? (?:then )?(?:on |in |onto )?{z}$",
        rf"^(?:can|could) {o} go (?:in|into) {b}[,;.]? only if it is empty[,;.]? (?:else|otherwise|if not),? (?:then )?(?:on |in )?{z}$",
        rf"^(?:put|place) {o} (?:in|into) {b} if it is empty[,;.]? (?:otherwise|else|if not),? (?:then )?(?:on |in )?{z}$",
        rf"^(?:put|place) {o} (?:in|into) {b} if there is nothing in (?:there|it)[,;.]? (?:if not|otherwise|else),? (?:then )?(?:on |in )?{z}$",
    ]
    for pat in pats:
        if m := re.match(pat, t):
            g = m.groupdict()
            box = g.get("b") or g.get("b2") or g.get("b3") or ""
            return IfEmpty(_strip_article(box), _strip_article(g["o"]), _strip_article(g["z"]))
    return None


# ---- checking phrases -----------------------------------------------------------------------------
def _phrase_ok(phrase: str, embedder: TextEmbedder | None, places: bool) -> bool:
    """Whether a phrase names something of the vocabulary (objects, or places and rooms)."""
    head = re.split(rf"\s+{_LOC}\s+(?:the\s+)?", phrase, maxsplit=1)[0]
    toks = [w for w in re.findall(r"[a-z]+", head) if w not in STOP]
    words = [singular(w) for w in toks if w not in COLOUR_WORDS] or [singular(w) for w in toks[-1:]]
    if not words:
        return False
    text = " ".join(words)
    vocab = (VOCAB_PLACES | ROOM_WORDS) if places else VOCAB_OBJECTS
    if any(v in text or text in v for v in vocab) or any(SYNONYMS.get(w, "") in vocab for w in words):
        return True
    if any(w in v.split() for w in words for v in vocab if len(w) > 2):
        return True
    if embedder is not None and embedder.embed(text) is not None:
        return max(embedder.similarity(text, v) for v in vocab) >= EMBED_THRESHOLD
    return False


def _check(plan: Plan, embedder: TextEmbedder | None) -> list[str]:
    bad: list[str] = []
    for g in plan.goals:
        objs: list[str] = []
        places: list[str] = []
        if isinstance(g, Move):
            objs = list(g.things.names) + ([g.things.kind] if g.things.kind else [])
            places = [g.dest] if g.dest else []
        elif isinstance(g, Toggle):
            places = [g.target]
        elif isinstance(g, Fetch):
            objs = [g.thing]
        elif isinstance(g, GoTo):  # anything may be gone to: a thing, a piece of furniture or a room
            if not _phrase_ok(g.place, embedder, places=True) and not _phrase_ok(g.place, embedder, places=False):
                bad.append(g.place)
        elif isinstance(g, IfEmpty):
            objs, places = [g.thing], [g.container, g.otherwise]
        elif isinstance(g, (IfAbsent, Keep)):
            objs = [g.kind]
            places = [g.container if isinstance(g, IfAbsent) else g.dest]
        elif isinstance(g, Clear):
            places = [g.source] + ([g.dest] if g.dest else [])
        bad += [o for o in objs if not _phrase_ok(o, embedder, places=False)]
        bad += [p for p in places if not _phrase_ok(p, embedder, places=True)]
    return bad


_KNOWN_WORDS = {w for v in VOCAB_OBJECTS | VOCAB_PLACES | ROOM_WORDS | set(SYNONYMS) for w in v.split()} | COLOUR_WORDS \
    | {"room", "something", "drink", "eat", "thing", "grey"}


def _strict(plan: Plan) -> bool:
    """Every word of every phrase is a vocabulary, colour or little word: the older grammar read it
    without swallowing other words into a name ("could it", "everything on it can")."""
    phrases: list[str] = []
    for g in plan.goals:
        if isinstance(g, Move):
            phrases += list(g.things.names) + [x for x in (g.things.kind, g.dest) if x]
        elif isinstance(g, Toggle):
            phrases.append(g.target)
        elif isinstance(g, Fetch):
            phrases.append(g.thing)
        elif isinstance(g, GoTo):
            phrases.append(g.place)
        elif isinstance(g, IfEmpty):
            phrases += [g.thing, g.container, g.otherwise]
        elif isinstance(g, IfAbsent):
            phrases += [g.kind, g.container]
        elif isinstance(g, Keep):
            phrases += [g.kind, g.dest]
        elif isinstance(g, Clear):
            phrases += [x for x in (g.source, g.dest) if x]
    for p in phrases:
        ws = re.findall(r"[a-z]+", p.lower())
        if any(w in ("the", "a", "an", "of", "my") for w in ws[1:]):  # "can the red mug": words swallowed
            return False
        if not all(singular(w) in _KNOWN_WORDS or w in _KNOWN_WORDS or w in STOP for w in ws):
            return False
    return True


def understand(text: str, embedder: TextEmbedder | None = SHARED_EMBEDDER) -> Understanding:
    """Read a free-form instruction; ``unsure`` lists what could not be read or grounded."""
    text = tidy(text)  # emoji, sign-offs and "hey robot" say nothing about the goal
    t = _normalise(text)
    kind_word = re.search(r"\b(?:some|any)thing to (?:eat|drink|clean with|play with)\b", t)  # one phrase: its "to" is no destination
    t = re.sub(r"\b(some|any)thing to (eat|drink|clean with|play with)\b", lambda m: f"{m[1]}thing_to_{m[2].replace(' ', '_')}", t)
    if len(_sentences(t)) == 1 and not kind_word:  # one sentence: the older, stricter grammar first, when it reads every word
        legacy = _legacy(text, embedder)
        if legacy is not None:
            return Understanding(legacy, [])
    cond = None
    for candidate in (t, re.sub(_ASKING, "", t), " ".join(re.sub(_ASKING, "", s) for s in _sentences(t))):
        cond = _condition(re.sub(r"[?.]", ",", candidate).replace(",,", ",").strip(" ,").replace(" ,", ","))
        cond = cond or _condition(re.sub(r"\s*[?.;,]\s*", " ", candidate).strip())
        if cond:
            break
    units = [u for u in re.split(r"(?<=[a-z0-9])\s*[.?!]\s+|\s*[.?!]$", t) if u.strip()]
    said = [condition(re.sub(_ASKING, "", u)) for u in units]
    if cond and not any(said):
        plan = Plan(goals=[cond])
        return Understanding(plan, _check(plan, embedder))
    st = _State()
    for found in said:
        if found is not None:
            st.goals.append(found[0])
            st.close_after += ["it"] if found[1] else []
    t = ". ".join(u for u, found in zip(units, said) if found is None)
    failed: list[str] = []
    clauses = [c for sentence in _sentences(t) for c in _clauses(_lists(re.sub(_ASKING, "", sentence), st))]
    for i, c in enumerate(clauses):
        if not _clause(c, st, " ".join(clauses[i + 1:])):
            failed.append(c)
    if st.pending and not st.goals:
        failed.append(f"what to do with {st.pending}")
    plan = Plan(goals=_same_box(_clearing_last(st.goals)), close_after=st.close_after)
    unsure = [re.sub(r"thing_to_(\w+)", lambda m: "thing to " + m[1].replace("_", " "), u) for u in st.unsure + failed]
    if plan.goals and not unsure:
        unsure = _check(plan, embedder)
    if not plan.goals or unsure:
        legacy = _legacy(text, embedder)
        if legacy is not None:
            return Understanding(legacy, [])
    if not plan.goals:
        return Understanding(plan, unsure or [text.strip()])
    return Understanding(plan, unsure)


def _legacy(text: str, embedder: TextEmbedder | None) -> Plan | None:
    """The older grammar's reading (clear, keep N, every X that is not ..., if there is no ...), when it
    reads every word of its phrases as a known thing; None otherwise. Chatty openers and closers
    ("hi! i have a favour to ask.", ", that would be lovely.") are dropped first."""
    plain = text.strip().lower().replace("’", "'")
    for _ in range(3):  # openers come in runs ("oh, hello. when you have a moment, ...")
        for pat in _COURTESY:
            plain = re.sub(pat, "", plain).strip()
    for candidate in dict.fromkeys((text, plain)):
        try:
            plan = parse_instruction(candidate)
        except UnsupportedInstruction:
            continue
        plan.goals = [Move(g.things, g.dest, "room") if isinstance(g, Move) and g.dest in ROOM_WORDS else g for g in plan.goals]
        if _strict(plan) and not _check(plan, embedder):
            return plan
    return None


def _lists(sentence: str, st: _State) -> str:
    """'bring the a, the b and the c to the d' / 'the a, b and c all go in the d': one goal for the
    listed things (recorded here; the sentence is consumed)."""
    item = r"(?:the |my )?[\w\s]+?"
    body = rf"(?P<list>{item}(?:, {item})*,? and {item})"
    m = re.match(rf"^(?:{_VERB}|collect|gather) {body}(?: and (?:put|bring|take) them(?: all)?)? (?:{_PREP}) (?:the )?(?P<d>[\w\s]+)$",
                 sentence) or re.match(rf"^{body} (?:all )?(?:go|belong|should go) (?:{_PREP}) (?:the )?(?P<d>[\w\s]+)$", sentence)
    if not m:
        return sentence
    items = [_strip_article(x) for x in re.split(r",\s*(?:and\s+)?|\s+and\s+", m["list"]) if x.strip()]
    if not all(_is_thing(x) and not re.search(rf"\s{_PREP}\s", f" {x} ") for x in items):
        return sentence
    _record(st, Things(names=tuple(items)), m["d"])
    return ""


def understand_request(text: str, embedder: TextEmbedder | None = SHARED_EMBEDDER) -> Understanding:
    """The reading the heuristic planner acts on. Requests with a correction, an open choice, a place given
    by a reason or a typo are read for their mentions (``homiebot.planners.reading``), as is anything the
    clause reader above cannot read whole or reads into phrases with words the household vocabulary
    lacks ("the sofa will go bad if it stays out" is no place); its other confident readings stand. A request of
    several sentences that this leaves a part of unread is read one sentence at a time, when that reads more of it."""
    return _sentence_by_sentence(text, _to_the_place_alone(text, _request(text, embedder)), embedder)


def _sentence_by_sentence(text: str, read: Understanding, embedder: TextEmbedder | None) -> Understanding:
    """'The orange goes in the fridge if ..., otherwise .... Oh, and the lemon - no, the cup - goes in the sink.': each
    sentence read by the reader that suits it (a condition here, a correction there); used only when it leaves less
    of the request unread than the whole-text reading, and never when a sentence cannot be read."""
    from homiebot.planners.coverage import unread_parts
    from homiebot.planners.reading import mentions, tokens

    before = unread_parts(text, read.plan)
    if not read.unsure and not before:
        return read
    sentences = [x for x in re.split(r"(?<=[.!?;])\s+", tidy(text)) if x.strip()]
    if len(sentences) < 2:
        return read
    goals: list = []
    close_after: list[str] = []
    for sentence in sentences:
        part = _to_the_place_alone(sentence, _request(sentence, embedder))
        if not part.plan.goals and not mentions(tokens(sentence)):
            continue  # "this is not a good place for them."
        if part.unsure or not part.plan.goals:
            return read
        goals += [g for g in part.plan.goals if g not in goals]
        close_after += [c for c in part.plan.close_after if c not in close_after]
    plan = Plan(goals=goals, close_after=close_after)
    after = unread_parts(text, plan)
    if (read.unsure and not after) or len(after) < len(before):
        return Understanding(plan, [])
    return read


def _request(text: str, embedder: TextEmbedder | None) -> Understanding:
    from homiebot.planners.coverage import unread_parts  # here: coverage imports reading, which imports this module's neighbours
    from homiebot.planners.reading import VOCABULARY, read_request

    clauses = understand(text, embedder)
    mentions = read_request(text)
    if not mentions.plan.goals or mentions.unsure:
        return clauses
    if _torn(clauses.plan) and not _torn(mentions.plan):
        return Understanding(mentions.plan, [])  # "the soap and the book in the cabinet: the soap in ..., the book on ..."
    if clauses.confident and _beyond_mentions(clauses.plan) and len(unread_parts(text, clauses.plan)) < len(unread_parts(text, mentions.plan)):
        return clauses  # a condition or a set of things the mentions cannot hold, and nothing more left out
    if clauses.confident and not mentions.cues and (_beyond_mentions(clauses.plan) or _in_words(clauses.plan, VOCABULARY | set(CATEGORY_WORDS.values()))):
        if unread_parts(text, clauses.plan) and not unread_parts(text, mentions.plan):
            return Understanding(mentions.plan, [])  # the clauses left a part out that the mentions hold
        return clauses  # conditions, counts, clearing, "every X", closing at the end; or a plain request read whole
    return Understanding(mentions.plan, [])


def _names_furniture(phrase: str) -> bool:
    ws = {singular(w) for w in phrase.split()}
    return any(set(t.split("_")) <= ws for t in RECEPTACLE_TYPES)


def _torn(plan: Plan) -> bool:
    """Whether a plan sends one thing, named alike, to two different places: a misreading, never a request."""
    dests: dict[str, set[str]] = {}
    for g in plan.goals:
        if isinstance(g, Move) and g.dest:
            for name in g.things.names:
                dests.setdefault(name, set()).add(g.dest)
    return any(len(d) > 1 for d in dests.values())


def _to_the_place_alone(text: str, read: Understanding) -> Understanding:
    """'sponge on the bed. ew. bathroom sink please': one thing, and a place said on its own after it, is where it
    goes (the place before it is where it is)."""
    from homiebot.planners.coverage import alone_place, unread_parts

    moves = [g for g in read.plan.goals if isinstance(g, Move)]
    if len(read.plan.goals) != 1 or len(moves) != 1 or not moves[0].things.names or moves[0].dest is None:
        return read
    place = alone_place(text)
    if place is None or place == moves[0].dest or f"onto or into the {place}" not in unread_parts(text, read.plan):
        return read
    move = moves[0]
    names = tuple(n if " on the " in n or " in the " in n else f"{n} on the {move.dest}" for n in move.things.names)
    return Understanding(Plan(goals=[Move(Things(names=names), place)], close_after=read.plan.close_after), read.unsure)


def _in_words(plan: Plan, vocabulary: set[str]) -> bool:
    """Whether every phrase of a plan's goals is made of the given words (articles and colours allowed)."""
    phrases: list[str] = []
    for g in plan.goals:
        if isinstance(g, Move):
            phrases += [*g.things.names, *([g.things.kind] if g.things.kind else []), *([g.dest] if g.dest else [])]
        elif isinstance(g, Toggle):
            phrases.append(g.target)
        elif isinstance(g, Fetch):
            phrases.append(g.thing)
        else:
            return False
    words = {w for p in phrases for w in re.findall(r"[a-z]+", p.lower())}
    return bool(phrases) and words <= vocabulary | STOP | COLOUR_WORDS


def _beyond_mentions(plan: Plan) -> bool:
    """Whether a plan holds goals only the clause reader makes."""
    return bool(plan.close_after) or any(
        isinstance(g, (IfAbsent, IfEmpty, Keep, Clear)) or (isinstance(g, Move) and (g.dest_kind is not None or g.dest is None
                                                                                     or (g.things.kind and g.things.count != 1)))
        for g in plan.goals)
