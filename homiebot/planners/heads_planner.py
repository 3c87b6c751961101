"""The ``trained`` planner for the CPU recipe (``recipe: minilm_heads``): every subtask decoded by the model.

Each round, the scorer of ``homiebot.planners.minilm_heads`` scores every complete subtask that is valid
this round (End; Go to, Pick, Open, Close with a known name; Put of what is held onto a known name).
``decode`` picks the answer: the action whose subtasks hold the most probability in total, then that
action's best-scoring subtask; End ends the episode. The known names are every instance label the
views have shown in this episode, the rooms of the map summary when there is one, the targets and
places of earlier subtasks and what the robot holds (as in the training records' ``known``). The model is the
model head's best among the configured models that can run the action. The answer is JSON text that the
agent parses like any planner's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from homiebot.planners.base import EpisodeContext, ModelInfo, Planner, PlannerConfigError, PlannerReply, PlannerRequest
from homiebot.planners.minilm_heads import (
    FEATURES,
    Embeddings,
    Round,
    build_heads,
    candidate_matrix,
    context_vector,
    decode,
    options,
    pair_features,
    round_texts,
)


class HeadsPlanner(Planner):
    """Plans with the MiniLM encoder and the heads ``homiebot train heads`` saved in ``path``."""

    needs_views = ("segmentation",)  # only the instance labels are read

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        try:
            import torch
        except ImportError:
            raise PlannerConfigError("trained planner: the minilm_heads recipe needs torch: pip install 'homiebot[ml]'") from None
        self.actions: list[str] = [str(a) for a in manifest.get("actions", [])]
        self.models_vocab: list[str] = [str(m) for m in manifest.get("models", [])]
        if not self.actions:
            raise PlannerConfigError(f"trained planner: {path} names no actions in its manifest")
        if manifest.get("features") != FEATURES:
            raise PlannerConfigError(f"trained planner: {path} was trained with feature layout {manifest.get('features', 1)}, "
                                     f"this version reads layout {FEATURES}; train it again with `homiebot train heads`")
        self.heads = build_heads(len(self.actions), len(self.models_vocab), int(manifest.get("hidden", 128)))
        weights = path / str(manifest.get("weights", "heads.pt"))
        try:
            state = torch.load(weights, map_location="cpu", weights_only=True)
            self.heads.load_state_dict(state)
        except Exception as err:  # missing, damaged or of other sizes than the manifest says
            raise PlannerConfigError(f"trained planner: cannot load {weights}: {type(err).__name__}: {str(err)[:200]}") from None
        self.heads.eval()
        self.manifest = manifest
        self.emb = Embeddings()
        self.models: list[ModelInfo] = []
        self.known: set[str] = set()
        self.rooms: set[str] = set()  # names whose category is room (views' labels, the map's rooms)
        self._torch = torch

    def reset(self, context: EpisodeContext) -> None:
        """Forget the names of the last episode; note the configured models."""
        self.models = list(context.models)
        self.known = set()
        self.rooms = set()

    def _candidates(self, request: PlannerRequest, r: Round) -> list[str]:
        if request.observation is not None:
            labels = request.observation.labels.values()
            self.known |= {label.name for label in labels}
            self.rooms |= {label.name for label in labels if label.category == "room"}
        if request.scene_map:
            self.rooms |= {str(room["name"]) for room in request.scene_map.get("rooms", []) if isinstance(room, dict)}
            self.known |= {str(i["id"]) for i in request.scene_map.get("instances", []) if isinstance(i, dict) and not i.get("stale")}
        self.known |= self.rooms
        for parts, _, _ in r.steps():
            self.known |= {p for p in parts[1:] if p}
        self.known |= set(request.inventory)
        return sorted(self.known)

    def plan(self, request: PlannerRequest) -> PlannerReply:
        """Decode one subtask: the scorer's best complete subtask among the valid ones, then the model head's model."""
        torch = self._torch
        feedback = "None" if request.feedback is None or request.feedback.success else request.feedback.message
        r = Round(request.instruction, tuple(request.inventory), tuple(request.history), feedback)
        cands = self._candidates(request, r)
        r = Round(r.instruction, r.inventory, r.history, r.feedback, tuple(sorted(self.rooms)))
        offered = ({a for info in self.models for a in info.actions} | {"End"}) if self.models else set(self.actions)
        self.emb.add(round_texts(r, cands))
        mat, ment = candidate_matrix(r, cands, self.emb)
        opts = options(self.actions, [a for a in self.actions if a in offered], cands, r.inventory)
        if not opts:  # nothing decodable (no End in the vocabulary and no name known): answer End, the only safe choice
            return PlannerReply(json.dumps({"analysis": "no subtask is decodable", "subtask": ["End"], "model": None}))
        with torch.no_grad():
            h = self.heads.ctx(torch.tensor(context_vector(r, cands, self.emb, ment))[None])
            c = self.heads.cand(torch.tensor(mat))
            o = torch.tensor(np.array(opts, np.int64))
            scores = self.heads.score(h.expand(len(opts), -1), c, o[:, 0], o[:, 1], o[:, 2],
                                      torch.tensor(pair_features(opts, cands, ment)))
            best = decode(scores, o[:, 0], len(self.actions))
            a, t, p = opts[best]
            action = self.actions[a]
            prob = float(torch.softmax(scores, 0)[best])
            if action == "End":
                return PlannerReply(json.dumps({"analysis": f"the scorer chooses End ({prob:.2f})", "subtask": ["End"], "model": None}))
            parts = [action, cands[t]] + ([cands[p]] if p >= 0 else [])
            able = [m.name for m in self.models if action in m.actions] or [m.name for m in self.models]
            model = None
            if able:
                logits = self.heads.models(h, c, o[best:best + 1, 0], o[best:best + 1, 1])[0]
                model = max(able, key=lambda m: float(logits[self.models_vocab.index(m)]) if m in self.models_vocab else float("-inf"))
        analysis = f"scorer: {', '.join(parts)} ({prob:.2f} of {len(opts)} subtasks over {len(cands)} names)"
        return PlannerReply(json.dumps({"analysis": analysis, "subtask": parts, "model": model}))
