"""Reading a request for what matters: the things, places and rooms it names or implies, and the end
state it wants, whatever the words around them.

People do not speak in templates. They misspell ("the drwer in the ofice"), correct themselves ("the red
one - no sorry, the blue one"), leave the choice open ("either cup, does not matter which"), give a
reason instead of a place ("it needs washing" -> the sink), add asides ("no idea how it got there") and
use non-native grammar ("please you close it", "the book of the tv stand"). This reader does not match
sentence forms. It

1. spells every word against the household vocabulary (object classes, furniture, rooms, colours and the
   few verbs and particles that carry meaning), so a typo becomes the word it was meant to be;
2. finds the mentions: a thing (colour and class, or a colour alone: "the black one"), a place (furniture,
   with the room that qualifies it: "the cabinet in the office", "the kitchen drawer") or a room;
3. applies corrections (a mention after "no sorry", "I mean", "not the X, the Y" replaces the mention of
   the same kind before it) and drops what the request says to leave alone;
4. gives each place a role from the words before it (a destination after in / on / to / into, a source
   after from / off / out of / of, or a thing's location when another destination follows), and reads the
   wanted end state: moves (each thing to the next destination, or the one a reason implies), opening or
   closing (the verb, or the state a sentence complains about), fetching, going somewhere.

The result is the goal records of ``homiebot.planners.instructions``; what it could not place is listed
as unsure, so the planner asks or reports instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from homiebot.core.vocabulary import COLORS, OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.planners.instructions import Fetch, GoTo, Move, Plan, Things, Toggle
from homiebot.planners.phrasing import tidy

# ---- the vocabulary, as people say it -------------------------------------------------------------
OBJECT_WORDS: dict[str, str] = {c.replace("_", " "): c for c in OBJECT_CLASSES} | {
    "teddy": "teddy_bear", "bear": "teddy_bear", "block": "toy_block", "cereal": "cereal_box", "crackers": "cracker_box",
    "cracker": "cracker_box", "soup": "soup_can", "tin": "can", "soda": "can", "remote control": "remote", "tv remote": "remote",
    "clicker": "remote", "controller": "remote", "soap bar": "soap", "bar of soap": "soap", "tea towel": "towel",
    "hand towel": "towel", "glass": "cup", "beaker": "cup", "coffee mug": "mug", "teddybear": "teddy_bear"}
PLACE_WORDS: dict[str, str] = {r.replace("_", " "): r for r in RECEPTACLE_TYPES} | {
    "counter": "kitchen_counter", "worktop": "kitchen_counter", "countertop": "kitchen_counter", "counter top": "kitchen_counter",
    "couch": "sofa", "settee": "sofa", "tv": "tv_stand", "telly": "tv_stand", "tv table": "tv_stand", "tv unit": "tv_stand",
    "television": "tv_stand", "tv cabinet": "tv_stand", "cupboard": "cabinet", "refrigerator": "fridge", "fridge freezer": "fridge",
    "bookshelf": "shelf", "bookcase": "shelf", "shelves": "shelf", "dresser": "drawer", "chest of drawers": "drawer",
    "drawers": "drawer", "basin": "sink", "washbasin": "sink", "wash basin": "sink", "dining table": "table",
    "kitchen table": "table", "coffee table": "table", "work desk": "desk", "writing desk": "desk", "armchair": "chair"}
ROOM_WORDS: dict[str, str] = {"kitchen": "kitchen", "bathroom": "bathroom", "bedroom": "bedroom", "office": "office",
                              "living room": "living_room", "lounge": "living_room", "sitting room": "living_room",
                              "dining room": "dining_room", "study": "office", "hallway": "hallway", "hall": "hallway",
                              "washroom": "bathroom", "loo": "bathroom", "toilet": "bathroom", "dining": "dining_room"}
# furniture phrases that also say the room ("the dining table" is the dining room's)
PLACE_ROOMS = {"dining table": "dining_room", "kitchen table": "kitchen", "coffee table": "living_room",
               "kitchen sink": "kitchen", "kitchen cabinet": "kitchen", "kitchen drawer": "kitchen"}
COLOURS = {c: c for c in COLORS} | {"grey": "gray", "golden": "yellow", "violet": "purple", "cream": "beige", "tan": "beige",
                                    "navy": "blue", "dark": "", "light": ""}
# reasons that say where a thing belongs ("it needs washing" -> the sink)
REASONS = (
    (r"\b(?:wash\w*|rinse\w*|dirty|filthy|mucky|grubby|scrub\w*|clean(?:ed|ing)? up|soak\w*)\b", "sink"),
    (r"\b(?:go(?:es|ing)? off|gone off|go(?:es|ing)? bad|gone bad|rot\w*|spoil\w*|(?:keep\w*|kept) (?:better|fresh|cold|cool)|"
     r"cold|cool|chill\w*|fresh|warm|melt\w*|perishable|refrigerat\w*|ripe|over ?ripe|mou?ldy?)\b", "fridge"),
)
KITCHENWARE = {c for c, cls in OBJECT_CLASSES.items() if cls.category in ("kitchenware", "food", "fruit")}
# words that carry meaning besides the vocabulary's nouns; typos of them are corrected too
VERBS = {"put", "place", "move", "bring", "take", "carry", "set", "drop", "leave", "get", "grab", "fetch", "pop", "stick",
         "return", "toss", "store", "stash", "open", "close", "shut", "find", "look", "go", "come", "walk", "head", "goes",
         "belongs", "belong", "should", "needs", "need", "want", "like", "keep", "hide", "lay", "hang", "transfer", "give",
         "forget", "either", "whichever", "please", "the", "sorry", "actually"}
PARTICLES = {"the", "a", "an", "and", "or", "on", "in", "into", "onto", "inside", "from", "off", "out", "of", "to", "at", "it",
             "them", "both", "either", "any", "one", "ones", "thing", "not", "no", "sorry", "wait", "mean", "actually", "instead",
             "rather", "please", "there", "here", "back", "away", "up", "down", "over", "next", "near", "by", "too", "also",
             "then", "is", "are", "was", "left", "open", "closed", "stays", "stay", "where", "which", "whichever", "matter",
             "does", "fine", "somewhere", "top", "me", "my", "your", "this", "that", "these", "those", "its", "with",
             "for", "you", "can", "could", "would", "will", "i", "we", "be", "all", "every", "each", "other", "another"}
# short everyday words never taken for a typo of a vocabulary word
COMMON = {"for", "and", "but", "are", "was", "has", "had", "his", "her", "our", "who", "why", "how", "now", "new", "old", "see",
          "way", "day", "yet", "top", "lot", "bit", "bin", "box", "cap", "hat", "pan", "pot", "car", "cat", "dog", "end", "yes",
          "did", "let", "may", "use", "man", "too", "two", "out", "off", "own", "far", "few", "bad", "sad", "mad", "big", "hot",
          "wet", "dry", "ask", "sit", "lid", "tub", "rug", "mat", "bag", "job", "fun", "run", "ran", "got", "get", "set", "pet",
          "bet", "led", "fed", "ted", "ago", "ever", "even", "over", "very", "some", "more", "most", "much", "many", "such",
          "been", "being", "have", "this", "them", "then", "than", "they", "were", "what", "when", "with", "your", "just",
          "also", "only", "once", "else", "here", "there", "where", "which", "while", "still", "again", "after", "never",
          "always", "thing", "things", "something", "everything", "nothing", "someone", "getting", "sitting", "setting",
          "swap", "swaps", "beer", "beers", "mum", "mums"}  # "swap them" is not soap, "a beer" not a teddy bear
_STAY = re.compile(r"\b(?:stays?|staying) (?:where (?:it|they) (?:is|are)|put|as (?:it|they) (?:is|are))\b|"
                   r"\b(?:leave|don'?t touch|do not touch|don'?t move|do not move)\b.*\b(?:alone|where (?:it|they) (?:is|are)|be)\b")
_CORRECTION = r"(?:no,? sorry|sorry,? no|no,? wait|wait,? no|sorry|no wait|wait|i mean|i meant|actually|scratch that|" \
              r"make that|or rather|rather|correction|my bad|oops|no no|nope|nah|hang on|hold on|no|er|erm|um|uh)"
_CANCEL = re.compile(r"\b(?:forget|leave|never mind|skip|don'?t bother with|do not bother with|ignore)\b(?: about)?(?: the| that| my)?$")
_ANY = re.compile(r"\b(?:either|any(?:one)?|whichever|d[oe]+s?e? ?n[o']?t (?:matter|mind|care)|not fussed|i don'?t mind|"
                  r"matter which|one of (?:the|them|those|my)|any of them)\b")
_DEST_PREP = {"in", "into", "on", "onto", "inside", "to", "at", "in to", "on to", "next to", "by", "near", "under", "towards"}
_SOURCE_PREP = {"from", "off", "out of", "of", "out"}
_NEGATION = re.compile(r"\b(?:not|n't|never|no longer|shouldn'?t|should not|doesn'?t|does not|don'?t|do not|isn'?t|is not)"
                       r"(?: \w+){0,3}$")
_DETERMINERS = {"the", "a", "an", "my", "your", "that", "this", "it", "them", "both", "up", "all", "every", "each", "our", "his",
                "her", "their", "those", "these"}


@dataclass(frozen=True)
class Mention:
    """A thing, place or room the request names; ``start``/``end`` are token positions."""

    kind: str  # "object", "place", "room", or "ref" ("the one in the bathroom": the kind of the mention before)
    canon: str | None  # object class, receptacle type or room; None for a thing named by colour alone
    start: int
    end: int
    colour: str | None = None
    room: str | None = None  # the room that qualifies it ("the cabinet in the office")
    location: str | None = None  # for a thing: where it is said to be, with its preposition ("on the desk")
    anyone: bool = False  # any thing of the class will do
    plural: bool = False
    restated: bool = False  # a place said again after a correction, moved to where the corrected one was

    def phrase(self) -> str:
        """How the planner's grounding reads it: 'red mug in the desk', 'office cabinet', 'black thing'."""
        head = (self.canon or "thing").replace("_", " ")
        if self.kind == "place":
            room = (self.room or "").replace("_", " ")
            return " ".join(w for w in (room, self.colour, head) if w)
        text = " ".join(w for w in (self.colour, head) if w)
        where = self.location or (f"in the {self.room.replace('_', ' ')}" if self.room else None)
        return f"{text} {where}" if where else text

    def where(self) -> str:
        """This place as a thing's location: 'on the brown table', 'in the office cabinet', 'in the kitchen'."""
        on = self.kind == "place" and self.canon in RECEPTACLE_TYPES and RECEPTACLE_TYPES[self.canon].relation == "on"
        return f"{'on' if on else 'in'} the {self.phrase().replace('_', ' ')}"


@dataclass
class Reading:
    """What the request asks for (a ``Plan``), what could not be placed, and what the reading relied on
    (``cues``: a correction, an open choice, a reason for a place, a corrected typo)."""

    plan: Plan
    unsure: list[str] = field(default_factory=list)
    cues: set[str] = field(default_factory=set)


# ---- words ----------------------------------------------------------------------------------------
NOUNS = {w for table in (OBJECT_WORDS, PLACE_WORDS, ROOM_WORDS, COLOURS) for key in table for w in key.split()}
VOCABULARY = NOUNS | VERBS | PARTICLES
TARGETS = NOUNS | {"open", "close", "shut", "put", "bring", "either", "whichever", "please", "the", "sorry", "actually", "fridge"}


def _distance(a: str, b: str) -> int:
    """Edit distance with transpositions (Damerau-Levenshtein, optimal string alignment)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def _subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


@lru_cache(maxsize=4096)
def spell(word: str) -> str:
    """The vocabulary word a misspelled word stands for ('drwer' -> 'drawer', 'bathrom' -> 'bathroom', 'teh'
    -> 'the'); any other word unchanged. A guess keeps the first letter and must be unambiguous."""
    if word in VOCABULARY or word in COMMON or len(word) < 3 or not word.isalpha():
        return word
    if word.endswith("s") and (word[:-1] in NOUNS or word[:-2] in NOUNS):
        return word
    if word.endswith("s") and len(word) > 4 and spell(word[:-1]) in NOUNS:  # "towls": the plural of a typo
        return spell(word[:-1]) + "s"
    limit = 1 if len(word) <= 6 else 2
    scored = [(_distance(word, w), sorted(word) != sorted(w), not _subsequence(word, w), w) for w in TARGETS
              if w[0] == word[0] and abs(len(w) - len(word)) <= limit and len(w) >= 3]
    best = sorted(x for x in scored if x[0] <= limit)
    if not best or (len(best) > 1 and best[1][:3] == best[0][:3]):  # a tie: no guess
        return word
    return best[0][3]


def tokens(text: str) -> list[str]:
    """Lower-case words and the punctuation that separates clauses, typos corrected."""
    return [spell(w) for w in _raw_tokens(text)]


def _raw_tokens(text: str) -> list[str]:
    t = re.sub(r"(?<=[a-z]):", ",", tidy(text).lower().replace("’", "'"))  # "the soap and the book in the cabinet: ..." is a pause
    t = re.sub(r"\s\+\s", " and ", t)  # "can + bottle"
    t = re.sub(r"\b(\w+)n't\b", r"\1 not", t)
    t = re.sub(r"\b(?:it|that|there|everything|what|where)'s\b", lambda m: m.group(0)[:-2] + " is", t)
    return [w[:-2] if w.endswith("'s") else w for w in re.findall(r"[a-z]+(?:'[a-z]+)?|[.,;!?]", t)]


def _match(words: list[str], i: int, table: dict[str, str]) -> tuple[str, int, bool] | None:
    """The longest table phrase starting at ``i`` (plural allowed on its last word): (key, length, plural)."""
    for n in (3, 2, 1):
        if i + n > len(words):
            continue
        chunk = words[i:i + n]
        key = " ".join(chunk)
        if key in table:
            return key, n, False
        last = chunk[-1]
        for stem in (last[:-2] if last.endswith("es") else None, last[:-1] if last.endswith("s") else None):
            if stem and " ".join([*chunk[:-1], stem]) in table:
                return " ".join([*chunk[:-1], stem]), n, True
    return None


# ---- mentions -------------------------------------------------------------------------------------
def mentions(words: list[str]) -> list[Mention]:
    """Every thing, place and room the words name, in order, with colours and room qualifiers attached."""
    found: list[Mention] = []
    i = 0
    while i < len(words):
        m = _mention_at(words, i)
        if m is None:
            i += 1
            continue
        found.append(m)
        i = m.end
    return _resolve_refs(words, _qualify(words, found))


def _mention_at(words: list[str], i: int) -> Mention | None:
    colour, j = None, i
    if words[j] in COLOURS and COLOURS[words[j]] and not (words[j] in OBJECT_WORDS and _bare_noun(words, j)):
        colour, j = COLOURS[words[j]], j + 1
    elif words[j] in COLOURS and j + 1 < len(words) and words[j + 1] in COLOURS and words[j] in ("dark", "light"):
        colour, j = COLOURS[words[j + 1]] or None, j + 2
    if j >= len(words):
        return None
    room_first = _match(words, j, ROOM_WORDS)
    place = _match(words, j, PLACE_WORDS)
    obj = _match(words, j, OBJECT_WORDS)
    if room_first and not (place and place[1] >= room_first[1]):
        after = _match(words, j + room_first[1], PLACE_WORDS) if j + room_first[1] < len(words) else None
        if after:  # "the kitchen drawer", "the bathroom cabinet"
            key, n, plural = after
            return Mention("place", PLACE_WORDS[key], i, j + room_first[1] + n, colour, ROOM_WORDS[room_first[0]], plural=plural)
        if colour is None:
            return Mention("room", ROOM_WORDS[room_first[0]], i, j + room_first[1])
    if place and (not obj or place[1] >= obj[1]) and not _object_use(words, j, place[0]):
        key, n, plural = place
        return Mention("place", PLACE_WORDS[key], i, j + n, colour, PLACE_ROOMS.get(key), plural=plural)
    if obj and not _modal_can(words, j, obj[0]):
        key, n, plural = obj
        return Mention("object", OBJECT_WORDS[key], i, j + n, colour, plural=plural)
    if colour and words[j] in ("one", "thing", "ones", "item", "object", "stuff", "things"):
        return Mention("object", None, i, j + 1, colour)
    if colour is None and words[j] in ("one", "ones") and j > 0 and words[j - 1] in ("the", "that", "this", "other") and \
            j + 2 < len(words) and words[j + 1] in ("in", "on", "from", "by", "near", "inside"):
        return Mention("ref", None, i, j + 1, plural=words[j] == "ones")
    return None


def _bare_noun(words: list[str], j: int) -> bool:
    """'orange' naming the fruit: not followed by a thing it could colour."""
    nxt = words[j + 1] if j + 1 < len(words) else ""
    return not (nxt in NOUNS and nxt not in COLOURS and nxt not in ROOM_WORDS) and nxt not in ("one", "thing", "ones", "item")


def _modal_can(words: list[str], j: int, key: str) -> bool:
    """'can' that asks ("can you", "i can") rather than names a can."""
    if key != "can":
        return False
    before = words[j - 1] if j else ""
    after = words[j + 1] if j + 1 < len(words) else ""
    if after in ("and", "or", "from", "on", "in", "of", "to", "into", ",", "."):
        return False  # "can and bottle from the living room": the thing
    return after in ("you", "i", "we", "u", "it", "be", "not", "someone", "never", "go", "stay") or before in ("i", "you", "we", "", ",", ".", "it")


def _object_use(words: list[str], j: int, key: str) -> bool:
    """A furniture word used as a thing's name ('the tv remote')."""
    return key == "tv" and j + 1 < len(words) and words[j + 1] == "remote"


def _qualify(words: list[str], found: list[Mention]) -> list[Mention]:
    """Attach a room to the mention it qualifies ('the cabinet in the office', 'the mug in the kitchen',
    'cabinet of living room', 'the ones in the kitchen, the bedroom and the office') and drop that room
    as a mention of its own."""
    out: list[Mention] = []
    for m in found:
        if m.kind == "room" and out:
            prev = out[-1]
            gap = words[prev.end:m.start]
            if prev.kind in ("place", "object", "ref") and gap and gap[-1] in ("the", "in", "of", "from", "inside") and \
                    set(gap) <= {"in", "the", "of", "from", "inside"} and not (prev.kind == "object" and "from" in gap):
                if prev.room is None:
                    out[-1] = replace(prev, room=m.canon, end=m.end)
                    continue
            if prev.kind in ("place", "ref") and prev.room is not None and set(gap) <= {",", "and", "the", "also"} and gap:
                out.append(replace(prev, room=m.canon, start=m.start, end=m.end))  # a list of rooms for one kind of place
                continue
        out.append(m)
    return out


def _resolve_refs(words: list[str], found: list[Mention]) -> list[Mention]:
    """'the one in the bathroom': the kind and class of the mention before it (after a correction, of the
    thing before it: people correct which thing more than where it goes)."""
    out: list[Mention] = []
    for m in found:
        if m.kind == "ref":
            correcting = bool(re.search(rf"\b(?:{_CORRECTION})\b", " ".join(words[max(0, m.start - 4):m.start])))
            kinds = ("object",) if correcting and any(p.kind == "object" for p in out) else ("object", "place")
            before = next((p for p in reversed(out) if p.kind in kinds), None)
            if before is None:
                continue
            m = replace(m, kind=before.kind, canon=before.canon)
        out.append(m)
    return out


# ---- corrections, cancellations and asides ----------------------------------------------------------
def _corrected(words: list[str], found: list[Mention]) -> tuple[list[Mention], bool]:
    """A mention after a correction ('no sorry', 'I mean', 'not the X, the Y') replaces the last mention of
    its kind before it (several in a row describe one thing: 'the one in the bathroom, the orange one');
    a colour alone keeps the corrected thing's class; 'forget the X' / 'leave the X' drops X."""
    text = " ".join(words)
    marks = sorted({len(text[:m.start()].split()) for m in re.finditer(rf"(?:(?<=^)|(?<=[,.;!?] )|\b)(?:{_CORRECTION})\b", text)})
    marks = [k for k in marks if _is_correction(words, k)]
    for k, w in enumerate(words):  # "not the shelf, the tv stand" / "not the red one but the blue one"
        nxt = [m for m in found if m.start > k][:2]
        if w == "not" and len(nxt) == 2 and nxt[0].start - k <= 2 and _same_kind(nxt[0], nxt[1]) and \
                set(words[nxt[0].end:nxt[1].start]) <= {",", "but", "the", "a", "my", "rather"} and "," in words[nxt[0].end:nxt[1].start] + \
                ([","] if "but" in words[nxt[0].end:nxt[1].start] else []) and k not in marks:
            marks.append(k)
    marks.sort()
    if not marks:
        return found, False
    out = list(found)
    for k in marks:
        after = [m for m in out if m.start >= k and m.start < _clause_end(words, k)]
        before = [m for m in out if m.end <= k]
        if not after or not before:
            continue
        if _CANCEL.search(" ".join(words[k:after[0].start])):  # "no, leave the towel" / "forget the plate"
            gone = after[0]
            same = [m for m in before if _same_thing(m, gone)]
            dropped = {id(gone)} | {id(x) for x in same} | {id(p) for x in same for p in _its_places(words, out, x)}
            out = [m for m in out if id(m) not in dropped]
            continue
        new, denied = after[0], None
        if _negated(words, new):  # "sorry, not the counter, the table": the negated one names what is corrected
            rest = [m for m in after[1:] if _same_kind(m, new)]
            if not rest:
                continue
            out.remove(new)
            new, denied = rest[0], new
        said = [m for m in before if _same_kind(m, new)]
        old = next((m for m in reversed(said) if denied is not None and _same_thing(m, denied)), None) or (said[-1] if said else None)
        if old is None:
            continue
        if new.kind == "object" and _same_thing(old, new):  # "sorry, the mug goes in the sink": where it goes is said again
            out = _restated(words, out, old, new)
            continue
        merged = replace(new, kind=old.kind, canon=new.canon or old.canon, location=new.location,
                         room=new.room, start=old.start, end=old.end)
        for extra in [m for m in after if m is not new and m.start > new.start and _same_kind(m, new) and m.canon in (None, merged.canon)
                      and not _negated(words, m)]:
            merged = replace(merged, colour=extra.colour or merged.colour, room=extra.room or merged.room)
            out.remove(extra)
        if merged.room is None and merged.location is None and new.canon is None:
            merged = replace(merged, location=old.location, room=old.room)
        where = _said_where(words, out, new) if new.kind == "object" else None
        if where is not None:  # "the lemon - no, the cup in the bathroom sink - goes in the kitchen sink"
            merged = replace(merged, location=where.where())
        out = [merged if m is old else m for m in out if m is not new and m is not where]
    return sorted(out, key=lambda m: m.start), True


def _sentence_end(words: list[str], k: int) -> int:
    """Where the sentence that word ``k`` is in ends (its full stop, or the end of the request)."""
    return next((i for i in range(k, len(words)) if words[i] in (".", ";", "?", "!")), len(words))


def _said_where(words: list[str], found: list[Mention], thing: Mention) -> Mention | None:
    """The place said right after a thing named in a correction, when a destination follows in the same sentence:
    where the thing is, not where it goes."""
    end = _sentence_end(words, thing.end)
    end = min([end] + [m.start for m in found if m.kind == "object" and thing.end <= m.start < end])  # the next thing's are its own
    places = [m for m in found if m.kind in ("place", "room") and thing.end <= m.start < end]
    if len(places) < 2 or not set(words[thing.end:places[0].start]) <= {"in", "on", "inside", "from", "the", "at", "of", "out"}:
        return None
    return places[0] if _dest_like(words, places[1]) or _dest_verb(words, places[1]) else None


def _restated(words: list[str], found: list[Mention], old: Mention, new: Mention) -> list[Mention]:
    """A thing named again after a correction with where it goes ('- sorry, the mug goes in the kitchen sink, not the
    cabinet'): the places said with it replace the places the first mention said it goes to (where it is stays), and
    the denied ones go; said without a place, the second mention only repeats the first."""
    end = _sentence_end(words, new.end)
    said = [m for m in found if new.end <= m.start < end and m.kind in ("place", "room")]
    if any(m.kind == "object" for m in found if new.end <= m.start < end):
        said = []  # another thing follows: its own places are not this one's
    going = [m for m in said if not _negated(words, m)]
    if not going:
        return [m for m in found if m is not new]
    first = going[0]
    old_dests = [m for m in _its_places(words, found, old) if _dest_like(words, m)]
    if len(old_dests) > 1 and _prep(words, old_dests[0]) in ("on", "in") and old_dests[0].start - old.end <= 2:
        old_dests = old_dests[1:]  # "the cereal box on the shelf on the counter": the first place is where it is
    if not old_dests:
        return [m for m in found if m is not new]
    moved = replace(first, start=old_dests[0].start, end=old_dests[0].end, restated=True)
    gone = {id(new), *(id(m) for m in said), *(id(m) for m in old_dests)}
    return sorted([m for m in found if id(m) not in gone] + [moved], key=lambda m: m.start)


def _its_places(words: list[str], found: list[Mention], thing: Mention) -> list[Mention]:
    """The places said with a thing, up to the next thing or clause ('the soap on the shelf')."""
    out = []
    for m in found:
        if m.start < thing.end:
            continue
        if m.kind == "object" or set(words[thing.end:m.start]) & {".", ";", "?", "!"}:
            break
        if m.kind in ("place", "room"):
            out.append(m)
    return out


def _clause_end(words: list[str], k: int) -> int:
    for i in range(k, len(words)):
        if words[i] in (".", ";", "?", "!") or (words[i] in VERBS and words[i] not in ("either", "the", "sorry", "actually", "please")
                                                 and i > k + 1 and words[i] not in ("leave", "forget")):
            return i
    return len(words)


def _is_correction(words: list[str], k: int) -> bool:
    """A correction word that corrects: 'no' only before a mention ('no, the blue one'), never 'no idea'."""
    word = words[k] if k < len(words) else ""
    nxt = words[k + 1] if k + 1 < len(words) else ""
    if word == "no" and nxt not in (",", "sorry", "wait", "the", "not", "no", "i", "make", "actually", "that", "my", "leave", "forget"):
        return False
    if word == "actually" and nxt in ("is", "are", "was", "i", "it"):
        return False
    if word in ("wait", "rather") and nxt not in (",", "the", "no", "i", "make", "not", "."):
        return False
    return True


def _same_kind(a: Mention, b: Mention) -> bool:
    return a.kind == b.kind or {a.kind, b.kind} == {"place", "room"}


def _same_thing(a: Mention, b: Mention) -> bool:
    return a.kind == b.kind and a.canon == b.canon and (b.colour is None or a.colour == b.colour)


def _negated(words: list[str], m: Mention) -> bool:
    return bool(_NEGATION.search(" ".join(words[max(0, m.start - 4):m.start])))


def _left_alone(words: list[str], found: list[Mention]) -> list[Mention]:
    """Mentions of a sentence that says to leave something where it is are dropped; so are things named
    for a purpose ('a bowl for my cereal') or talked about in general ('the good plates')."""
    keep = []
    for s, e in _sentence_spans(words):
        text = " ".join(words[s:e])
        inside = [m for m in found if s <= m.start < e]
        if _STAY.search(text) and not re.search(r"\b(?:put|move|bring|take|place)\b", text):
            continue
        keep.extend(inside)
    out: list[Mention] = []
    for m in keep:
        general = next((p for p in out if p.kind == "object" and p.plural and p.colour is None and p.canon), None)
        if m.kind == "object" and m.canon is None and general is not None:  # "the plates are everywhere, the blue one ..."
            out.remove(general)
            m = replace(m, canon=general.canon)
        if m.kind == "object" and m.start > 0 and (words[m.start - 1] == "for" or words[max(0, m.start - 2)] == "for"):
            continue  # "for my cereal": a purpose
        if m.kind == "object" and m.plural and m.colour is None and any(p.kind == "object" and p.canon == m.canon for p in out):
            continue  # "we keep the good plates there": the class, talked about
        out.append(m)
    return out


def _sentence_spans(words: list[str]) -> list[tuple[int, int]]:
    spans, start = [], 0
    for i, w in enumerate(words):
        if w in (".", ";", "!", "?"):
            spans.append((start, i))
            start = i + 1
    spans.append((start, len(words)))
    return [s for s in spans if s[1] > s[0]]


def _placed_first(words: list[str], found: list[Mention]) -> list[Mention]:
    """'In the kitchen sink is a candle and a remote', 'Empty the cabinet: the sponge to ..., the book ...': a sentence
    that opens with where things are says where each thing it names is; the place is not where they go."""
    out = list(found)
    for s, e in _sentence_spans(words):
        first = next((m for m in out if s <= m.start < e), None)
        if first is None or first.kind not in ("place", "room"):
            continue
        opened = words[s] in ("in", "on", "inside") and bool(set(words[first.end:first.end + 2]) & {"is", "are", "there"})
        emptied = words[s] in ("empty", "clear", "unload") and words[first.end:first.end + 1] == [","]
        if not (opened or emptied) or not any(m.kind == "object" and first.end < m.start < e for m in out):
            continue
        for i, m in enumerate(out):
            if m.kind == "object" and first.end < m.start < e and m.location is None:
                out[i] = replace(m, location=first.where())
        if opened:  # said with 'in' or 'on', it would read as where they go; after 'empty' it cannot
            out.remove(first)
    return out


# ---- roles and goals ------------------------------------------------------------------------------
def _prep(words: list[str], m: Mention) -> str:
    """The preposition just before a mention (articles, colours and 'back' skipped): 'in', 'out of', ..."""
    k = m.start
    skipped = 0
    while k > 0 and words[k - 1] in ("the", "a", "an", "my", "your", "its", "back", "that", "this", "our") and skipped < 3:
        k -= 1
        skipped += 1
    two = " ".join(words[max(0, k - 2):k])
    if two in ("out of", "in to", "on to", "next to", "top of"):
        return "on" if two == "top of" else two
    return words[k - 1] if k > 0 else ""


def request_mentions(words: list[str]) -> list[Mention]:
    """The mentions a request's words make once corrections are applied and what it says to leave alone is dropped."""
    return _kept(words, _the_same_place(words, _corrected(words, mentions(words))[0]))


def _the_same_place(words: list[str], found: list[Mention]) -> list[Mention]:
    """'out of the living room cabinet ... and close the cabinet': a place named again with 'the' and nothing
    more is the one said before, with its room and colour."""
    out: list[Mention] = []
    for m in found:
        if m.kind == "place" and m.room is None and m.colour is None and m.start > 0 and words[m.start - 1] == "the":
            said = next((p for p in reversed(out) if p.kind == "place" and p.canon == m.canon and (p.room or p.colour)), None)
            if said is not None:
                m = replace(m, room=said.room, colour=said.colour)
        out.append(m)
    return out


def _kept(words: list[str], found: list[Mention]) -> list[Mention]:
    return [m for m in _left_alone(words, found) if not (m.kind == "object" and _negated(words, m) and not _is_location(words, m))]


def read_request(text: str) -> Reading:
    """Read a request into goals (see the module text)."""
    raw = _raw_tokens(text)
    words = [spell(w) for w in raw]
    found, corrected = _corrected(words, mentions(words))
    found = _placed_first(words, _kept(words, _the_same_place(words, found)))
    joined = " ".join(words)
    cues = {"correction"} if corrected else set()
    if words != raw:
        cues.add("typo")
    anyone = bool(_ANY.search(joined))
    if anyone:
        cues.add("either")
    implied = _implied_place(words, found)
    toggles = _toggles(words, found)
    toggled = {m.start for m in found if m.kind == "place" and any(t.target == m.phrase().replace("_", " ") for t in toggles)
               and _toggle_target(words, m)}
    objects, dest_for = _assign(words, found, toggled, anyone, implied is not None)
    moves: list = []
    unsure: list[str] = []
    for o in objects:
        dest = dest_for.get(o.start)
        things = Things(kind=o.canon.replace("_", " "), count=1) if o.anyone and o.canon else Things(names=(o.phrase(),))
        if dest is not None and _every(words, o):
            both = "both" in words[max(0, o.start - 3):o.end + 3]
            things = Things(kind=(o.canon or "").replace("_", " "), count=None, at_least=2 if both else 0)  # "both towels": each one
        if dest is not None:
            moves.append(Move(things, dest.phrase().replace("_", " "), "room" if dest.kind == "room" else None))
        elif implied:
            cues.add("reason")
            moves.append(Move(things, _implied_for(o, implied, words)))
        elif _fetching(joined):
            moves.append(Fetch(o.phrase(), pick=not re.search(r"\b(?:find|look for|where is|where are)\b", joined)))
        else:
            unsure.append(f"where the {o.phrase()} should go")
    unsure += _unread_things(words, found)
    goals = [t for t in toggles if t.open] + _unique(moves) + [t for t in toggles if not t.open]
    if not goals:
        place = next((m for m in found if m.kind in ("place", "room")), None)
        if place is not None and re.search(r"\b(?:go|come|walk|head|move|drive|navigate|get)\b", joined):
            goals.append(GoTo(place.phrase().replace("_", " ")))
    if not goals and not unsure:
        unsure.append(text.strip())
    return Reading(Plan(goals=goals), unsure, cues)


def _assign(words: list[str], found: list[Mention], toggled: set[int], anyone: bool,
            reason: bool) -> tuple[list[Mention], dict[int, Mention]]:
    """The things to move, and each one's destination (keyed by the thing's start): a place after a
    destination word goes to the things named since the last destination; a place just after a thing is
    where it is when a destination follows (or a reason gives one)."""
    objects: list[Mention] = []
    pending: list[Mention] = []
    dest_for: dict[int, Mention] = {}
    last_place: Mention | None = None
    for idx, m in enumerate(found):
        if m.kind == "object":
            same = next((o for o in objects if _same_thing(o, m) and m.location is None), None)
            if same is not None:  # "put the cup in first": the cup already named
                pending = [p for p in pending if p is not same] + [same]
                continue
            if anyone and m.canon and (m.plural or _indefinite(words, m) or _ANY.search(" ".join(words[max(0, m.start - 4):m.end + 6]))):
                m = replace(m, anyone=True)
            objects.append(m)
            pending.append(m)
            continue
        if m.start in toggled:  # opened or closed, not a destination; still what 'in it' may mean
            last_place = m
            continue
        if reason and m.kind == "room" and re.search(REASONS[0][0], " ".join(words[max(0, m.start - 8):m.start])):
            continue  # "where you wash your hands in the bathroom": the room of the place a reason implies
        prep = _prep(words, m)
        later = [n for n in found[idx + 1:] if n.start not in toggled]
        later_dest = reason or any(_dest_like(words, n) and _for_this_thing(words, found, m, n) for n in later if n.kind in ("place", "room"))
        gap = words[pending[-1].end:m.start] if pending else []
        near_thing = bool(pending) and 0 <= m.start - pending[-1].end <= 4 and not set(gap) & {
            ",", "and", "put", "go", "goes", "into", "onto", "to", "belongs", "should", "then", "both", "all", "each"}
        # "the remote, it is in the cabinet": said of the thing just named
        near_thing = near_thing or bool(pending) and gap[:1] == [","] and len(gap) <= 5 and bool(set(gap) & {"it", "they", "which"}) \
            and set(gap) <= {",", "it", "is", "they", "are", "which", "that", "sitting", "lying", "now", "still", "currently", "the",
                             "in", "on", "inside"}
        nxt = next((n for n in later if n.kind in ("place", "room")), None)
        chained = nxt is not None and _dest_like(words, nxt) and not set(words[m.end:nxt.start]) & {"and", ",", "then", ".", ";"} \
            and not any(o.kind == "object" and m.end <= o.start < nxt.start for o in found)  # "the can on the table in the fridge"
        put_here = near_thing and not chained and _put_verb_before(words, pending[-1]) and prep in ("in", "into", "on", "onto", "inside")
        if prep in _SOURCE_PREP or _negated(words, m) or _is_location(words, m) or (near_thing and later_dest and not put_here and prep in (
                "in", "on", "inside", "at", "by")):
            if pending and pending[-1].location is None and m.kind in ("place", "room") and near_thing:
                listed = len(pending) - 1  # "the banana and the pear on the tv stand": where the whole list is
                while listed > 0 and pending[listed - 1].location is None and \
                        set(words[pending[listed - 1].end:pending[listed].start]) <= {"and", ",", "the", "a", "+", "n", "also", "my"}:
                    listed -= 1
                for i in range(listed, len(pending)):
                    located = replace(pending[i], location=m.where())
                    objects[objects.index(pending[i])] = located
                    pending[i] = located
            if m.kind == "place":
                last_place = m
            continue
        if not _dest_like(words, m) and not _dest_verb(words, m):
            if m.kind == "place":
                last_place = m
            continue  # "when the telly is on": a place named, not a destination
        if not pending and objects and _pronoun_before(words, m):
            pending = [objects[-1]]  # "... teddy does not belong in the kitchen. put it on the sofa"
        for o in pending:
            dest_for[o.start] = m
        pending = []
        if m.kind == "place":
            last_place = m
    for o in pending:  # "put the pink cup in it": the place named before
        if o.start not in dest_for and last_place is not None and re.search(
                r"\b(?:in|into|on|onto|inside) (?:it|there)\b", " ".join(words[o.end:o.end + 6])):
            dest_for[o.start] = last_place
    return objects, dest_for


def _for_this_thing(words: list[str], found: list[Mention], place: Mention, dest: Mention) -> bool:
    """Whether a destination said after ``place`` can be the one of the thing ``place`` follows: not when another
    thing is named between them, unless the destination is said for several ('teddy on my bed, block on the shelf':
    each place is where its own thing goes; 'the can on the table, the cup on the bed, both into the fridge')."""
    named = {o.canon for o in found if o.kind == "object" and o.end <= place.start}
    if all(o.canon in named for o in found if o.kind == "object" and place.end <= o.start < dest.start):
        return True  # no other thing between ('the mug and the candle in the cabinet: the mug in the sink, ...')
    return _prep(words, dest) in ("into", "onto", "to", "in to", "on to") or \
        bool(set(words[max(0, dest.start - 4):dest.start]) & {"both", "all", "them", "they", "goes", "go", "belong", "belongs"})


def _put_verb_before(words: list[str], thing: Mention) -> bool:
    """'put the mug in ...': a verb of placing right before the thing, so its first in / on place is where it goes."""
    k = thing.start
    while k > 0 and words[k - 1] in ("the", "a", "an", "my", "your", "this", "that", "one", "of", "any", "either"):
        k -= 1
    return k > 0 and words[k - 1] in ("put", "place", "set", "stick", "pop", "leave", "hang", "drop", "lay", "stand", "toss")


def _unread_things(words: list[str], found: list[Mention]) -> list[str]:
    """Phrases in a thing's place that name nothing known ('put ... the whatsit thing on the sofa'): said,
    never guessed. Asides ('for some reason', 'the good plates') do not sit where a thing to move sits."""
    out = []
    starts = {m.start for m in found}
    for i, w in enumerate(words):
        if w not in ("the", "a", "an", "my", "this", "that", "some", "your"):
            continue
        j = i + 1
        while j < len(words) and words[j].isalpha() and words[j] not in PARTICLES - {"thing", "one"} and words[j] not in VERBS:
            j += 1
        phrase = words[i + 1:j]
        if not phrase or any(k in starts for k in range(i, j)) or all(x in VOCABULARY or x in COMMON for x in phrase):
            continue
        if i > 0 and words[i - 1] not in ("put", "move", "bring", "take", "place", "carry", "and", "then", ",", "also", "get", "grab"):
            continue  # "wash your hands": the object of another verb
        after = next((m for m in found if m.start > j and m.start - j <= 3), None)
        placed = after is not None and after.kind in ("place", "room") and _dest_like(words, after)
        moved = i > 0 and words[i - 1] in ("put", "move", "bring", "take", "place", "carry", "and", "then")
        if placed or moved:
            out.append(" ".join(words[i:j]))
    return out


def _is_location(words: list[str], m: Mention) -> bool:
    """'the mug that is on the desk', 'the soap has been on my bed': where a thing is, not where it goes."""
    before = " ".join(words[max(0, m.start - 5):m.start])
    return bool(re.search(r"\b(?:is|are|was|were|been|sitting|lying|standing|left|still|currently|now|lives?)\b(?: \w+){0,2}$",
                          before)) and not re.search(r"\b(?:should|must|to|needs? to|want it|wants? to)\b(?: \w+){0,3}$", before)


def _dest_like(words: list[str], m: Mention) -> bool:
    return _prep(words, m) in _DEST_PREP and not _negated(words, m) and not _is_location(words, m)


def _dest_verb(words: list[str], m: Mention) -> bool:
    """A destination without a preposition ('bring it the sofa', 'goes the fridge')."""
    return any(w in ("put", "goes", "belongs", "bring", "place", "move") for w in words[max(0, m.start - 3):m.start])


_EVERY_BEFORE = {"both", "all", "every", "each"}
_SOME = {"some", "few", "couple", "several", "a", "one", "any"}
_EVERY_AFTER = re.compile(r"^(?:,? )?(?:all|both|each) of (?:them|those)\b|^(?:,? )?(?:the lot|all|too)\b")


def _every(words: list[str], m: Mention) -> bool:
    """Whether a plural thing is meant as every one of its kind ("both towels", "all the fruit", "books ...,
    all of them"), unscoped: a thing said to be somewhere keeps its phrase (the grounding narrows it)."""
    if not (m.kind == "object" and m.canon and not m.anyone and m.colour is None and m.location is None and m.room is None):
        return False
    before = set(words[max(0, m.start - 3):m.start])
    if before & _EVERY_BEFORE or _EVERY_AFTER.match(" ".join(words[m.end:m.end + 4])):
        return True  # "every mug", "all the fruit" in the singular too
    return m.plural and not before & _SOME  # "the mugs", "books": the lot; "some mugs" is not


def _indefinite(words: list[str], m: Mention) -> bool:
    return m.start > 0 and words[m.start - 1] in ("a", "an", "any", "either", "one")


def _pronoun_before(words: list[str], m: Mention) -> bool:
    return any(w in ("it", "them", "both", "they", "those", "these") for w in words[max(0, m.start - 5):m.start])


def _fetching(text: str) -> bool:
    return bool(re.search(r"\b(?:bring|get|fetch|grab|give|hand|find|look for|where is|where are)\b", text))


def _implied_place(words: list[str], found: list[Mention]) -> str | None:
    text = " ".join(words)
    return next((place for pat, place in REASONS if re.search(pat, text)), None)


def _implied_for(thing: Mention, place: str, words: list[str]) -> str:
    """The place a reason implies for this thing: dishes and food are washed in the kitchen sink, hands in
    the bathroom's; a room named with the reason decides."""
    if place != "sink":
        return place
    text = " ".join(words)
    if re.search(r"\bhands?\b|\bbathroom\b(?!.*\b(?:kitchen)\b)", text[text.find("wash"):] if "wash" in text else text):
        return "bathroom sink" if "bathroom" in text[text.find("wash"):] else "sink"
    return "kitchen sink" if thing.canon in KITCHENWARE or re.search(r"\bdish|\bwashing up\b", text) else "sink"


def _toggles(words: list[str], found: list[Mention]) -> list[Toggle]:
    """Opening and closing: the places after open / close / shut asked for (not 'is open'), a list of them,
    the place just before the verb ('the cabinet close, please'), or the one 'it' stands for."""
    out: list[Toggle] = []
    for k, w in enumerate(words):
        if w not in ("open", "close", "shut") or not _command(words, k, found):
            continue
        end = _clause_end(words, k + 1) if k + 1 < len(words) else len(words)
        after = [m for m in found if m.kind == "place" and k < m.start < end and not _moved_into(words, m)]
        targets: list[Mention] = []
        just_before = [m for m in found if m.kind == "place" and m.end <= k and (m.end == k or words[m.end:k] == ["you"])]
        if just_before and _next_word(words, k) in ("", ",", ".", ";", "!", "?", "and"):  # "the cabinet close, and ..."
            after = []
        earlier = [m for m in found if m.kind == "place" and m.end <= k]
        doors = [m for m in earlier if m.canon in RECEPTACLE_TYPES and RECEPTACLE_TYPES[m.canon].articulated]
        said_it = _next_word(words, k) in ("it", "them", "em") and not just_before
        if said_it and words[k + 2:k + 3] == ["all"] or words[k + 1:k + 4] == ["all", "of", "them"]:
            targets = list({m.phrase(): m for m in doors}.values())  # "close them all": every door said before
        elif said_it and doors:  # "close it (and the fridge)": the last place said that has a door or a drawer
            targets = doors[-1:]
        named = len(targets)
        for m in after:
            joined = _joined(words, targets[-1], m) if len(targets) > named else set(words[k + 2:m.start]) <= _JOINING
            if not targets and m.start - k <= 4 or targets and joined:
                targets.append(m)
        if not targets:
            pronoun = any(x in ("it", "them", "both") for x in words[k + 1:k + 3])
            targets = just_before[-1:] or (doors[-1:] if pronoun else [])
        out.extend(Toggle(m.phrase().replace("_", " "), w == "open") for m in targets)
    unique: dict[str, Toggle] = {}
    for t in out:  # the last word on a place stands ("close it ... then open it again" is rare; a correction is not)
        unique[t.target] = t
    return list(unique.values())


def _toggle_target(words: list[str], m: Mention) -> bool:
    return any(w in ("open", "close", "shut") for w in words[max(0, m.start - 4):m.start] + words[m.end:m.end + 1])


def _command(words: list[str], k: int, found: list[Mention]) -> bool:
    """Whether 'open' / 'close' at ``k`` asks for it (not 'is open', 'left open', 'everything is open')."""
    before = words[max(0, k - 2):k]
    if set(before) & {"is", "are", "was", "were", "left", "hanging", "staying", "stays", "still", "wide", "been", "standing",
                      "everything", "all"}:
        return False
    nxt = _next_word(words, k)
    if nxt in _DETERMINERS or any(m.start == k + 1 or (m.start == k + 2 and words[k + 1] == "please") for m in found):
        return True
    return any(m.end == k or (m.end == k - 1 and words[k - 1] == "you") for m in found if m.kind == "place")


def _next_word(words: list[str], k: int) -> str:
    """The word after ``k``, 'please' skipped ('close please the drawer')."""
    rest = [w for w in words[k + 1:k + 3] if w != "please"]
    return rest[0] if rest else ""


def _moved_into(words: list[str], m: Mention) -> bool:
    return _prep(words, m) in ("in", "into", "inside", "on", "onto") and any(
        w in ("put", "place", "move", "pop", "stick") for w in words[max(0, m.start - 8):m.start])


_JOINING = {"and", "also", "the", ",", "both", "too", "as", "well", "then"}


def _joined(words: list[str], a: Mention, b: Mention) -> bool:
    return set(words[a.end:b.start]) <= _JOINING


def _unique(goals: list) -> list:
    out: list = []
    for g in goals:
        if g not in out:
            out.append(g)
    return out
