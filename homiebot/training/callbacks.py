"""What ``homiebot train sft|dpo`` reports and when it stops: a progress line per logged step (step, loss,
tokens per second, time left) and a time budget after which training stops, saves and says so."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from transformers import TrainerCallback


class Progress(TrainerCallback):  # type: ignore[misc]
    """One line per logged step on ``stream``; stops training once ``budget_s`` has passed (None: no budget)."""

    def __init__(self, total_steps: int, budget_s: float | None = None, stream: TextIO | None = None) -> None:
        self.total, self.budget_s, self.stream = total_steps, budget_s, stream or sys.stderr
        self.started = time.monotonic()
        self.first_step: int | None = None
        self.tokens = 0
        self.stopped_by_budget = False

    def count(self, tokens: int) -> None:
        """Tokens of the batch just built (called by the data collator)."""
        self.tokens += tokens

    def elapsed(self) -> float:
        """Seconds since training started."""
        return time.monotonic() - self.started

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """The clock starts with the first step, not with loading."""
        self.started = time.monotonic()
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """Stop (and save) once the budget is spent."""
        if self.first_step is None:
            self.first_step = state.global_step - 1
        if self.budget_s is not None and self.elapsed() > self.budget_s and state.global_step < self.total:
            self.stopped_by_budget = True
            control.should_training_stop = True
            control.should_save = True
        return control

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """``step 12/300  loss 1.234  410 tok/s  eta 0:42:10``."""
        if not logs or "loss" not in logs:
            return control
        done = state.global_step - (self.first_step or 0)
        spent = self.elapsed()
        rate = self.tokens / spent if spent > 0 else 0.0
        left = (self.total - state.global_step) * spent / done if done > 0 else 0.0
        if self.budget_s is not None:
            left = min(left, max(self.budget_s - spent, 0.0))
        print(f"step {state.global_step}/{self.total}  loss {float(logs['loss']):.4f}  {rate:.0f} tok/s  "
              f"eta {time.strftime('%H:%M:%S', time.gmtime(left))}", file=self.stream, flush=True)
        return control
