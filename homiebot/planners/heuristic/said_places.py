"""Looking first where the user said a thing is ("the soap on the dining room shelf"): the place is found
(its usual room first), reached and opened; a thing still not seen there is tried by the name its description
gives (too small to see in small views). With mapped perception, each piece of furniture that fits is looked
at, nearest first, and a thing the map saw elsewhere is reached for there once."""

from __future__ import annotations

import re

from homiebot.core.contracts import Action, Subtask
from homiebot.core.vocabulary import OBJECT_CLASSES
from homiebot.perception.grounding import words_of

from .acting import Decision, Hands
from .episode import Episode
from .map_referents import MapReferents
from .referents import Referents
from .searching import Search
from .words import ARTICLES, class_of


class SaidPlaces:
    """Decides the steps of looking where the user said a thing not seen yet is; returns once that is done."""

    def __init__(self, episode: Episode, referents: Referents, search: Search, hands: Hands) -> None:
        self.ep = episode
        self.referents = referents
        self.on_map: MapReferents = referents.on_map
        self.search = search
        self.hands = hands

    def look(self, phrase: str) -> None:
        """'the soap on the dining room shelf' not seen yet: look there first. Find the place (its
        usual room first), go there, open it if it is closed; a thing too small to see from there is
        tried once by the name its description gives ('yellow lemon' -> yellow_lemon)."""
        m = self.ep.mem
        said = re.search(r"\s(?:on|in|from|inside|by|near)\s+(?:the\s+)?(?P<w>[a-z_ ]+)$", phrase)
        if not said:
            return
        head = phrase[: said.start()].strip()
        if m.mapped:
            self.look_on_map(phrase, head, said["w"])
            return
        place = self.referents.receptacle(said["w"])
        if place is None:
            if not self.search.done(head):
                self.search.explore(said["w"], f"{head} (the user said it is {phrase[said.start():].strip()})")
            return
        if place not in m.looked:
            self.look_at(place, head, f"the {head} should be inside the {place}", f"the user said the {head} is there")
        name = "_".join(w for w in words_of(head) if w not in ARTICLES)
        cls = class_of(head)
        if cls and not m.mapped and name not in m.guessed and name not in m.forgotten and m.near == place and not m.held:
            m.guessed[name] = cls
            m.support[name] = place
            raise Decision(Subtask(action=Action.PICK, target=name),
                           f"I do not see the {head}, but the user said it is at the {place}: it may be too small to see, so I try to take it")

    def look_at(self, place: str, head: str, why_open: str, why_go: str) -> None:
        """Open ``place`` when it is closed (with a free hand), go to it, and note it as looked at; each step
        that is needed is this round's decision (raised)."""
        m = self.ep.mem
        if m.closable(place) and place not in m.opened:
            if m.held:
                self.hands.put_down(m.held, f"I need a free hand to open the {place}, where the {head} should be")
            m.searched.add(place)
            self.hands.act(Action.OPEN, place, why_open)
        if m.near != place:
            self.hands.go(place, why_go)
        m.looked.add(place)

    def look_on_map(self, phrase: str, head: str, where: str) -> None:
        """Mapped perception: the map may still have the thing where it was seen before someone moved it. Look
        where the user says it is first: each piece of furniture that fits (in a room: the furniture there,
        surfaces first, nearest first), opened if closed. A thing the map saw elsewhere may be here all the
        same (the map confirms a new sighting only when it repeats): reach for it here once. Returns when
        every such place was looked at (the phrase then grounds to where the map saw the thing)."""
        m = self.ep.mem
        cls = class_of(head)
        if cls is not None and any(class_of(o) == cls for o in m.picked_from):
            m.said_done.add(phrase)  # taken from there already (and dropped since): not there any more
            return
        for place in self.on_map.said_places(where):
            if place in m.looked:
                continue
            said = f"the user said the {head} is {phrase[len(head):].strip()}"
            self.look_at(place, head, f"{said}: it may be inside the {place}", f"{said}: I look at the {place}")
            elsewhere = [c for c in self.on_map.candidates(head, OBJECT_CLASSES) if (c, place) not in m.reached and c != m.held]
            if elsewhere and not m.held:
                m.reached.add((elsewhere[0], place))
                raise Decision(Subtask(action=Action.PICK, target=elsewhere[0]),
                               f"my map saw the {head} elsewhere, but the user said it is here at the {place}: I reach for it here")
        for obj, _ in sorted(m.reached):  # reached for in vain here, so no longer in the map: where the map saw it
            old = m.support.get(obj)
            if obj not in m.known and old in m.known and old not in m.looked and cls in (None, class_of(obj)):
                if m.near != old:
                    self.hands.go(old, f"the {head} was not where the user said: I look where I saw it before, at the {old}")
                m.looked.add(old)
        m.said_done.add(phrase)
