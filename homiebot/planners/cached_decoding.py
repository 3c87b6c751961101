"""Choice-constrained decoding over one key/value cache, for text-only models.

The ``hf`` planner's constrained decoding builds an answer in turns: a free part (the analysis, a
target), then a choice among a few continuations (the action, the model), then another free part.
Run naively, every turn feeds the whole prompt through the model again, and every choice does so once
per option: some twenty full passes a round. Here the prompt is fed once; each later step feeds only
the tokens the cache has not seen, and a choice rolls the cache back to where the options part. The
arithmetic is the same as the full passes (same tokens, same positions), so the answers are the same,
about ten times faster on a CPU.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any


def cut_at_stops(text: str, stops: Sequence[str]) -> str:
    """``text`` up to the first of ``stops`` it holds (all of it when it holds none)."""
    ends = [i for i in (text.find(s) for s in stops) if i >= 0]
    return text[:min(ends)] if ends else text


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading token ids ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class CachedSequence:
    """A causal LM over one growing-and-shrinking token sequence, keeping the key/value cache of what it has fed."""

    def __init__(self, model: Any, torch: Any) -> None:
        self.model, self.torch = model, torch
        self.device = next(model.parameters()).device  # once: _feed runs for every generated token
        self.ids: list[int] = []
        self.cache: Any = None
        self.last_logits: Any = None  # the logits after self.ids (predicting the next token)

    def _keep(self, n: int) -> None:
        """Roll the cache back to its first ``n`` tokens."""
        if n == len(self.ids):
            return
        if n == 0 or self.cache is None:
            self.ids, self.cache = [], None
            return
        self.cache.crop(n - len(self.ids))  # a negative count removes that many tokens from the end
        self.ids = self.ids[:n]

    def _feed(self, ids: Sequence[int]) -> Any:
        """Append ``ids`` to the sequence; returns their logits (one row per fed token)."""
        torch, device = self.torch, self.device
        with warnings.catch_warnings():  # transformers 5.x renames past_key_values (cache); 4.x knows only the old name
            warnings.simplefilter("ignore", FutureWarning)
            out = self.model(input_ids=torch.tensor([list(ids)], device=device), past_key_values=self.cache, use_cache=True)
        self.cache = out.past_key_values
        self.ids.extend(ids)
        logits = out.logits[0].float()
        self.last_logits = logits[-1]
        return logits

    def next_logits(self, ids: Sequence[int]) -> Any:
        """The logits of the token after ``ids`` (the sequence becomes ``ids``)."""
        keep = common_prefix(self.ids, ids)
        if keep == len(ids) == len(self.ids) and self.last_logits is not None:
            return self.last_logits
        keep = min(keep, len(ids) - 1)  # at least the last token is fed: its logits are the ones asked for
        self._keep(keep)
        return self._feed(ids[keep:])[-1]

    def log_probs(self, ids: Sequence[int], start: int) -> list[float]:
        """Log-probabilities of ``ids[start:]``, each given the tokens before it (the sequence becomes ``ids``)."""
        keep = min(common_prefix(self.ids, ids), start - 1)
        self._keep(keep)
        logits = self._feed(ids[keep:])
        logprobs = self.torch.log_softmax(logits, dim=-1)
        return [float(logprobs[i - 1 - keep, ids[i]]) for i in range(start, len(ids))]


class CachedSteps:
    """The free and choice steps of constrained decoding, after a fixed prompt, over one cache."""

    def __init__(self, model: Any, tokenizer: Any, prompt_ids: Sequence[int], torch: Any,
                 pick: Callable[[Any], Any] | None = None) -> None:
        """``pick``: turns a row of next-token scores into the scores to take the argmax of (a seeded
        sampler); None is greedy."""
        self.tokenizer, self.prompt_ids, self.pick = tokenizer, list(prompt_ids), pick
        self.sequence = CachedSequence(model, torch)
        self.eos = {t for t in _as_list(getattr(model.generation_config, "eos_token_id", None))}

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def free(self, text: str, stops: Sequence[str], budget: int) -> tuple[str, int]:
        """Generate after the prompt and ``text`` until a stop string, an end token or ``budget`` tokens;
        the text (cut at the first stop) and the token count."""
        ids = self.prompt_ids + self._encode(text)
        new: list[int] = []
        logits = self.sequence.next_logits(ids)
        decoded = ""
        for _ in range(budget):
            scores = logits[None] if self.pick is None else self.pick(logits[None])
            token = int(scores.argmax(-1))
            if token in self.eos:
                break
            new.append(token)
            decoded = self.tokenizer.decode(new, skip_special_tokens=True)
            if stops and any(s in decoded for s in stops):
                break
            logits = self.sequence.next_logits(ids + new)
        if not stops:
            return decoded.strip(), len(new)
        return cut_at_stops(decoded, stops), len(new)

    def choose(self, text: str, options: Sequence[str]) -> int:
        """Index of the option whose tokens after ``text`` have the highest mean log-probability (all
        scored from the token where their encodings part)."""
        base = self._encode(text)
        encoded = [self._encode(text + option) for option in options]
        shared = min(common_prefix(base, e) for e in encoded)
        start = len(self.prompt_ids) + shared
        scores = []
        for e in encoded:
            picked = self.sequence.log_probs(self.prompt_ids + e, start)
            scores.append(sum(picked) / max(len(picked), 1))
        return max(range(len(options)), key=lambda i: scores[i])


def _as_list(value: Any) -> list[int]:
    if value is None:
        return []
    return [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]
