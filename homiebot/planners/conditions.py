"""Conditions on what a container holds, said one sentence at a time, read into ``IfEmpty`` goals:

* "if the kitchen drawer is empty, put the book in it; if not, on the desk" (also "is free", "'s empty", "and close it");
* "the mug goes in the sink if there's nothing in the sink, otherwise in the drawer";
* "the sugar box goes in the cabinet if it's empty, otherwise the kitchen cabinet";
* "the orange goes in the fridge if there's no fruit in it, otherwise on the counter" (only fruit counts);
* "the apple: into the fridge if there's already fruit in it, otherwise into the drawer" (the other way round).

``condition`` returns the goal and whether the sentence asks to close the container chosen ("... and close it",
"close whichever you used"), or None for a sentence of another form.
"""

from __future__ import annotations

import re

from homiebot.core.vocabulary import CATEGORY_WORDS
from homiebot.perception.grounding import singular
from homiebot.planners.instructions import IfEmpty

_O = r"(?:the |my )?(?P<o>[\w\s]+?)"
_B = r"(?:the |my )?(?P<b>[\w\s]+?)"
_Z = r"(?:the |my )?(?P<z>[\w\s]+?)"
_EMPTY = r"(?:is empty|is free|is clear|has nothing (?:in|on) it|is empty inside)"
_ELSE = r"[,;.]? (?:otherwise|if not|else|and if not|if it is not|or else),? (?:then )?(?:put it |leave it |put (?:the |my )?[\w\s]+? )?"
_PREP = r"(?:into|onto|inside|in|on)"
_CLOSE = r"(?:,? (?:and )?(?:close|shut) it(?: after| afterwards)?)?"
_KIND = r"(?:no (?:other )?(?P<k>[\w\s]+?)|nothing)"
_KIND2 = r"(?:no (?:other )?(?P<k2>[\w\s]+?)|nothing)"


def _kind(words: str | None) -> str | None:
    if not words:
        return None
    one = singular(words.strip())
    return CATEGORY_WORDS.get(one, one)


def condition(sentence: str) -> tuple[IfEmpty, bool] | None:
    """The condition a sentence states (see the module text), with whether to close the container chosen."""
    s = re.sub(r"\b(\w+)'s (empty|free|clear)\b", r"\1 is \2", sentence.strip(" ,.;").replace(";", ","))
    s = re.sub(r"\s*,\s*", ", ", s)
    close = bool(re.search(r"\b(?:close|shut) (?:whichever|it|the one|you used|you put it in)\b", s))
    s = re.sub(r",? (?:and )?(?:close|shut) (?:whichever |the one |)you (?:used|put it in)(?: after| afterwards)?$", "", s)
    pats = [
        (rf"^if {_B} {_EMPTY},? (?:put|place|move) {_O} (?:in it|inside it|in there|there|on it|inside){_CLOSE}{_ELSE}{_PREP}? ?{_Z}$", False),
        (rf"^{_O}(?: (?:goes|go|should go|can go) |, ){_PREP} {_B} if (?:it|the [\w\s]+?) {_EMPTY}{_CLOSE}{_ELSE}{_PREP}? ?{_Z}$", False),
        (rf"^(?:put|place|move) {_O} {_PREP} {_B} if (?:it|the [\w\s]+?) {_EMPTY}{_CLOSE}{_ELSE}{_PREP}? ?{_Z}$", False),
        (rf"^{_O}(?: (?:goes|go|should go|can go) |, ){_PREP} {_B} if there is {_KIND} (?:in|on) (?:it|there|the [\w\s]+?){_CLOSE}{_ELSE}"
         rf"{_PREP}? ?{_Z}$", False),
        (rf"^(?:put|place|move) {_O} {_PREP} {_B} if (?:there is {_KIND} (?:in|on) (?:it|there|the [\w\s]+?)|(?:it|the [\w\s]+?) has {_KIND2}"
         rf" (?:in|on) it){_CLOSE}{_ELSE}{_PREP}? ?{_Z}$", False),
        (rf"^{_O}(?: (?:goes|go|should go|can go) |, ){_PREP} {_B} if there is already (?P<k>[\w\s]+?) (?:in|on) (?:it|there|the [\w\s]+?)"
         rf"{_CLOSE}{_ELSE}{_PREP}? ?{_Z}$", True),
    ]
    for pat, inverse in pats:
        if m := re.match(pat, s):
            g = m.groupdict()
            kind = _kind(g.get("k") or g.get("k2"))
            if kind in ("thing", "something", "anything"):
                kind = None
            strip = re.compile(r"^(?:the|my|a|an)\s+")
            return IfEmpty(strip.sub("", g["b"].strip()), strip.sub("", g["o"].strip()), strip.sub("", g["z"].strip()),
                           kind=kind, inverse=inverse), close or bool(re.search(r"\b(?:close|shut) it\b", s))
    return None
