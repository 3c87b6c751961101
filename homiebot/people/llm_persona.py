"""An LLM-backed persona: the templated simulated user decides the facts, a language model says them.

``LLMPersonaUser`` works out every answer and its relevance exactly as ``PersonaUser`` does (so ARS
and QR stay exact and reproducible), then asks the chat-completions server of the persona's ``llm:``
section to phrase that factual answer in the persona's voice. The model sees the persona's traits,
the instruction the person gave, the question and the factual answer, never the rest of the hidden
goal. A reply is used only when it keeps every scene word of the facts and adds none; otherwise,
or when the server fails, the templated answer is given and the ``Exchange.answerer`` says why
(``persona:ada (llm unavailable: timed out after 30 s)``). An episode never stops for it.

``reword_with_llm`` does the same for a whole instruction (the persona rewording of a task), falling
back to the templated ``reword``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from homiebot.core.chat_client import ChatClient, ChatError, trim
from homiebot.core.contracts import Exchange
from homiebot.core.tasks import Condition
from homiebot.people.persona import Persona, PersonaUser, reword
from homiebot.people.scene_facts import tokens, words

log = logging.getLogger(__name__)
REASON_LIMIT = 120  # characters of a failure reason kept in the answerer
# scene words that are everyday words too ("I can", "on it"): not used to judge a reply
COMMON = frozenset({"a", "an", "and", "at", "can", "in", "it", "of", "on", "one", "set", "stand", "the", "to", "top"})

_VERBOSITY = {
    "terse": "You use as few words as you can, often no full sentence.",
    "normal": "You speak plainly, in one short sentence.",
    "chatty": "You are warm and talkative and like a friendly word around the facts, in two sentences at most.",
}
_PRECISION = {
    "vague": "You are not fussy about details when you speak, but you still pass on every detail you are given.",
    "normal": "You say things clearly.",
    "precise": "You are exact and careful about names, colours and places.",
}


def _traits(persona: Persona) -> str:
    likes = "; ".join(persona.preferences) or "nothing in particular"
    return f"{_VERBOSITY[persona.verbosity]} {_PRECISION[persona.precision]} What matters to you: {likes}."


def answer_prompt(persona: Persona, asked_before: int) -> str:
    """The system text for phrasing one answer: who the person is and the rules on facts."""
    if asked_before == 0:
        mood = "This is the first question the robot has asked you."
    else:
        mood = f"The robot has already asked you {asked_before} question{'s' if asked_before > 1 else ''} before this one."
    if asked_before >= persona.patience:
        mood += f" You are willing to answer about {persona.patience} questions; your patience has run out, so let it show."
    return (f"You are {persona.name}, a person at home who gave a household robot a chore. The robot has a question for "
            f"you, and you already know what your answer says; your only job is to say it in your own voice. "
            f"{_traits(persona)} {mood}\n"
            "Rules: state exactly the facts you are given. Keep every object, colour, place and room they name, with the "
            "same words. Never add an object, colour, place, room or request that is not in them, never guess, never "
            "contradict them. Reply with your spoken answer only: no quotes, no notes, no stage directions.")


def reword_prompt(persona: Persona, keep: Sequence[str]) -> str:
    """The system text for rewording an instruction in the persona's voice."""
    kept = ", ".join(f'"{k}"' for k in keep)
    return (f"You are {persona.name}, asking a household robot to do a chore. Rewrite the request you are given the way you "
            f"would say it. {_traits(persona)}\n"
            "Rules: keep the meaning exactly: the same objects, colours, places and the same number of things. "
            + (f"Keep these words exactly as written: {kept}. " if kept else "")
            + "Add nothing and leave nothing out. Reply with the request only: no quotes, no notes.")


def _clean(text: str) -> str:
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def _plain(text: str) -> str:
    """Lower-case words separated by single spaces."""
    return " ".join(w for w in re.split(r"[^a-z0-9]+", text.lower()) if w)


def _short(reason: str) -> str:
    return trim(reason, REASON_LIMIT)


class LLMPersonaUser(PersonaUser):
    """A ``PersonaUser`` whose answers a language model phrases (the persona file's ``llm:`` section)."""

    def __init__(self, persona: Persona, instruction: str, goal: Sequence[Condition], scene: dict | None, seed: int,
                 client: ChatClient | None = None) -> None:
        """``client``: the server to ask (default: one built from ``persona.llm``)."""
        super().__init__(persona, instruction, goal, scene, seed)
        if client is None:
            if persona.llm is None:
                raise ValueError(f"persona '{persona.name}' has no llm section")
            client = persona.llm.client()
        self.client = client
        self.instruction = instruction
        self.seed = seed
        self.max_chars = persona.llm.max_chars if persona.llm is not None else 400
        self.llm_name = f"persona-llm:{persona.name}"
        facts = self.facts
        names = [*facts.object_class, *facts.object_class.values(), *facts.colour.values(), *facts.receptacle_type,
                 *facts.receptacle_type.values(), *facts.rooms]
        self.scene_words = {w for n in names if n for w in tokens(words(n))} - COMMON

    def in_character(self, question: str, plain: Exchange) -> Exchange:
        templated = super().in_character(question, plain)  # always: the fallback, and the same random draws either way
        facts = plain.answer or ""
        messages = [{"role": "system", "content": answer_prompt(self.persona, self.asked - 1)},
                    {"role": "user", "content": f'What you asked the robot to do: "{self.instruction}"\n'
                                                f'The robot asks: "{question}"\n'
                                                f'The facts of your answer: "{facts}"\n'
                                                "Your answer, in your own words:"}]
        try:
            reply = self.client.complete(messages, seed=self.seed)
        except ChatError as err:
            return self._fallback(templated, f"llm unavailable: {_short(err.reason)}")
        text = _clean(reply.text)
        problem = self._unusable(text, facts, question)
        if problem:
            return self._fallback(templated, f"llm reply not used: {problem}")
        return plain.model_copy(update={"answer": text, "answerer": self.llm_name})

    def _unusable(self, text: str, facts: str, question: str) -> str | None:
        """Why a reply cannot stand for the facts (None: it can)."""
        if not text:
            return "empty"
        if len(text) > self.max_chars:
            return f"{len(text)} characters, more than {self.max_chars}"
        said = tokens(text)
        needed = tokens(facts) & self.scene_words
        missing = sorted(needed - said)
        if missing:
            return f"left out {', '.join(missing)}"
        allowed = needed | tokens(question) | tokens(self.instruction)
        added = sorted((said & self.scene_words) - allowed)
        if added:
            return f"added {', '.join(added)}"
        return None

    def _fallback(self, templated: Exchange, reason: str) -> Exchange:
        log.warning("persona %s: %s; the templated answer is used", self.persona.name, reason)
        return templated.model_copy(update={"answerer": f"{self.name} ({reason})"})


@dataclass(frozen=True)
class Rewording:
    """An instruction in a persona's words; ``by_llm`` False means the templated ``reword`` (``reason`` says why)."""

    text: str
    by_llm: bool
    reason: str = ""


def reword_with_llm(instruction: str, persona: Persona, seed: int, keep: Sequence[str] = (),
                    client: ChatClient | None = None) -> Rewording:
    """The instruction reworded by the persona's language model; every phrase in ``keep`` (names of the
    objects and places it mentions) must survive word for word. Falls back to ``reword`` on any failure."""
    templated = reword(instruction, persona, seed)
    if client is None:
        if persona.llm is None:
            return Rewording(templated, False, "no llm section")
        client = persona.llm.client()
    limit = persona.llm.max_chars if persona.llm is not None else 400
    messages = [{"role": "system", "content": reword_prompt(persona, keep)},
                {"role": "user", "content": f'The request: "{instruction}"\nThe request in your words:'}]
    try:
        text = _clean(client.complete(messages, seed=seed).text)
    except ChatError as err:
        return Rewording(templated, False, f"llm unavailable: {_short(err.reason)}")
    lost = [k for k in keep if f" {_plain(k)} " not in f" {_plain(text)} "]
    if not text or len(text) > limit or lost:
        why = "empty" if not text else f"more than {limit} characters" if len(text) > limit else f"left out {', '.join(lost)}"
        return Rewording(templated, False, f"llm reply not used: {why}")
    return Rewording(text, True)
