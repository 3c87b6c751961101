"""A person at the terminal answers the planner's questions (``homiebot run --ask-me``)."""

from __future__ import annotations

import queue
import sys
import threading
from typing import TextIO

from homiebot.core.contracts import Exchange
from homiebot.people.base import User


class TerminalUser(User):
    """Prints the question and reads one line; an empty line, end of input or ``timeout`` seconds
    without an answer count as nobody answering."""

    name = "terminal"

    def __init__(self, timeout: float = 120.0, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.timeout = timeout
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stderr

    def answer(self, question: str, round_index: int) -> Exchange:
        self.stdout.write(f"\n[round {round_index}] the robot asks: {question}\nyour answer> ")
        self.stdout.flush()
        lines: queue.Queue[str] = queue.Queue()
        # a reader thread: input() cannot time out on its own; a late line is dropped with the thread
        threading.Thread(target=lambda: lines.put(self.stdin.readline()), daemon=True).start()
        try:
            text = lines.get(timeout=self.timeout).strip()
        except queue.Empty:
            text = ""
            self.stdout.write("\n(no answer in time)\n")
        return Exchange(question=question, answer=text or None, answerer=self.name)
