"""The ``trained`` planner for the CPU recipe (``recipe: minilm_heads``): every subtask decoded by the heads.

Each round, the action is the action head's best among the offered actions it knows; End ends the
episode. Otherwise the target (and, for Put, the place) is the best-scoring candidate: the names the
planner knows this round, i.e. every instance label its views have shown in this episode, the rooms of
the map summary when there is one, the targets and places of earlier subtasks and what the robot holds
(as in the training records' ``known``). The model is the model head's best among the configured
models that can run the action. The answer is JSON text that the agent parses like any planner's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from homiebot.planners.base import EpisodeContext, ModelInfo, Planner, PlannerConfigError, PlannerReply, PlannerRequest
from homiebot.planners.minilm_heads import Embeddings, Round, build_heads, candidate_vector, context_vector


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
        self._torch = torch

    def reset(self, context: EpisodeContext) -> None:
        """Forget the names of the last episode; note the configured models."""
        self.models = list(context.models)
        self.known = set()

    def _candidates(self, request: PlannerRequest, r: Round) -> list[str]:
        if request.observation is not None:
            self.known |= {label.name for label in request.observation.labels.values()}
        if request.scene_map:
            self.known |= {str(room["name"]) for room in request.scene_map.get("rooms", []) if isinstance(room, dict)}
            self.known |= {str(i["id"]) for i in request.scene_map.get("instances", []) if isinstance(i, dict) and not i.get("stale")}
        for parts, _, _ in r.steps():
            self.known |= {p for p in parts[1:] if p}
        self.known |= set(request.inventory)
        return sorted(self.known)

    def plan(self, request: PlannerRequest) -> PlannerReply:
        """Decode one subtask: action, then target (and place), then model, each the heads' best valid choice."""
        torch = self._torch
        feedback = "None" if request.feedback is None or request.feedback.success else request.feedback.message
        r = Round(request.instruction, tuple(request.inventory), tuple(request.history), feedback)
        cands = self._candidates(request, r)
        offered = {a for info in self.models for a in info.actions} | {"End"} if self.models else set(self.actions)
        valid = [i for i, a in enumerate(self.actions) if a in offered or a == "End"]
        if not cands:  # nothing known yet: only End is decodable without a name
            valid = [i for i in valid if self.actions[i] == "End"] or valid
        with torch.no_grad():
            h = self.heads.encode(torch.tensor(context_vector(r, self.emb))[None])[0]
            logits = self.heads.actions(h[None])[0]
            a = max(valid, key=lambda i: float(logits[i]))
            action = self.actions[a]
            onehot = torch.eye(len(self.actions))[a]
            if action == "End":
                return PlannerReply(json.dumps({"analysis": "the heads choose End", "subtask": ["End"], "model": None}))
            c = torch.tensor(np.stack([candidate_vector(r, n, self.emb) for n in cands]))
            parts = [action, cands[int(self.heads.score("target", h, onehot, c).argmax())]]
            if action == "Put":
                parts.append(cands[int(self.heads.score("place", h, onehot, c).argmax())])
            able = [m.name for m in self.models if action in m.actions] or [m.name for m in self.models]
            model = None
            if able:
                scores = self.heads.models(h[None], onehot[None])[0] if self.models_vocab else None
                model = max(able, key=lambda m: float(scores[self.models_vocab.index(m)])
                            if scores is not None and m in self.models_vocab else float("-inf"))
        analysis = f"action head: {action} ({float(torch.softmax(logits, 0)[a]):.2f}); {len(cands)} candidates"
        return PlannerReply(json.dumps({"analysis": analysis, "subtask": parts, "model": model}))
