"""Asking people and reading their answers: the questions to ask before acting (a request not understood,
"where in the kitchen?"), and each answer folded into the plan (a whole new reading, a more precise object,
a place); an answer that cannot be used is asked about again once, then reported. The phrases that may fit
several things are the ``planners/asking.py`` Asker's slots, renamed here once settled."""

from __future__ import annotations

from collections.abc import Callable

from homiebot.core.contracts import Action, Feedback, Subtask
from homiebot.perception.grounding import words_of
from homiebot.planners.asking import Asker
from homiebot.planners.candidates import read_answer
from homiebot.planners.instructions import Fetch, IfEmpty, Move, Things
from homiebot.planners.understanding import understand_request

from .episode import Episode
from .words import ARTICLES, USUALLY_ONE


class Dialogue:
    """The questions still to ask, the one asked last, and what the answers change in the plan."""

    def __init__(self, episode: Episode) -> None:
        self.ep = episode
        self.questions: list[tuple[str, str]] = []  # (question, what it is about: "unsure" or a phrase)
        self.asker: Asker | None = None  # with someone to ask: the phrases that may fit several things
        self.asked: str | None = None  # what the question asked last round is about
        self.unusable: set[str] = set()  # questions whose answer could not be used once already

    def begin(self, shut_away: Callable[[str], bool]) -> None:
        """Queue what must be asked before acting; with someone to ask, open the plan's phrases to the scene
        (``shut_away``: whether another thing a phrase fits may be shut in a container not looked into)."""
        ep = self.ep
        if ep.read.unsure:
            self.questions.append((f"I am not sure what you mean by '{'; '.join(ep.read.unsure)}'. What should I do?", "unsure"))
        elif ep.can_ask:
            if ep.unread:
                self.questions.append((f"I understood: {ep.read.statement()}. What should I do about "
                                       f"'{'; '.join(ep.unread)}'?", "unread"))
            self.asker = Asker(ep.plan.goals, self.rename_phrase, self.named, shut_away)
            for goal in ep.plan.goals:
                if isinstance(goal, Move) and goal.dest_kind == "room":
                    self.questions.append((f"Where in the {goal.dest} should it go?", f"room:{goal.dest}"))

    def ask_queued(self) -> tuple[Subtask, str]:
        """Ask the first queued question: the Ask subtask and why."""
        question, self.asked = self.questions.pop(0)
        return Subtask(action=Action.ASK, target=question), f"before acting I need to know: {question}"

    def hear(self, fb: Feedback | None) -> None:
        """Fold in the answer to the question asked last round (nobody answered: no successful feedback)."""
        assert self.asked is not None
        self.fold_answer(self.asked, fb.details.get("answer") if fb is not None and fb.success else None)
        self.asked = None

    def fold_answer(self, about: str, answer: str | None) -> None:
        """Fold the user's answer into the plan: a whole new reading, a more precise object, or a place."""
        ep = self.ep
        if answer is None:  # nobody answered
            if about.startswith("slot:") and self.asker is not None:
                self.asker.answer(int(about.removeprefix("slot:")), None, {})
            if about == "unsure" or about.startswith("room:"):
                ep.report = f"I could not understand or place '{'; '.join(ep.read.unsure) or about}' and nobody answered"
            return
        if about.startswith("slot:") and self.asker is not None:
            ep.report = self.asker.answer(int(about.removeprefix("slot:")), answer, ep.mem.known_things())
            return
        if about == "unread":  # the part not read, said again: its goals join the plan's
            more = understand_request(answer, ep.embedder)
            if more.plan.goals and not more.unsure:
                ep.plan.goals = ep.plan.goals + [g for g in more.plan.goals if g not in ep.plan.goals]
                ep.plan.close_after = ep.plan.close_after + more.plan.close_after
                ep.unread = []
            return
        if about == "unsure":
            again = understand_request(answer, ep.embedder)
            if again.plan.goals and not again.unsure:
                ep.read, ep.plan = again, again.plan
            else:
                ep.report = f"I still could not understand the request (answer: '{answer}')"
            return
        if about.startswith("room:"):  # "where in the kitchen?": a place there, in the words the answer gives
            room = about.removeprefix("room:")
            got = read_answer(answer, room, [], ep.mem.known_things(), objects=False)
            if got.chosen or got.description:
                ep.plan.goals = [Move(g.things, (got.chosen or got.description or "").replace("_", " "), None)
                                 if isinstance(g, Move) and g.dest_kind == "room" else g for g in ep.plan.goals]
            elif about not in self.unusable:
                self.unusable.add(about)
                self.questions.insert(0, (f"Sorry, I could not tell from '{answer}'. Where in the {room} should it go?", about))
            else:
                ep.report = f"I could not tell where in the {room} it should go from your answers"

    def rename_phrase(self, objects: bool, old: str, new: str) -> None:
        """Put the words an answer or the scene settled into the plan."""
        ep = self.ep
        if objects:
            ep.plan.goals = [renamed(g, old, new) for g in ep.plan.goals]
        else:
            ep.plan.goals = [Move(g.things, new, None) if isinstance(g, Move) and g.dest == old and g.dest_kind is None else g
                             for g in ep.plan.goals]

    def named(self, phrase: str, objects: bool) -> str | None:
        """An alias, or a piece of furniture a home rarely has two of ('the fridge')."""
        key = "_".join(w for w in words_of(phrase) if w not in ARTICLES)
        return self.ep.grounder.aliases.get(key) or (key if not objects and key.replace("_", " ") in USUALLY_ONE else None)


def renamed(goal: object, old: str, new: str) -> object:
    """The goal with object phrase ``old`` replaced by ``new`` (after an answer made it precise)."""
    if isinstance(goal, Move) and not goal.things.names and goal.things.kind == old and goal.things.count == 1:
        return Move(Things(names=(new,)), goal.dest, goal.dest_kind)  # one of a kind: the one meant
    if isinstance(goal, Move) and old in goal.things.names:
        names = tuple(new if n == old else n for n in goal.things.names)
        return Move(Things(names=names, kind=goal.things.kind, count=goal.things.count), goal.dest, goal.dest_kind)
    if isinstance(goal, Fetch) and goal.thing == old:
        return Fetch(new, goal.pick)
    if isinstance(goal, IfEmpty) and goal.thing == old:
        return IfEmpty(goal.container, new, goal.otherwise)
    return goal
