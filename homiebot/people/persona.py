"""Simulated users with personas (BASIS style): a persona file says how a person talks (verbosity,
precision, patience, preferences); ``reword`` turns a task's instruction into that person's words, and
``PersonaUser`` answers questions in character. Everything is templated and reproducible from a seed.

Persona file (YAML): ``name``, ``verbosity`` (terse | normal | chatty), ``precision`` (vague | normal |
precise), ``patience`` (questions answered fully before answers turn short), ``preferences`` (words),
and optionally ``llm`` (``LLMSettings``: a chat-completions server that phrases the answers, see
``homiebot.people.llm_persona``). Built-in personas: ``homiebot/people/personas/*.yaml`` (ada, bo,
cleo, dev), by name or by file path; ``config/personas/ada_ollama.yaml`` is an example with ``llm``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from homiebot.core.chat_client import ChatClient, ChatConfigError
from homiebot.core.contracts import Exchange
from homiebot.core.errors import ConfigError
from homiebot.core.tasks import Condition
from homiebot.core.yamlio import format_validation_error, read_yaml
from homiebot.people.simulated import SimulatedUser

BUILTIN = Path(__file__).parent / "personas"


class LLMSettings(BaseModel):
    """A persona's optional ``llm:`` section: the chat-completions server that phrases its answers
    (the settings of ``homiebot.core.chat_client.ChatClient``; defaults fit a local Ollama server)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model: str = Field(description="the model name the server serves, e.g. llama3.2 for Ollama")
    base_url: str = Field("http://localhost:11434/v1", description="API root ending in /v1")
    api_key_env: str | None = Field(None, description="environment variable holding the key (null: no key)")
    temperature: float | None = Field(0.7, description="sampling temperature (null: the server's default)")
    max_tokens: int | None = Field(120, description="longest reply in tokens (null: the server's default)")
    timeout: float = Field(30.0, description="seconds to wait for one reply")
    retries: int = Field(1, description="further attempts after a transient failure")
    backoff: float = Field(1.0, description="seconds before the first retry, doubling")
    max_chars: int = Field(400, ge=20, description="longer replies are not used (the templated answer is)")
    extra_headers: dict[str, str] = {}
    extra_body: dict[str, Any] = {}

    @model_validator(mode="after")
    def _usable(self) -> LLMSettings:
        self.client()  # the client's own checks (URL scheme, positive timeout...) at load time
        return self

    def client(self, user_agent: str = "homiebot-persona") -> ChatClient:
        """A client for these settings; ValueError (naming the setting) when they are unusable."""
        try:
            return ChatClient(model=self.model, base_url=self.base_url, api_key_env=self.api_key_env, temperature=self.temperature,
                              max_tokens=self.max_tokens, timeout=self.timeout, retries=self.retries, backoff=self.backoff,
                              extra_headers=self.extra_headers, extra_body=self.extra_body, user_agent=user_agent)
        except ChatConfigError as err:
            raise ValueError(str(err)) from None


class Persona(BaseModel):
    """How one simulated person talks."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    verbosity: Literal["terse", "normal", "chatty"] = "normal"
    precision: Literal["vague", "normal", "precise"] = "normal"
    patience: int = Field(3, ge=0)
    preferences: list[str] = []
    llm: LLMSettings | None = Field(None, description="optional: a chat-completions server phrases the answers in character")


def builtin_personas() -> list[str]:
    return sorted(p.stem for p in BUILTIN.glob("*.yaml"))


def load_persona(name_or_path: str) -> Persona:
    """A built-in persona by name, or a persona file; ConfigError with the choices otherwise."""
    path = Path(name_or_path)
    if not path.is_file():
        path = BUILTIN / f"{name_or_path}.yaml"
    if not path.is_file():
        raise ConfigError(f"no persona '{name_or_path}': not a file, and not a built-in persona ({', '.join(builtin_personas())})")
    data = read_yaml(path, "persona file", ConfigError)
    try:
        return Persona.model_validate(data)
    except ValidationError as err:
        raise ConfigError(f"{path}: invalid persona\n{format_validation_error(err)}") from None


_OPENERS = {
    "terse": ["", ""],
    "normal": ["could you ", "can you ", "please "],
    "chatty": ["hi! i have a favour to ask. could you ", "oh, hello. when you have a moment, could you ",
               "right, so, could you "],
}
_CLOSERS = {"terse": ["", "."], "normal": ["", ", thanks", ", please"], "chatty": [", thank you so much!", ", that would be lovely."]}
_LEADS = re.compile(r"^(?:please |could you |can you |would you mind |would you |hey,? |ugh,? |hi,? )+")


def reword(instruction: str, persona: Persona, seed: int) -> str:
    """The instruction in the persona's words (same meaning): openers and closers by verbosity, a
    question for people who ask. Deterministic for a seed."""
    rng = random.Random(f"{persona.name}:{seed}:{instruction}")
    core = _LEADS.sub("", instruction.strip().rstrip(".!").strip())
    starts_with_verb = bool(re.match(r"^(?:put|place|move|bring|take|carry|set|leave|open|close|find|fetch|get|grab|clear|"
                                     r"clean|hide|keep|collect|gather|drop|tidy)\b", core))
    if not starts_with_verb or "." in core or "?" in core:  # a statement or several sentences: only a closer
        return (instruction.rstrip(".! ") + rng.choice(_CLOSERS[persona.verbosity])).strip()
    if persona.verbosity == "terse":
        return core + rng.choice(_CLOSERS["terse"])
    opener = rng.choice(_OPENERS[persona.verbosity])
    text = opener + core + rng.choice(_CLOSERS[persona.verbosity])
    if "questions" in " ".join(persona.preferences) or opener.startswith(("could", "can")):
        text = text.rstrip(".!, ") + "?"
    return text


class PersonaUser(SimulatedUser):
    """A simulated user that answers in character: the same facts, the persona's manner."""

    def __init__(self, persona: Persona, instruction: str, goal: Sequence[Condition], scene: dict | None, seed: int) -> None:
        super().__init__(instruction, goal, scene)
        self.persona = persona
        self.name = f"persona:{persona.name}"
        self.rng = random.Random(f"{persona.name}:{seed}")
        self.asked = 0

    def answer(self, question: str, round_index: int) -> Exchange:
        plain = super().answer(question, round_index)
        self.asked += 1
        return self.in_character(question, plain)

    def in_character(self, question: str, plain: Exchange) -> Exchange:
        """``plain`` (the simulated user's factual answer and judgement) in the persona's words."""
        text = plain.answer or ""
        if self.persona.verbosity == "chatty":
            text = self.rng.choice(["Oh, good question! ", "Ah, sorry, I should have said. ", "Right! "]) + text
        elif self.persona.verbosity == "terse":
            text = re.sub(r"^(?:I mean |It goes |I told you already: |Just as I said: )", "", text)
            text = ("the " + text) if not text.lower().startswith(("the ", "on ", "in ", "please", "that", "yes",
                                                                                 "no", "i ", "as ")) else text
        if self.asked > self.persona.patience:
            text = "Again? " + text
        return plain.model_copy(update={"answer": text, "answerer": self.name})
