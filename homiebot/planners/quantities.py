"""Clauses about sets of things and the state of containers after them, read into goal records:

* quantities and scope: "all the fruit in the house goes in the fridge", "every piece of fruit on the counter goes
  in the fridge", "both bits of fruit in the sink go in the fridge", "all the dishes in the sink to the cabinet"
  (every one of the kind), "everything in the kitchen sink goes on the counter", "empty the shelf into the cabinet",
  "everything on it goes in the office cabinet" after "clear the office desk" (clearing a place onto another);
* what is shut after: "close it" / "shut them" / "close em all" after things were put somewhere, and a place
  listed after a close ("close the fridge and the bedroom drawer afterwards").

Each function reads one clause (lower case, as ``understanding.py`` splits them) and returns its goals, or None
when the clause is not of its form.
"""

from __future__ import annotations

import re

from homiebot.core.vocabulary import CATEGORY_WORDS
from homiebot.perception.grounding import singular
from homiebot.planners.instructions import Clear, Move, Things, Toggle

_AFTER = r"(?:\s+(?:afterwards|after|when you are (?:done|finished)|at the end|too|as well|once you are done|after that))?"
_PLACE = r"(?:the |my )?(?P<d>[\w\s]+?)"
_GO = r"(?:(?:goes|go|should go|should be|belong|belongs|can go|needs to go|need to go|live|lives)(?: back)? (?:in|into|on|onto|to|inside)|" \
      r"to|into|onto|in|on)"
_KIND_SCOPE = r"(?:in the house|around the house|in the home|anywhere|everywhere|lying around)"


def _kind(words: str) -> str:
    """A kind of things in the vocabulary's terms: 'dishes' -> kitchenware, 'fruit' -> fruit, 'books' -> book."""
    w = words.strip()
    w = re.sub(r"^(?:piece|pieces|bit|bits|item|items|bar|bars) of\s+", "", w)
    one = singular(w)
    return CATEGORY_WORDS.get(one, CATEGORY_WORDS.get(w, one))


def quantity_goals(clause: str, previous_place: str | None = None) -> list | None:
    """Every one of a kind ('all the fruit ... goes in the fridge'), or everything in or on a place ('everything in the
    sink goes on the counter', 'empty the shelf into the cabinet'); ``previous_place``: what 'it' names ('clear the desk,
    everything on it goes ...')."""
    c = re.sub(r"^(?:and |also |then |so )+", "", clause.strip(" ,."))
    c = re.sub(r"\s+(?:please|for me|now)$", "", c)
    if m := re.match(rf"^(?:put |move |take |bring |get |grab )?everything (?:that is )?(?P<p>in|on|from|off|out of|inside) (?:the |my )?"
                     rf"(?P<s>[\w\s]+?)(?: and| n)? {_GO} {_PLACE}$", c):
        src = m["s"].strip()
        if src in ("it", "there", "them") and previous_place:
            src = previous_place
        return [Clear(src, m["d"].strip())]
    if m := re.match(rf"^(?:empty|clear(?: out)?|clean out) (?:the |my )?(?P<s>[\w\s]+?) (?:into|onto|to) {_PLACE}$", c):
        return [Clear(m["s"].strip(), m["d"].strip())]
    if previous_place and re.fullmatch(r"(?:everything|all) (?:on|in|of) (?:it|there)|the lot", c):
        return []  # "empty the shelf into the cabinet, everything on it": said again
    if m := re.match(r"^(?:empty|clear(?: out)?|clean out|clear off) (?:the |my )?(?P<s>[\w\s]+?)$", c):
        return [Clear(m["s"].strip(), None)]
    if m := re.match(rf"^(?:put |move |take |bring )?(?:all (?:of )?(?:the |my )?|every (?:single )?|each |both (?:of )?(?:the |my )?)"
                     rf"(?P<k>[\w\s]+?)(?: {_KIND_SCOPE}| (?:in|on|from) (?:the |my )?(?P<s>[\w\s]+?))?(?: all)? {_GO} {_PLACE}$", c):
        kind = m["k"].strip()
        if kind in ("it", "them", "of them", "that", "those", "these") or " " in _kind(kind) and not re.search(r"\b(?:of)\b", kind) \
                and len(kind.split()) > 2:
            return None
        source = (m["s"] or "").strip() or None
        if source in ("house", "home", "flat", "apartment"):
            source = None
        return [Move(Things(kind=_kind(kind).replace("_", " "), at_least=2 if c.startswith("both") else 0, source=source), m["d"].strip())]
    return None


def closing_goals(clause: str, moved: bool, last_toggle: bool) -> tuple[list, bool] | None:
    """'close it' / 'shut them' after things were put away (closing after: True), 'close it and the fridge' (that
    too), or a place alone after a close ('... and the bedroom drawer afterwards'); None for other clauses."""
    c = re.sub(r"^(?:and |also |then |so |please )+", "", clause.strip(" ,."))
    c = re.sub(r"\s+(?:please|for me)$", "", c)
    if moved and (m := re.match(rf"^(?:close|shut)(?: up)? (?:it|them|that one|that|em|them all|it up|both|whichever you used|"
                                rf"whichever you put it in|you used|you put it in|the one you used|it when it is empty)(?: all)?(?: (?:and|,) (?:the |my )?(?P<r>[\w\s]+?))?{_AFTER}$", c)):
        return ([Toggle(m["r"].strip(), False)] if m["r"] else []), True
    if m := re.match(r"^(?:close|shut) (?:the |my )?(?P<r>[\w\s]+?)\s+(?:afterwards|after|when you are (?:done|finished)|at the end)$", c):
        return [Toggle(m["r"].strip(), False)], False
    if last_toggle and (m := re.match(rf"^(?:the |my )?(?P<r>[\w\s]+?){_AFTER}$", c)) and m["r"].strip() not in ("it", "them"):
        return [Toggle(m["r"].strip(), False)], False
    return None
