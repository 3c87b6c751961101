"""The heuristic planner's assembly: each episode it builds its parts around one shared state (``episode.py``)
and, each round, folds in perception and feedback (or the answer to its question), then lets the parts
choose: the report that ends it, a queued question, the scene's question or look, else the next step
towards the goals. A hand-over to a person wraps what was chosen."""

from __future__ import annotations

import json
from typing import Any

from homiebot.core.contracts import Action, Subtask
from homiebot.perception.grounding import SHARED_EMBEDDER, Grounder, TextEmbedder, notice_words_only
from homiebot.planners.base import EpisodeContext, Planner, PlannerConfigError, PlannerReply, PlannerRequest
from homiebot.planners.coverage import unread_parts
from homiebot.planners.instructions import Plan, UnsupportedInstruction, parse_instruction
from homiebot.planners.models import choose_model
from homiebot.planners.people import HandOver, hand_over_step, read_hand_over, situate_remark
from homiebot.planners.recalled import resolve, unresolved_phrase
from homiebot.planners.understanding import Understanding, understand_request

from .acting import Decision, Hands
from .dialogue import Dialogue
from .episode import Episode
from .feedback import learn
from .goals import Goals
from .map_referents import MapReferents
from .perceiving import perceive
from .referents import Referents
from .said_places import SaidPlaces
from .scene_check import SceneCheck
from .searching import Search
from .targets import Targets


class Delegated:
    """A planner attribute that is one of its parts' own (read and set through the planner)."""

    def __init__(self, part: str, name: str) -> None:
        self.part, self.name = part, name

    def __get__(self, planner: object | None, owner: type | None = None) -> Any:
        if planner is None:  # looked up on the class itself
            return self
        return getattr(getattr(planner, self.part), self.name)

    def __set__(self, planner: object, value: Any) -> None:
        setattr(getattr(planner, self.part), self.name, value)


class HeuristicPlanner(Planner):
    """Rule-based, perception-only planner for a documented subset of instructions."""

    needs_views = ("depth", "segmentation")

    # the parts' state and entry points, reachable from the planner as well (to set up or probe a situation)
    mem = Delegated("episode", "mem")
    grounder = Delegated("episode", "grounder")
    read = Delegated("episode", "read")
    plan_ = Delegated("episode", "plan")
    models = Delegated("episode", "models")
    can_ask = Delegated("episode", "can_ask")
    max_rounds = Delegated("episode", "max_rounds")
    _round = Delegated("episode", "round")
    asker = Delegated("dialogue", "asker")
    questions = Delegated("dialogue", "questions")
    _asked = Delegated("dialogue", "asked")
    _apply_answer = Delegated("dialogue", "fold_answer")
    _rename_phrase = Delegated("dialogue", "rename_phrase")
    _named = Delegated("dialogue", "named")
    _scene_question = Delegated("scene_check", "check")
    _closed_for = Delegated("scene_check", "closed_for")
    _shut_away = Delegated("scene_check", "shut_away")
    _decide = Delegated("goals", "decide")
    _object = Delegated("referents", "object")
    _receptacle = Delegated("referents", "receptacle")
    _explore = Delegated("search", "explore")

    def __init__(self, embeddings: bool = True) -> None:
        self.embeddings = embeddings
        if embeddings:
            notice_words_only("heuristic planner")  # asked for, but the ml extra is missing
        self.hand_over: HandOver | None = None
        self._last: tuple[Subtask, str | None] | None = None  # the subtask decided last round, with its model
        self._assemble(Episode(embedder=self._embedder()))

    def _embedder(self) -> TextEmbedder | None:
        """The sentence embedder that reading and grounding use (None: words only)."""
        return SHARED_EMBEDDER if self.embeddings else None

    def _assemble(self, episode: Episode) -> None:
        """Build the parts around one episode's shared state."""
        self.episode = episode
        self.hands = Hands(episode, explore=lambda what: self.search.explore(what))
        self.search = Search(episode, self.hands)
        self.referents = Referents(episode, MapReferents(episode), self.search)
        said = SaidPlaces(episode, self.referents, self.search, self.hands)
        targets = Targets(episode, self.referents, said, self.search)
        self.goals = Goals(episode, self.referents, targets, said, self.search, self.hands)
        self.dialogue = Dialogue(episode)
        self.scene_check = SceneCheck(episode, self.dialogue, self.search, self.hands)

    def reset(self, context: EpisodeContext) -> None:
        """Read the instruction (refusing one of which nothing can be read) and start from an empty memory."""
        # a hand-over to a person (planners/people.py): this planner does the fetching part
        self.hand_over = read_hand_over(context.task.instruction) if context.task.has_person else None
        instruction = self.hand_over.instruction if self.hand_over is not None else (
            (situate_remark(context.task.instruction) if context.task.has_person else None) or context.task.instruction)
        shown = resolve(instruction, context.memories)  # "like I showed you": the place from recalled demonstrations
        embedder = self._embedder()
        read = understand_request(shown.instruction, embedder)
        if shown.unresolved:
            read = Understanding(Plan(), [unresolved_phrase(shown)])
        if not read.plan.goals and not context.ask and not shown.unresolved:
            try:  # nothing could be read: the older grammar's refusal lists what it understands
                parse_instruction(context.task.instruction)
            except UnsupportedInstruction as err:
                raise PlannerConfigError(str(err)) from None
            raise PlannerConfigError(f"the heuristic planner could not read '{context.task.instruction.strip()}'")
        unread = unread_parts(shown.instruction, read.plan) if read.plan.goals and not read.unsure and not shown.unresolved else []
        self._assemble(Episode(embedder=embedder, grounder=Grounder(context.task.aliases, embedder), read=read, plan=read.plan,
                               models=context.models, can_ask=context.ask, max_rounds=context.max_rounds, unread=unread))
        self._last = None
        self.dialogue.begin(self.scene_check.shut_away)

    def understood(self) -> str | None:
        """The goal read from the instruction, in words."""
        return self.episode.read.statement() or None

    def report(self) -> str | None:
        """Why it ended without doing the task (not understood, not found, nobody answered), if so."""
        return self.episode.report

    def plan(self, request: PlannerRequest) -> PlannerReply:
        """Learn from the round's perception and feedback, then decide the next subtask."""
        ep = self.episode
        ep.round = request.round
        perceive(ep, request)
        if self._last is not None and self._last[0].action is Action.ASK and self.dialogue.asked is not None:
            self.dialogue.hear(request.feedback)
        else:
            learn(ep.mem, self._last, request.feedback)
        sub, why = self._choose()
        if self.hand_over is not None:
            rooms = sorted(n for n, c in ep.mem.known.items() if c == "room")
            sub, why = hand_over_step(self.hand_over, request, ep.mem.held, sub.action is Action.END, rooms, ep.models,
                                      ep.mem.robot_room) or (sub, why)
        if request.round == 1:
            why = f"I understood: {ep.read.statement() or 'nothing I can act on'}. {why}"
        return self._reply(sub, why)

    def _choose(self) -> tuple[Subtask, str]:
        """The round's subtask and why: a report ends it, questions come before acting, then the goals."""
        ep = self.episode
        try:
            if ep.report:
                return Subtask(action=Action.END), f"I stop to report: {ep.report}"
            if self.dialogue.questions and ep.can_ask:
                return self.dialogue.ask_queued()
            if ep.read.unsure:
                ep.report = f"I could not understand or ground '{'; '.join(ep.read.unsure)}'"
                return Subtask(action=Action.END), f"I stop to report: {ep.report}"
            if ep.can_ask:
                self.scene_check.check()
            self.goals.decide()
        except Decision as d:
            refused = ep.mem.inapplicable.get(d.sub.text())
            if refused is not None:  # the same again would fail the same way: say what cannot be done instead
                ep.report = f"I cannot {d.sub.text()}: {refused.rstrip('.')}"
                return Subtask(action=Action.END), f"I stop to report: {ep.report}"
            return d.sub, d.why
        undone = self.goals.undone()
        if undone:
            ep.report = f"I could not move {', '.join(undone)}: every way to reach or pick it failed; the rest is done"
            return Subtask(action=Action.END), f"I stop to report: {ep.report}"
        unmet = self.goals.unmet()
        if unmet or ep.unread:
            done = f"I did what I read ({ep.read.statement()})" if not unmet else f"I did not get done: {'; '.join(unmet)}"
            ep.report = done + (f"; I could not read what to do about: {'; '.join(ep.unread)}" if ep.unread else "")
            return Subtask(action=Action.END), f"I stop to report: {ep.report}"
        why = "everything the instruction asks for is done"
        if self.goals.arrived:
            why += f": I am {' and '.join(self.goals.arrived)}"
        return Subtask(action=Action.END), why

    def _reply(self, sub: Subtask, why: str) -> PlannerReply:
        """The reply text for a subtask, with the model chosen for it (none for End and Ask)."""
        if sub.action in (Action.END, Action.ASK):
            self._last = (sub, None)
            return PlannerReply(json.dumps({"analysis": why, "subtask": [sub.action.value, *([sub.target] if sub.target else [])],
                                            "model": None}))
        kind = self.episode.mem.kind(sub.target) if sub.action is Action.GO_TO else None
        model = choose_model(sub, kind, self.episode.models, self.episode.mem.fails.get(sub.text(), []))
        self._last = (sub, model)
        parts = [sub.action.value] + [p for p in (sub.target, sub.place) if p]
        return PlannerReply(json.dumps({"analysis": why, "subtask": parts, "model": model}))
