"""Octo (octo-models/octo, JAX) behind the ``Policy`` contract: images + language in, end-effector
deltas out.

Upstream contract (``octo/model/octo_model.py``, ``octo/utils/gym_wrappers.py``,
``examples/04_eval_finetuned_on_robot.py``, ``octo/data/oxe/*``, ``octo/data/utils/data_utils.py``):

* ``OctoModel.load_pretrained(path, step=None)`` reads ``config.json``, ``example_batch.msgpack``,
  ``dataset_statistics.json`` and an orbax checkpoint from the directory;
* ``create_tasks(texts=[...])`` (or ``goals={"image_primary": ...}``);
* observations: ``image_primary`` (B, window, 256, 256, 3) uint8, optional ``image_wrist`` (128x128),
  ``timestep_pad_mask`` (B, window) bool. ``HistoryWrapper``: window 2; on reset the first frame fills
  the window and only the last slot is unpadded (mask [False, True]), then frames shift in;
* images: ``ResizeImageWrapper`` resizes with lanczos3 (antialiased) and, for ``image_primary``, applies
  the average of the training crop augmentation (a centre crop of area 0.9) resized back bilinearly;
* ``sample_actions(observations, tasks, unnormalization_statistics=stats, rng=...)`` ->
  (B, action_horizon=4, action_dim=7); NORMAL statistics: ``where(mask, a * std + mean, a)`` (the gripper
  dimension is not normalised: mask [True]*6 + [False]); BOUNDS: ``(a + 1) (p99 - p01) / 2 + p01``;
* action (EEF_POS encoding): xyz delta, roll-pitch-yaw delta, gripper absolute with 1 = open, 0 = closed;
* execution: ``TemporalEnsembleWrapper`` (default, exp_weight 0: the mean of the predictions for the
  current step across the last ``action_horizon`` chunks) or ``RHCWrapper`` (execute ``exec_horizon``
  actions of each chunk); WidowX binarises the gripper at 0.5.

Frame: Octo's deltas are in the training robot's base frame (for Bridge/WidowX: x forward, y left,
z up, metres, radians), which is homiebot's base frame; ``frame_rotation`` and the scale vectors adapt
another embodiment. homiebot's gripper value is closedness, so ``closedness = 1 - octo_gripper``.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from homiebot.policies._loading import (
    as_rgb_uint8,
    as_rotation,
    as_vector,
    availability_message,
    crop_and_resize,
    expand,
    missing_modules,
    resize_pil,
)
from homiebot.policies.base import Command, EndEffectorDelta, Policy, PolicyObservation
from homiebot.policies.training_cameras import training_camera, with_input_size

INSTALL_HINT = ("git clone https://github.com/octo-models/octo.git && cd octo && pip install -e . && "
                "pip install -r requirements.txt && pip install --upgrade \"jax[cuda11_pip]==0.4.20\" "
                "-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html "
                "(CPU: pip install jax==0.4.20); note that the PyPI package named 'octo' is unrelated")
CHECKPOINT_HINT = ("a directory with config.json, example_batch.msgpack, dataset_statistics.json and orbax step "
                   "folders, e.g. a local copy of rail-berkeley/octo-small-1.5 or octo-base-1.5 from Hugging Face; "
                   "set params.checkpoint")


# --------------------------------------------------------------------------------------------------
# pure pre/post-processing
# --------------------------------------------------------------------------------------------------

def octo_resize(image: np.ndarray, size: int, average_crop: bool = True, avg_scale: float = 0.9,
                avg_ratio: float = 1.0) -> np.ndarray:
    """``ResizeImageWrapper.observation`` for one image: Lanczos resize to ``size`` square (PIL's
    antialiased Lanczos-3 in place of ``tf.image.resize(method="lanczos3", antialias=True)``), then with
    ``average_crop`` the centre crop of relative area ``avg_scale`` resized back bilinearly
    (``tf.image.crop_and_resize``), rounded and clipped to uint8."""
    img = resize_pil(as_rgb_uint8(image), (size, size), "lanczos").astype(np.float64)
    if average_crop:
        nh = float(np.clip(np.sqrt(avg_scale / avg_ratio), 0, 1))
        nw = float(np.clip(np.sqrt(avg_scale * avg_ratio), 0, 1))
        oh, ow = (1 - nh) / 2, (1 - nw) / 2
        img = crop_and_resize(img, (oh, ow, oh + nh, ow + nw), (size, size))
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


class ObservationWindow:
    """Octo's ``HistoryWrapper``: the last ``window`` observations and the timestep pad mask. On the first
    observation after ``reset`` the window is filled with it and only the newest slot counts as real."""

    def __init__(self, window: int = 2) -> None:
        self.window = int(window)
        self.history: deque[dict] = deque(maxlen=self.window)
        self.num_obs = 0

    def reset(self) -> None:
        self.history.clear()
        self.num_obs = 0

    def push(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if self.num_obs == 0:
            self.history.extend([obs] * self.window)
        else:
            self.history.append(obs)
        self.num_obs += 1
        return self.stacked()

    def stacked(self) -> dict[str, np.ndarray]:
        """Arrays of shape (window, ...) plus ``timestep_pad_mask`` (window,) bool (``stack_and_pad``)."""
        full = {k: np.stack([d[k] for d in self.history]) for k in self.history[0]}
        pad = self.window - min(self.num_obs, self.window)
        mask = np.ones(self.window, dtype=bool)
        mask[:pad] = False
        full["timestep_pad_mask"] = mask
        return full


def unnormalize_actions(actions: np.ndarray, stats: dict, normalization_type: str = "normal") -> np.ndarray:
    """``OctoModel.sample_actions``' unnormalisation in numpy (for checks and pre-unnormalised stats)."""
    a = np.asarray(actions, dtype=np.float64)
    if normalization_type == "normal":
        mean, std = np.asarray(stats["mean"], float), np.asarray(stats["std"], float)
        mask = np.asarray(stats.get("mask", np.ones_like(mean, dtype=bool)), dtype=bool)
        a = a[..., : len(mask)]
        return np.where(mask, a * std + mean, a)
    if normalization_type == "bounds":
        lo, hi = np.asarray(stats["p01"], float), np.asarray(stats["p99"], float)
        mask = np.asarray(stats.get("mask", np.ones_like(lo, dtype=bool)), dtype=bool)
        a = a[..., : len(mask)]
        return np.where(mask, (a + 1) * (hi - lo) / 2 + lo, a)
    raise ValueError(f"unknown normalization type {normalization_type!r}")


def temporal_ensemble(chunks: deque, exp_weight: float = 0.0) -> np.ndarray:
    """``TemporalEnsembleWrapper``: the action for the current step from every stored chunk (the newest
    chunk's first action, the previous chunk's second, ...), averaged with weights exp(-w * age_rank)."""
    n = len(chunks)
    preds = np.stack([chunk[i] for i, chunk in zip(range(n - 1, -1, -1), chunks)])
    weights = np.exp(-exp_weight * np.arange(n))
    weights = weights / weights.sum()
    return np.sum(weights[:, None] * preds, axis=0)


def action_to_command(action: np.ndarray, frame_rotation: np.ndarray, translation_scale: np.ndarray,
                      rotation_scale: np.ndarray, binarize_gripper: float | None = 0.5) -> EndEffectorDelta:
    """One 7-d Octo action (xyz, roll-pitch-yaw, gripper 1 = open) -> ``EndEffectorDelta`` in the robot
    base frame with gripper closedness (1 = closed). ``binarize_gripper``: threshold of the open value
    (WidowX: closed below 0.5); None keeps it continuous."""
    action = np.asarray(action, dtype=np.float64)
    translation = frame_rotation @ (action[:3] * translation_scale)
    rotation = frame_rotation @ (action[3:6] * rotation_scale)
    open_value = float(action[6]) if action.shape[0] > 6 else 1.0
    if binarize_gripper is not None:
        closedness = 1.0 if open_value < binarize_gripper else 0.0
    else:
        closedness = float(np.clip(1.0 - open_value, 0.0, 1.0))
    return EndEffectorDelta(translation=translation, rotation=rotation, gripper=closedness)


def load_statistics(path: str | Path, dataset: str | None = None) -> dict:
    """Action statistics from a ``dataset_statistics.json`` (keyed by dataset name, each with an
    "action" entry) or a file holding one {"mean", "std", "mask", ...} dict."""
    with open(Path(path).expanduser()) as f:
        data = json.load(f)
    return select_statistics(data, dataset)


def select_statistics(data: dict, dataset: str | None) -> dict:
    """The action statistics of ``dataset`` from checkpoint statistics (any of the layouts Octo writes)."""
    if "mean" in data or "p01" in data:
        return {k: np.asarray(v) for k, v in data.items()}
    if "action" in data:
        return select_statistics(data["action"], None)
    if dataset is None:
        if len(data) != 1:
            raise ValueError(f"dataset statistics hold several datasets {sorted(data)}; set params.dataset")
        dataset = next(iter(data))
    if dataset not in data:
        raise KeyError(f"no statistics for dataset {dataset!r}; available: {sorted(data)}")
    return select_statistics(data[dataset], None)


# --------------------------------------------------------------------------------------------------
# the policy
# --------------------------------------------------------------------------------------------------

class OctoPolicy(Policy):
    """Octo language- (or goal-image-) conditioned manipulation -> ``EndEffectorDelta`` commands.

    ``execution="ensemble"`` (upstream's robot evaluation) returns one command per step, the temporal
    ensemble of the chunks; ``execution="rhc"`` returns the first ``exec_horizon`` actions of each chunk.
    A wrist image, when the model uses one, comes from ``obs.extras["wrist_rgb"]``."""

    family = "octo"
    kind = "manipulation"
    image_size = (256, 256)
    rate_hz = 5.0  # Bridge: 0.2 s steps

    def __init__(self, checkpoint: str | None = None, step: int | None = None, dataset: str | None = "bridge_dataset",
                 statistics: str | None = None, normalization_type: str = "normal", window_size: int = 2,
                 action_horizon: int = 4, execution: str = "ensemble", exec_horizon: int | None = None,
                 exp_weight: float = 0.0, primary_size: int = 256, wrist_size: int = 128, use_wrist: bool | None = None,
                 average_crop: bool = True, binarize_gripper: float | None = 0.5, frame_rotation=None,
                 translation_scale=1.0, rotation_scale=1.0, seed: int = 0, argmax: bool = False,
                 temperature: float = 1.0, model: Any = None, camera: str | dict | None = "octo") -> None:
        """
        Args:
            checkpoint: local Octo checkpoint directory (``OctoModel.load_pretrained``); ``step`` picks a step.
            dataset: key of the checkpoint's ``dataset_statistics`` used to unnormalise (upstream example:
                "bridge_dataset"); ``statistics`` overrides with a JSON file.
            normalization_type: "normal" (mean/std, Octo's default) or "bounds" (p01/p99).
            window_size: observation history (2); action_horizon: chunk length (4).
            execution: "ensemble" (TemporalEnsembleWrapper, ``exp_weight``) or "rhc" (``exec_horizon``).
            primary_size, wrist_size: image sizes (256, 128); use_wrist: None = when the model has image_wrist.
            average_crop: apply the average training crop to the primary image as upstream.
            binarize_gripper: open-value threshold (0.5) or None for a continuous closedness.
            frame_rotation: 3x3 from the model's base frame to homiebot's (identity);
            translation_scale, rotation_scale: per-axis factors (number or 3 numbers).
            seed, argmax, temperature: sampling (``jax.random.PRNGKey(seed)``, split each call).
            model: an object with OctoModel's ``create_tasks`` / ``sample_actions`` (injected instead of loading).
            camera: the training camera of the primary image (default Bridge's 4:3 frames at hfov 70; a
                family name or ``TrainingCamera`` fields; see ``skills.training_cameras``).
        """
        self.checkpoint = expand(checkpoint)
        self.step = step
        self.dataset = dataset
        self.statistics_path = expand(statistics)
        self.normalization_type = normalization_type
        self.window = ObservationWindow(window_size)
        self.action_horizon = int(action_horizon)
        if execution not in ("ensemble", "rhc"):
            raise ValueError("execution must be 'ensemble' or 'rhc'")
        self.execution = execution
        self.exec_horizon = int(exec_horizon or action_horizon)
        self.exp_weight = float(exp_weight)
        self.primary_size = int(primary_size)
        self.image_size = (self.primary_size, self.primary_size)
        self.camera = with_input_size(training_camera(camera), self.image_size)
        self.wrist_size = int(wrist_size)
        self.use_wrist = use_wrist
        self.average_crop = average_crop
        self.binarize_gripper = binarize_gripper
        self.frame_rotation = as_rotation(frame_rotation)
        self.translation_scale = as_vector(translation_scale, 3, "translation_scale")
        self.rotation_scale = as_vector(rotation_scale, 3, "rotation_scale")
        self.seed = int(seed)
        self.argmax = argmax
        self.temperature = float(temperature)
        self._model = model
        self._stats: dict | None = None
        self._rng = None
        self.task = None
        self.instruction = ""
        self.goal_image: np.ndarray | None = None
        self.chunks: deque = deque(maxlen=self.action_horizon)
        self.last_info: dict = {}

    # loading ------------------------------------------------------------------------------------
    def availability(self) -> str | None:
        if self._model is not None:
            return None
        missing = {m: INSTALL_HINT for m in missing_modules(["octo", "jax", "flax", "tensorflow"])}
        paths: dict = {"checkpoint": (self.checkpoint, CHECKPOINT_HINT)}
        if self.checkpoint is not None and self.checkpoint.exists():
            paths["checkpoint config.json"] = (self.checkpoint / "config.json", CHECKPOINT_HINT)
        if self.statistics_path is not None:
            paths["statistics"] = (self.statistics_path, "a dataset_statistics.json")
        return availability_message("Octo", missing, paths)

    def _ensure_model(self):
        if self._model is None:
            problem = self.availability()
            if problem:
                raise RuntimeError(problem)
            from octo.model.octo_model import OctoModel

            self._model = OctoModel.load_pretrained(str(self.checkpoint), self.step)
        return self._model

    def statistics(self) -> dict | None:
        """The action unnormalisation statistics (from ``statistics`` or the checkpoint)."""
        if self._stats is None:
            if self.statistics_path is not None:
                self._stats = load_statistics(self.statistics_path, self.dataset)
            else:
                data = getattr(self._ensure_model(), "dataset_statistics", None)
                self._stats = None if data is None else select_statistics(data, self.dataset)
        return self._stats

    def _model_has_wrist(self, model) -> bool:
        if self.use_wrist is not None:
            return bool(self.use_wrist)
        batch = getattr(model, "example_batch", None)
        if not batch:
            return False
        return "image_wrist" in batch.get("observation", {})

    def _next_rng(self):
        try:
            import jax
        except ImportError:  # stand-in models without JAX
            return None
        if self._rng is None:
            self._rng = jax.random.PRNGKey(self.seed)
        self._rng, key = jax.random.split(self._rng)
        return key

    # Policy -------------------------------------------------------------------------------------
    def reset(self, instruction: str = "", goal_image: np.ndarray | None = None) -> None:
        self.window.reset()
        self.chunks.clear()
        self.instruction = instruction
        self.goal_image = None if goal_image is None else np.asarray(goal_image)
        self.task = None
        self.last_info = {}

    def _make_task(self, model):
        if self.instruction or self.goal_image is None:
            return model.create_tasks(texts=[self.instruction])
        goal = octo_resize(self.goal_image, self.primary_size, self.average_crop)
        return model.create_tasks(goals={"image_primary": goal[None]})

    def observation_batch(self, obs: PolicyObservation, wrist: bool) -> dict:
        """Push the frame into the window; return the batched observation dict Octo expects."""
        frame = {"image_primary": octo_resize(obs.rgb, self.primary_size, self.average_crop)}
        wrist_pad = True
        if wrist:
            wrist_rgb = obs.extras.get("wrist_rgb")
            if wrist_rgb is None:
                frame["image_wrist"] = np.zeros((self.wrist_size, self.wrist_size, 3), np.uint8)
                wrist_pad = False
            else:
                frame["image_wrist"] = octo_resize(wrist_rgb, self.wrist_size, average_crop=False)
        stacked = self.window.push(frame)
        batch: dict[str, Any] = {k: v[None] for k, v in stacked.items()}
        pad_dict = {"image_primary": batch["timestep_pad_mask"].copy()}
        if wrist:
            pad_dict["image_wrist"] = batch["timestep_pad_mask"] & wrist_pad
        batch["pad_mask_dict"] = pad_dict
        return batch

    def act(self, obs: PolicyObservation) -> list[Command]:
        model = self._ensure_model()
        if obs.instruction and obs.instruction != self.instruction:
            self.instruction, self.task = obs.instruction, None
        if self.task is None:
            self.task = self._make_task(model)
        batch = self.observation_batch(obs, self._model_has_wrist(model))
        stats = self.statistics()
        # sample_actions is jitted with normalization_type not static, so only its default (NORMAL) can
        # be used through it; "bounds" statistics are applied here with the same formula.
        in_model = self.normalization_type == "normal"
        actions = model.sample_actions(batch, self.task, unnormalization_statistics=stats if in_model else None,
                                       timestep_pad_mask=batch["timestep_pad_mask"], argmax=self.argmax,
                                       temperature=self.temperature, rng=self._next_rng())
        actions = np.asarray(actions, dtype=np.float64)
        if not in_model and stats is not None:
            actions = unnormalize_actions(actions, stats, self.normalization_type)
        chunk = actions[0][: self.action_horizon]
        self.last_info = {"chunk": chunk}
        if self.execution == "ensemble":
            self.chunks.append(chunk)
            selected = [temporal_ensemble(self.chunks, self.exp_weight)]
        else:
            selected = list(chunk[: self.exec_horizon])
        return [action_to_command(a, self.frame_rotation, self.translation_scale, self.rotation_scale,
                                  self.binarize_gripper) for a in selected]

    def close(self) -> None:
        self._model = None
