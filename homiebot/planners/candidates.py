"""Which seen or mapped things a phrase can mean, what tells them apart, and what a person's answer
picks: a shared helper the planners can use to decide whether to ask, what to ask, and how to read
the answer.

A phrase is read into what it asks of a thing: its kinds (an object class or furniture type by name
or everyday word, or every class of a household category: "a piece of fruit", "something to drink"),
colours, room words ("the kitchen one") and the place it is said to be at ("on the brown shelf", "in
the bathroom"). Things are matched against that from what is known of them: kind, colour (said by
the map or by the name), what they rest on and the room they are in. A room that is not known
neither confirms nor rules a thing out; it is chosen only when nothing known fits better.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from homiebot.core.vocabulary import CATEGORY_WORDS, OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.perception.grounding import COLOUR_WORDS, singular, words_of

ANY_THING = {"thing", "something", "object", "item", "stuff", "one", "piece"}
PLACE_WORDS = {"counter": "kitchen_counter", "couch": "sofa", "tv": "tv_stand", "telly": "tv_stand", "cupboard": "cabinet",
               "refrigerator": "fridge", "bookshelf": "shelf", "nightstand": "drawer"}
OBJECT_WORDS = {"teddy": "teddy_bear", "block": "toy_block", "cereal": "cereal_box", "crackers": "cracker_box",
                "cracker": "cracker_box", "sugar": "sugar_box", "soup": "soup_can"}
ROOMS = {"kitchen": "kitchen", "bathroom": "bathroom", "bedroom": "bedroom", "office": "office", "hallway": "hallway",
         "living": "living_room", "lounge": "living_room", "dining": "dining_room"}
FILLER = {"the", "a", "an", "my", "your", "this", "that", "some", "of", "it", "please", "i", "mean", "yes", "no", "is",
          "its", "it's", "one", "goes", "go", "should", "put", "to", "just", "which", "thanks", "thank", "you", "room", "and"}
_REL = r"\b(?:on top of|on|onto|in|into|inside|at|from|by|near|next to|beside|under)\b"
YES = {"yes", "yeah", "yep", "yup", "sure", "correct", "right", "exactly", "that one", "that's it", "that is it", "ok", "okay"}
NO = {"no", "nope", "neither", "not that one", "wrong", "none"}


@dataclass(frozen=True)
class Thing:
    """What is known of one seen or mapped thing."""

    name: str
    kind: str  # object class, furniture type, or "room"
    colour: str | None = None
    support: str | None = None  # what it rests on or in (objects)
    room: str | None = None  # the room it stands in (furniture), or that of its support (objects)


@dataclass(frozen=True)
class Wanted:
    """What a phrase asks of a thing; an empty field asks nothing."""

    kinds: frozenset[str]
    colours: frozenset[str]
    rooms: frozenset[str]
    where: str | None  # the place the thing is said to be at, in words
    named_kind: bool  # the phrase names a class or type (not only a category or "something")
    key: str  # the phrase's words joined with "_" (an exact name)

    @property
    def says_anything(self) -> bool:
        return bool(self.kinds or self.colours or self.rooms or self.where)


def things_from(known: Mapping[str, str], support: Mapping[str, str | None], room_of: Mapping[str, str],
                colour: Mapping[str, str | None] | None = None) -> dict[str, Thing]:
    """Things from a planner's memory: ``known`` name -> category, what objects rest on, the room of furniture
    and (mapped perception) colours; a colour word in a name counts as its colour."""
    out = {}
    for name, kind in known.items():
        col = (colour or {}).get(name) or next((w for w in words_of(name) if w in COLOUR_WORDS), None)
        sup = support.get(name)
        room = room_of.get(name) or (room_of.get(sup) if sup else None)
        if room is None:  # a room word in the name of a piece of furniture (or of an object's support) says where it is
            named = sup if sup else (name if kind in RECEPTACLE_TYPES else "")
            room = next((ROOMS[w] for w in words_of(named) if w in ROOMS), None)
        out[name] = Thing(name, kind, "gray" if col == "grey" else col, sup, room)
    return out


def split_where(phrase: str) -> tuple[str, str | None]:
    """'yellow sponge on the brown shelf' -> ('yellow sponge', 'brown shelf')."""
    text = " ".join(words_of(phrase.replace("_", " ")))
    text = re.sub(r"\b(?:that|which) (?:is|are|was|sits|sit|lies)\b", " ", text)
    text = re.sub(r"\b(?:the one|one)\b(?= " + _REL + ")", " ", text)
    m = re.search(r"\s*" + _REL + r"\s+(?:the\s+|a\s+|my\s+)?(.+)$", text)
    if not m or not text[: m.start()].strip() and not re.match(_REL, text):
        return text.strip(), None
    return text[: m.start()].strip(), m.group(1).strip()


def read_phrase(phrase: str, objects: bool) -> Wanted:
    """What ``phrase`` asks of a thing; ``objects``: it names a small thing (else a piece of furniture)."""
    head, where = split_where(phrase)
    ws = [singular(w) for w in words_of(head)]
    colours = frozenset("gray" if w == "grey" else w for w in ws if w in COLOUR_WORDS)
    rooms = frozenset(ROOMS[w] for w in ws if w in ROOMS)
    vocab = OBJECT_CLASSES if objects else RECEPTACLE_TYPES
    extra = OBJECT_WORDS if objects else PLACE_WORDS
    rest = [w for w in ws if w not in FILLER]
    named = sorted((c for c in vocab if set(c.split("_")) <= set(rest)), key=lambda c: -len(c.split("_")))
    kinds: set[str] = set(named[:1]) | {extra[w] for w in rest if w in extra and not named}
    named_kind = bool(kinds)
    if not kinds and objects:
        cats = {CATEGORY_WORDS[w] for w in rest if w in CATEGORY_WORDS}
        kinds = {c for c, cls in OBJECT_CLASSES.items() if cls.category in cats}
    if objects and not kinds and "orange" in colours and not set(rest) - {"orange"}:  # "the orange": the fruit
        kinds, colours, named_kind = {"orange"}, frozenset(), True
    return Wanted(frozenset(kinds), colours, rooms, where, named_kind, "_".join(w for w in words_of(head) if w not in FILLER - {"one"}))


def _room_fit(thing: Thing, rooms: Collection[str]) -> bool | None:
    """Whether a thing is in one of ``rooms`` (None: its room is not known)."""
    if not rooms:
        return True
    if thing.room is not None:
        return thing.room in rooms
    said = {ROOMS[w] for w in words_of(thing.name) if w in ROOMS} if thing.kind in RECEPTACLE_TYPES else set()
    return bool(said & set(rooms)) if said else None  # an object's name says nothing of where it is now


def _fit(thing: Thing, want: Wanted, things: Mapping[str, Thing]) -> bool | None:
    """True: fits; False: does not; None: fits as far as is known (its room or place is not known)."""
    if want.kinds and thing.kind not in want.kinds:
        return False
    if want.colours and (thing.colour not in want.colours if thing.colour is not None else thing.kind not in OBJECT_CLASSES):
        return False  # furniture is named by its colour or its room: one named by its room is not of the colour said
    maybe = bool(want.colours) and thing.colour is None  # a thing named by its room: its colour is not known
    room = _room_fit(thing, want.rooms)
    if room is False:
        return False
    maybe = maybe or room is None
    if want.where:
        at = at_place(thing, want.where, things)
        if at is False:
            return False
        maybe = maybe or at is None
    return None if maybe else True


def at_place(thing: Thing, where: str, things: Mapping[str, Thing]) -> bool | None:
    """Whether a thing is at the place ``where`` names: a piece of furniture (what it rests on) or a room."""
    place = read_phrase(where, objects=False)
    ws = set(words_of(where))
    if not place.kinds and place.rooms and not place.colours and not (ws - FILLER - set(ROOMS) - {"room"}):
        return _room_fit(thing, place.rooms)
    if thing.support is None:
        return None
    sup = things.get(thing.support, Thing(thing.support, "", None))
    if sup.name == "_".join(w for w in words_of(where) if w not in FILLER):
        return True
    fit = _fit(sup, Wanted(place.kinds, place.colours, place.rooms, None, place.named_kind, place.key), things)
    if not place.kinds and not place.colours and not place.rooms:
        return set(ws - FILLER) <= set(words_of(sup.name))
    return fit


def candidates(phrase: str, things: Mapping[str, Thing], objects: bool, exclude: Collection[str] = ()) -> list[str]:
    """Names of the known things a phrase can mean, sorted: an exact name alone, else those that fit what
    is known (those whose room or place is unknown only when none fits for sure)."""
    kinds = set(OBJECT_CLASSES if objects else RECEPTACLE_TYPES)
    pool = {n: t for n, t in things.items() if t.kind in kinds and n not in exclude}
    want = read_phrase(phrase, objects)
    key = "_".join(w for w in words_of(phrase.replace("_", " ")) if w not in ("the", "a", "an", "my"))
    if not want.says_anything:
        return [key] if key in pool else []
    sure, maybe = [], []
    for name, thing in sorted(pool.items()):
        fit = _fit(thing, want, things)
        if fit:
            sure.append(name)
        elif fit is None:
            maybe.append(name)
    fits = sure or maybe
    return sorted({key, *fits}) if key in pool else fits  # a name said is meant, and so may be others its words fit


def descriptive(name: str, objects: bool) -> bool:
    """Whether a thing's name is only what a person would say of how it looks (an object's colour and class:
    ``pink_peach``): a phrase equal to it describes such a thing and does not pick one, since another alike
    (``pink_peach_2``) may be unseen."""
    if not objects:
        return False
    ws = name.split("_")
    return any(ws[-len(c.split("_")):] == c.split("_") and set(ws[:-len(c.split("_"))]) <= COLOUR_WORDS for c in OBJECT_CLASSES)


def pinned(phrase: str, things: Mapping[str, Thing], objects: bool) -> str | None:
    """The known thing a phrase names exactly ('kitchen counter' -> kitchen_counter), if any."""
    key = "_".join(w for w in words_of(phrase.replace("_", " ")) if w not in ("the", "a", "an", "my"))
    kinds = set(OBJECT_CLASSES if objects else RECEPTACLE_TYPES)
    if key not in things or things[key].kind not in kinds or key in kinds:  # a type's name ("sink"): others may be unseen
        return None
    if descriptive(key, objects):  # "the pink peach" describes one; a twin may be where the robot has not looked
        return None
    return key if candidates(phrase, things, objects) == [key] else None  # nothing else seen fits its words


def _spoken(name: str) -> str:
    """A name in words: kitchen_counter -> kitchen counter."""
    return name.replace("_", " ")


def question(phrase: str, names: list[str], things: Mapping[str, Thing], objects: bool) -> str:
    """A question about what differs between the candidates (colour, kind, place, room), listing them."""
    head, _ = split_where(phrase)
    want = read_phrase(phrase, objects)
    noun = " ".join(w for w in words_of(head) if w not in FILLER and w not in ANY_THING and w != "to") or "one"
    if not names:
        return f"I have not found any {noun} yet. Which {noun} do you mean?"
    if not want.named_kind and want.kinds:  # a category: the candidates are named by their kind
        noun = "one" if not want.colours else f"{' '.join(sorted(want.colours))} one"
    cands = [things[n] for n in names]
    shown = cands[:4]
    kinds = {t.kind for t in cands}
    colours = [t.colour for t in cands]
    if not objects:  # furniture by name, with its room when the name does not say it ("the cabinet in the kitchen")
        options = [f"the {_spoken(t.name)}" + (f" in the {_spoken(t.room)}" if t.room and not set(words_of(t.room)) & set(words_of(t.name))
                                               else "") for t in shown]
    elif len(kinds) > 1:
        options = [f"the {_spoken(t.name)}" for t in shown]
    elif all(colours) and len(set(colours)) == len(colours):
        options = [f"the {c} one" for c in colours[:4]]
    elif all(t.support for t in cands) and len({t.support for t in cands}) == len(cands):
        options = [f"the one {'in' if _inside(t.support) else 'on'} the {_spoken(t.support or '')}" for t in shown]
    elif all(t.room for t in cands) and len({t.room for t in cands}) == len(cands):
        options = [f"the one in the {_spoken(t.room or '')}" for t in shown]
    else:
        options = [f"the {_spoken(t.name)}" for t in shown]
    listed = ", ".join(options[:-1]) + f" or {options[-1]}" if len(options) > 1 else options[0]
    more = f" (I see {len(cands)})" if len(cands) > len(shown) else ""
    return f"Which {noun} do you mean: {listed}?{more}"


def _inside(receptacle: str | None) -> bool:
    """Whether things rest in (not on) the receptacle a name names."""
    kind = next((t for t in RECEPTACLE_TYPES if receptacle and set(t.split("_")) <= set(words_of(receptacle))), None)
    return kind is not None and RECEPTACLE_TYPES[kind].relation == "in"


@dataclass(frozen=True)
class Reading:
    """What an answer says about one phrase: the known thing it picks, or a better description of a thing
    not seen yet, or that it says nothing usable (``usable`` False)."""

    chosen: str | None = None
    description: str | None = None
    excluded: tuple[str, ...] = ()
    usable: bool = True


def _clean(answer: str) -> str:
    """An answer's words without punctuation, openers and the phrases that frame it ("I mean", "it goes")."""
    text = answer.lower().replace("_", " ")
    text = re.sub(r"[^a-z0-9' ]+", " ", text)
    text = re.sub(r"^(?:well|oh|ah|hmm|um|uh|so|okay|ok|right|sure)\b\s+(?=\S)", "", text.strip())  # an opener, not a "sure" alone
    text = re.sub(r"\b(?:i mean|i meant|i said|i told you already|just as i said|as i said|it goes|it should go|"
                  r"it belongs|put it|place it|leave it|bring it|please|thanks|thank you|the one that is|the one which is)\b",
                  " ", text)
    return " ".join(text.split())


def read_answer(answer: str, phrase: str, offered: list[str], things: Mapping[str, Thing], objects: bool) -> Reading:
    """What a person's answer picks for ``phrase``, given the candidates ``offered`` in the question.

    A name ("kitchen_cabinet", "the kitchen cabinet"), a colour ("the yellow one"), a room ("the kitchen
    one", "the one in the bathroom"), a place ("the one on the shelf", "the yellow sponge on the brown
    shelf") or yes / no (to a question that offered one thing) narrow the candidates; a description that
    fits no known thing is kept to search for."""
    text = _clean(answer)
    if not text:
        return Reading(usable=False)
    flat = text.strip(" '")
    if flat in YES or flat.split(" ")[0] in YES and len(flat.split()) <= 2:
        return Reading(chosen=offered[0]) if len(offered) == 1 else Reading(usable=False)
    if flat in NO or flat.split(" ")[0] in NO and len(flat.split()) <= 2:
        return Reading(excluded=tuple(offered)) if offered else Reading(usable=False)
    text = re.sub(r"^(?:yes|yeah|yep|no|nope)\b\s*", "", text)
    kinds = set(OBJECT_CLASSES if objects else RECEPTACLE_TYPES)
    pool = {n: t for n, t in things.items() if t.kind in kinds}
    called = re.search(r"\b(?:the one )?called ([a-z0-9 ]+)$", text)
    if called and "_".join(called.group(1).split()) in pool:
        return Reading(chosen="_".join(called.group(1).split()))
    text = text[: called.start()].strip() if called else text
    head, where = split_where(text)
    if not objects and where:  # "it goes on the bedroom chair": the place is what follows the relation
        head, where = where, None
    # an exact name said in the answer (longest first), at the place the answer says if it says one
    said = f" {head} "
    for name in sorted(pool, key=lambda n: -len(n)):
        if f" {_spoken(name)} " in said and (not offered or name in offered or _compatible(pool[name], phrase, objects)) \
                and (at_place(pool[name], where, things) is True if where else not _twins(name, offered)):
            return Reading(chosen=name)  # a name said (at the place said; not one of twins that its words fit alike)
    original = read_phrase(phrase, objects)
    want = read_phrase(f"{head} on the {where}" if where else head, objects)
    if not want.says_anything:
        return Reading(usable=False)
    kinds_wanted = want.kinds or original.kinds
    merged = Wanted(frozenset(kinds_wanted), want.colours or original.colours, want.rooms or original.rooms,
                    want.where or original.where, want.named_kind or original.named_kind, want.key)
    cands = [n for n in offered if n in things] or candidates(phrase, things, objects)
    sure = [n for n in cands if _fit(things[n], merged, things)]
    maybe = [n for n in cands if _fit(things[n], merged, things) is None]
    picked = sure or maybe
    if len(picked) == 1:
        return Reading(chosen=picked[0])
    if len(picked) > 1:
        return Reading(usable=False)
    # no known candidate fits: a thing not seen yet, described by the answer's words on the phrase's kind
    others = [n for n, t in pool.items() if _fit(t, merged, things)]
    if len(others) == 1 and want.kinds:
        return Reading(chosen=others[0])
    return Reading(description=_describe(merged, head, where, phrase, objects))


def _twins(name: str, names: Collection[str]) -> list[str]:
    """Others named like ``name`` but for a number ('yellow_sponge_2' for 'yellow_sponge'): the same words fit them."""
    stem = re.sub(r"_\d+$", "", name)
    return [n for n in names if n != name and re.sub(r"_\d+$", "", n) == stem]


def _compatible(thing: Thing, phrase: str, objects: bool) -> bool:
    want = read_phrase(phrase, objects)
    return not want.kinds or thing.kind in want.kinds


def _describe(want: Wanted, head: str, where: str | None, phrase: str, objects: bool) -> str:
    """The words to search for a thing no known one fits: colour, room, kind and place."""
    said = read_phrase(head, objects)
    if said.named_kind and len(said.kinds) == 1:  # the kind the answer names, in the vocabulary's words
        kind_words = next(iter(said.kinds)).split("_")
    else:
        kind_words = [w for w in words_of(split_where(phrase)[0]) if w not in FILLER and w not in COLOUR_WORDS]
    room_words = [_spoken(r) for r in sorted(want.rooms) if not set(words_of(r)) & set(kind_words)]
    parts = sorted(want.colours) + room_words + kind_words
    text = " ".join(parts)
    return f"{text} {'in' if where and read_phrase(where, False).rooms and not read_phrase(where, False).kinds else 'on'} the {where}" \
        if where else text
