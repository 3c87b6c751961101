"""Operator approval of the next subtask: approve, reject (with a reason) or edit, within a timeout."""

from __future__ import annotations

import os
import select
import sys
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TextIO

from homiebot.core.contracts import Subtask
from homiebot.core.parsing import FormatError, parse_subtask_text


@dataclass(frozen=True)
class ApprovalRequest:
    """What the operator is shown: the checked subtask and the model that would run it."""

    round: int
    subtask: Subtask
    model: str | None
    instruction: str = ""


@dataclass(frozen=True)
class Decision:
    """``approve``, ``reject`` or ``edit`` (run ``subtask`` instead); ``reason`` is told to the planner
    on a rejection. A timeout is a rejection whose ``timed_out`` is True."""

    verdict: str
    reason: str = ""
    subtask: Subtask | None = None
    timed_out: bool = False


class Approver(ABC):
    """Asks someone whether the next subtask may run."""

    @abstractmethod
    def decide(self, request: ApprovalRequest, timeout: float) -> Decision:
        """The operator's decision, or a rejection with ``timed_out`` after ``timeout`` seconds."""


def read_decision(text: str, request: ApprovalRequest) -> Decision | None:
    """An operator's typed answer: ``a``/``approve``/``y``; ``r``/``reject`` [reason];
    ``e``/``edit`` [Action, target(, place)]. None when it is none of these."""
    text = text.strip()
    word, _, rest = text.partition(" ")
    word = word.lower()
    if word in ("a", "approve", "y", "yes", "ok"):
        return Decision("approve")
    if word in ("r", "reject", "n", "no"):
        return Decision("reject", rest.strip() or "the operator rejected it")
    if word in ("e", "edit"):
        try:
            return Decision("edit", subtask=parse_subtask_text(rest.strip()))
        except (FormatError, ValueError):
            return None
    return None


class TerminalApprover(Approver):
    """Asks in a terminal (``homiebot run``): one typed line per question, read from ``stream``'s file
    descriptor with a timeout (unbuffered, so nothing typed ahead is lost between questions)."""

    def __init__(self, stream: TextIO | None = None, out: TextIO | None = None) -> None:
        self.fd = (stream or sys.stdin).fileno()
        self.out = out or sys.stderr
        self._pending = b""

    def _line(self, deadline: float) -> str | None:
        """The next line typed, or None at end of input or when the deadline passes."""
        while b"\n" not in self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
                return None
            chunk = os.read(self.fd, 4096)
            if not chunk:
                return None
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode(errors="replace")

    def decide(self, request: ApprovalRequest, timeout: float) -> Decision:
        model = f" with {request.model}" if request.model else ""
        self.out.write(f"\nround {request.round}: next subtask {request.subtask.text()}{model}\n"
                       f"  approve [a], reject [r <reason>], edit [e [Action, target]]  ({timeout:.0f} s): ")
        self.out.flush()
        deadline = time.monotonic() + timeout
        while (line := self._line(deadline)) is not None:
            decision = read_decision(line, request)
            if decision is not None:
                return decision
            self.out.write("  answer a, r <reason> or e [Action, target]: ")
            self.out.flush()
        self.out.write("\n  no answer: rejected\n")
        self.out.flush()
        return Decision("reject", f"nobody approved it within {timeout:.0f} s", timed_out=True)


class AutoApprover(Approver):
    """Approves everything (for tests and unattended runs that configure approval but trust the planner)."""

    def decide(self, request: ApprovalRequest, timeout: float) -> Decision:
        return Decision("approve")


__all__ = ["ApprovalRequest", "Approver", "AutoApprover", "Decision", "TerminalApprover", "read_decision"]
