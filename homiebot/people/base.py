"""The ``User`` interface: answers a question or says nobody answered."""

from __future__ import annotations

from abc import ABC, abstractmethod

from homiebot.core.contracts import Exchange

NOBODY_ANSWERED = "nobody answered"


class User(ABC):
    """Someone a planner can ask. ``answer`` never raises for an unanswered question: it returns an
    ``Exchange`` whose ``answer`` is None."""

    name: str = "user"

    @abstractmethod
    def answer(self, question: str, round_index: int) -> Exchange:
        """The answer to ``question`` asked in round ``round_index``."""

    def close(self) -> None:
        """Release terminals, topics or clients."""


class NoUser(User):
    """Nobody to ask: every question times out."""

    name = "none"

    def answer(self, question: str, round_index: int) -> Exchange:
        return Exchange(question=question, answer=None, answerer=self.name)
