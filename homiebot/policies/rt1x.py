"""RT-1-X (google-deepmind/open_x_embodiment) behind the ``Policy`` contract: image + instruction in,
one end-effector delta (with a terminate flag) out.

Two upstream runtimes are supported:

* ``backend="tf"`` (the repository's inference colab): ``py_tf_eager_policy.SavedModelPyTFEagerPolicy(
  model_path, load_specs_from_pbtxt=True, use_tf_function=True)``; the observation starts from
  ``zero_spec_nest(from_spec(policy.time_step_spec.observation))``; ``image`` is the frame passed through
  ``tf.image.resize_with_pad(target 256x320)`` and cast to uint8; ``natural_language_embedding`` is the
  512-d Universal Sentence Encoder (large) embedding of the instruction;
  ``policy.action(ts.transition(observation, reward=0), policy_state)`` returns the action and the next
  state; the history lives in that state (``get_initial_state(batch_size=1)`` on reset).
* ``backend="jax"`` (``models/rt1_inference_example.py``): ``rt1.RT1(num_image_tokens=81,
  num_action_tokens=11, layer_size=256, vocab_size=512, use_token_learner=True,
  world_vector_range=(-2.0, 2.0))`` restored with ``flax.training.checkpoints.restore_checkpoint``; 15
  frames resized to 300x300 in [0, 1] with their embeddings; the logits of the last frame's action slots
  are argmax-ed and detokenised (256 bins of RT-1 become ``vocab_size`` bins here).

Action (``rt1.tokenize_action``): ``terminate_episode`` one-hot (0 terminate, 1 arm + gripper,
2 base), ``world_vector`` (3) in [-2, 2] (RT-1-X), ``rotation_delta`` (3) in [-pi/2, pi/2],
``gripper_closedness_action`` (1) in [-1, 1] with +1 closing and -1 opening,
``base_displacement_vertical_rotation`` (1) and ``base_displacement_vector`` (2).

Units: the colab maps Bridge's metric actions into model space with ``rescale_action_with_bound``:
world_vector [-0.05, 0.05] m -> [-1.75, 1.75], rotation_delta [-0.25, 0.25] rad -> [-1.4, 1.4]. The
``bridge`` profile inverts that (0.05/1.75 m and 0.25/1.4 rad per model unit, absolute gripper); the
``fractal`` profile (Google robot, RT-1's own data) takes model units as metres and radians and treats the
gripper as relative open/close commands. Frames: both robots' base frames are x forward, y left, z up,
homiebot's; ``frame_rotation`` and the scales adapt others.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from homiebot.policies._loading import (
    as_rgb_uint8,
    as_rotation,
    as_vector,
    availability_message,
    expand,
    missing_modules,
    resize_bilinear,
    resize_with_pad,
)
from homiebot.policies.base import Command, EndEffectorDelta, Policy, PolicyObservation
from homiebot.policies.training_cameras import training_camera, with_input_size

TF_INSTALL_HINT = "pip install tensorflow==2.15.0 tf-agents==0.19.0 tensorflow-hub"
JAX_INSTALL_HINT = ("pip install jax flax tensorflow; git clone https://github.com/google-deepmind/open_x_embodiment.git "
                    "and set params.code_path to its models/ directory (rt1.py)")
TF_CHECKPOINT_HINT = ("the RT-1-X SavedModel directory rt_1_x_tf_trained_for_002272480_step (unzipped), from "
                      "gs://gdm-robotics-open-x-embodiment/open_x_embodiment_and_rt_x_oss/ per the open_x_embodiment README; "
                      "set params.checkpoint")
JAX_CHECKPOINT_HINT = ("the RT-1-X JAX checkpoint: gsutil -m cp -r "
                       "gs://gdm-robotics-open-x-embodiment/open_x_embodiment_and_rt_x_oss/rt_1_x_jax . ; set params.checkpoint")
EMBEDDER_HINT = ("a local copy of the Universal Sentence Encoder large v5 SavedModel "
                 "(tfhub.dev/google/universal-sentence-encoder-large/5); set params.embedder")

# world_vector metres per model unit, rotation radians per unit, gripper mode
PROFILES: dict[str, dict[str, Any]] = {
    "bridge": {"translation_scale": 0.05 / 1.75, "rotation_scale": 0.25 / 1.4, "gripper_mode": "absolute", "rate_hz": 5.0,
               "camera": "rt1x"},
    "fractal": {"translation_scale": 1.0, "rotation_scale": 1.0, "gripper_mode": "relative", "rate_hz": 3.0,
                "camera": "rt1x_fractal"},
}
JAX_MODEL_KWARGS = {"num_image_tokens": 81, "num_action_tokens": 11, "layer_size": 256, "vocab_size": 512,
                    "use_token_learner": True, "world_vector_range": (-2.0, 2.0)}
ACTION_BOUNDS = [("world_vector", None), ("rotation_delta", (-np.pi / 2, np.pi / 2)),
                 ("gripper_closedness_action", (-1.0, 1.0)), ("base_displacement_vertical_rotation", (-np.pi, np.pi)),
                 ("base_displacement_vector", (-1.0, 1.0))]


# --------------------------------------------------------------------------------------------------
# pure pre/post-processing
# --------------------------------------------------------------------------------------------------

def prepare_tf_image(rgb: np.ndarray, height: int = 256, width: int = 320) -> np.ndarray:
    """The colab's ``resize``: ``tf.image.resize_with_pad`` to (256, 320) then ``tf.cast`` to uint8."""
    return resize_with_pad(as_rgb_uint8(rgb), height, width)


def prepare_jax_image(rgb: np.ndarray, size: int = 300) -> np.ndarray:
    """``rt1_inference_example``: ``tf.image.resize(image, (300, 300))`` (bilinear) then / 255 -> float32."""
    return (resize_bilinear(as_rgb_uint8(rgb), (size, size)) / 255.0).astype(np.float32)


def one_hot(indices: np.ndarray, depth: int) -> np.ndarray:
    """``jax.nn.one_hot`` as int32: an index outside [0, depth) (an invalid token) gives all zeros."""
    idx = np.asarray(indices).reshape(-1, 1)
    return (idx == np.arange(depth)[None, :]).astype(np.int32)


def detokenize_action(tokens: np.ndarray, vocab_size: int = 512, world_vector_range: tuple[float, float] = (-2.0, 2.0)) -> dict:
    """``rt1.detokenize_action`` in numpy: (B, 11) tokens -> action dict (batched)."""
    tokens = np.asarray(tokens)
    out: dict[str, np.ndarray] = {"terminate_episode": one_hot(tokens[:, 0], 3)}
    slices = {"world_vector": slice(1, 4), "rotation_delta": slice(4, 7), "gripper_closedness_action": slice(7, 8),
              "base_displacement_vertical_rotation": slice(8, 9), "base_displacement_vector": slice(9, 11)}
    for name, bounds in ACTION_BOUNDS:
        lo, hi = world_vector_range if bounds is None else bounds
        out[name] = tokens[:, slices[name]].astype(np.float32) / (vocab_size - 1) * (hi - lo) + lo
    return out


def decode_action(action: dict, frame_rotation: np.ndarray, translation_scale: np.ndarray,
                  rotation_scale: np.ndarray, gripper_mode: str = "absolute", previous_closedness: float = 0.0,
                  relative_threshold: float = 0.5) -> EndEffectorDelta:
    """An RT-1-X action dict (unbatched) -> ``EndEffectorDelta`` in the robot base frame.

    Gripper: ``absolute`` maps [-1 open, +1 closed] to closedness [0, 1]; ``relative`` closes above
    ``relative_threshold``, opens below ``-relative_threshold`` and otherwise keeps
    ``previous_closedness``. Terminate: ``terminate_episode`` argmax is 0."""
    wv = np.asarray(action["world_vector"], dtype=np.float64).reshape(3)
    rd = np.asarray(action["rotation_delta"], dtype=np.float64).reshape(3)
    g = float(np.asarray(action["gripper_closedness_action"], dtype=np.float64).reshape(-1)[0])
    if gripper_mode == "absolute":
        closedness = float(np.clip((g + 1.0) / 2.0, 0.0, 1.0))
    elif gripper_mode == "relative":
        closedness = 1.0 if g > relative_threshold else 0.0 if g < -relative_threshold else float(previous_closedness)
    else:
        raise ValueError("gripper_mode must be 'absolute' or 'relative'")
    term = np.asarray(action["terminate_episode"]).reshape(-1)
    terminate = bool(term.sum() > 0 and int(np.argmax(term)) == 0)
    return EndEffectorDelta(translation=frame_rotation @ (wv * translation_scale),
                            rotation=frame_rotation @ (rd * rotation_scale), gripper=closedness, terminate=terminate)


class FrameHistory:
    """The JAX runtime's fixed-length sequence of (image, embedding); the first frame of a subtask fills
    it (the JAX example expects exactly ``seqlen`` frames)."""

    def __init__(self, seqlen: int = 15) -> None:
        self.seqlen = int(seqlen)
        self.images: deque[np.ndarray] = deque(maxlen=self.seqlen)
        self.embeddings: deque[np.ndarray] = deque(maxlen=self.seqlen)

    def reset(self) -> None:
        self.images.clear()
        self.embeddings.clear()

    def push(self, image: np.ndarray, embedding: np.ndarray) -> dict[str, np.ndarray]:
        n = self.seqlen if not self.images else 1
        for _ in range(n):
            self.images.append(image)
            self.embeddings.append(embedding)
        return {"image": np.stack(self.images), "natural_language_embedding": np.stack(self.embeddings)}


# --------------------------------------------------------------------------------------------------
# runtimes
# --------------------------------------------------------------------------------------------------

class TFSavedModelRuntime:
    """The colab's tf_agents SavedModel policy; ``step(image, embedding)`` -> action dict of numpy."""

    def __init__(self, path: str | Path, policy: Any = None) -> None:
        if policy is None:
            from tf_agents.policies import py_tf_eager_policy

            policy = py_tf_eager_policy.SavedModelPyTFEagerPolicy(model_path=str(path), load_specs_from_pbtxt=True,
                                                                  use_tf_function=True)
        self.policy = policy
        self.state = None

    def _zero_observation(self) -> dict:
        import tf_agents

        return tf_agents.specs.zero_spec_nest(tf_agents.specs.from_spec(self.policy.time_step_spec.observation))

    def _transition(self, observation: dict):
        from tf_agents.trajectories import time_step as ts

        return ts.transition(observation, reward=np.zeros((), dtype=np.float32))

    def reset(self) -> None:
        self.state = self.policy.get_initial_state(batch_size=1)

    def step(self, image: np.ndarray, embedding: np.ndarray) -> dict:
        if self.state is None:
            self.reset()
        observation = self._zero_observation()
        observation["image"] = image
        observation["natural_language_embedding"] = embedding
        policy_step = self.policy.action(self._transition(observation), self.state)
        self.state = policy_step.state
        return {k: np.asarray(v) for k, v in policy_step.action.items()}


class JaxRuntime:
    """``rt1_inference_example.RT1Policy``'s inference: logits of the last frame's action slots ->
    argmax tokens -> detokenised action. ``apply_fn(observation_batch, rng) -> logits`` may be injected."""

    def __init__(self, path: str | Path | None, code_path: str | Path | None = None, seqlen: int = 15,
                 model_kwargs: dict | None = None, seed: int = 0, apply_fn: Callable | None = None) -> None:
        self.kwargs = dict(JAX_MODEL_KWARGS, **(model_kwargs or {}))
        self.history = FrameHistory(seqlen)
        self.seqlen = int(seqlen)
        self.seed = seed
        self._rng = None
        if apply_fn is None:
            apply_fn = self._build(path, code_path)
        self.apply_fn = apply_fn

    def _build(self, path, code_path) -> Callable:
        import jax
        import jax.numpy as jnp
        from flax.training import checkpoints

        if code_path and str(code_path) not in sys.path:
            sys.path.insert(0, str(code_path))
        import rt1  # open_x_embodiment/models/rt1.py

        kwargs = dict(self.kwargs)
        kwargs["world_vector_range"] = tuple(kwargs["world_vector_range"])
        model = rt1.RT1(**kwargs)
        state = checkpoints.restore_checkpoint(str(path), None)
        variables = {"params": state["params"], "batch_stats": state["batch_stats"]}

        @jax.jit
        def apply(observation, rng):
            batch = jax.tree_util.tree_map(lambda x: jnp.expand_dims(x, 0), observation)
            _, rng = jax.random.split(rng)
            return model.apply(variables, batch, act=None, act_tokens=jnp.zeros((1, 6, 11)), train=False,
                               rngs={"random": rng})

        return apply

    def _next_rng(self):
        try:
            import jax
        except ImportError:
            return None
        if self._rng is None:
            self._rng = jax.random.PRNGKey(self.seed)
        self._rng, key = jax.random.split(self._rng)
        return key

    def reset(self) -> None:
        self.history.reset()

    def step(self, image: np.ndarray, embedding: np.ndarray) -> dict:
        observation = self.history.push(image, np.asarray(embedding, np.float32).reshape(-1))
        logits = np.asarray(self.apply_fn(observation, self._next_rng()))
        n_img, n_act = self.kwargs["num_image_tokens"], self.kwargs["num_action_tokens"]
        logits = logits.reshape(1, self.seqlen, n_img + n_act, -1)[:, -1]
        tokens = np.argmax(logits[:, n_img - 1:-1], axis=-1)
        action = {k: v[0] for k, v in detokenize_action(tokens, self.kwargs["vocab_size"],
                                                        tuple(self.kwargs["world_vector_range"])).items()}
        if action["terminate_episode"].sum() == 0:  # upstream: fall back to the base mode
            action["terminate_episode"] = np.array([0, 0, 1], np.int32)
        return action


def load_sentence_encoder(path: str | Path) -> Callable[[list[str]], np.ndarray]:
    """The Universal Sentence Encoder from a local SavedModel directory (tensorflow_hub when installed)."""
    try:
        import tensorflow_hub as hub

        model = hub.load(str(path))
    except ImportError:
        import tensorflow as tf

        model = tf.saved_model.load(str(path))
    return lambda texts: np.asarray(model(texts))


# --------------------------------------------------------------------------------------------------
# the policy
# --------------------------------------------------------------------------------------------------

class RT1XPolicy(Policy):
    """RT-1-X language-conditioned manipulation -> one ``EndEffectorDelta`` per step (with terminate)."""

    family = "rt1x"
    kind = "manipulation"
    image_size = (256, 320)
    rate_hz = 5.0  # the Bridge profile's (fractal: 3 Hz)

    def __init__(self, checkpoint: str | None = None, backend: str = "tf", embedder: str | Callable | None = None,
                 code_path: str | None = None, profile: str = "bridge", translation_scale=None, rotation_scale=None,
                 gripper_mode: str | None = None, frame_rotation=None, image_height: int = 256, image_width: int = 320,
                 jax_image_size: int = 300, seqlen: int = 15, seed: int = 0, runtime: Any = None,
                 camera: str | dict | None = None, rate_hz: float | None = None) -> None:
        """
        Args:
            checkpoint: SavedModel directory (tf) or flax checkpoint (jax).
            backend: "tf" (the colab's tf_agents policy) or "jax" (rt1_inference_example).
            embedder: path of a local Universal Sentence Encoder SavedModel, or a callable texts -> (N, 512).
            code_path: for "jax", the open_x_embodiment ``models/`` directory holding rt1.py.
            profile: "bridge" or "fractal" unit/gripper conventions (see the module doc); the explicit
                ``translation_scale`` / ``rotation_scale`` (number or 3 numbers) and ``gripper_mode``
                ("absolute" / "relative") override it.
            frame_rotation: 3x3 from the model's base frame to homiebot's (identity).
            image_height, image_width: tf input (256x320); jax_image_size: jax input (300); seqlen: jax history (15).
            runtime: an object with ``reset()`` and ``step(image, embedding) -> action dict`` (injected).
            camera: the training camera (default the profile's: Bridge 4:3 frames letterboxed, fractal 256x320).
            rate_hz: control rate (default the profile's: Bridge 5 Hz, fractal 3 Hz).
        """
        if backend not in ("tf", "jax"):
            raise ValueError("backend must be 'tf' or 'jax'")
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {sorted(PROFILES)}")
        self.checkpoint = expand(checkpoint)
        self.backend = backend
        self.embedder_path = None if callable(embedder) else expand(embedder)
        self._embed: Callable[[list[str]], Any] | None = embedder if callable(embedder) else None
        self.code_path = expand(code_path)
        prof = PROFILES[profile]
        self.translation_scale = as_vector(prof["translation_scale"] if translation_scale is None else translation_scale, 3, "translation_scale")
        self.rotation_scale = as_vector(prof["rotation_scale"] if rotation_scale is None else rotation_scale, 3, "rotation_scale")
        self.gripper_mode = gripper_mode or prof["gripper_mode"]
        self.frame_rotation = as_rotation(frame_rotation)
        self.tf_size = (int(image_height), int(image_width))
        self.jax_image_size = int(jax_image_size)
        self.image_size = self.tf_size if backend == "tf" else (self.jax_image_size, self.jax_image_size)
        spec = training_camera(camera if camera is not None else prof["camera"])
        if spec is not None and backend == "jax":  # rt1_inference_example squashes to a square
            spec = replace(spec, resize="squash")
        self.camera = with_input_size(spec, self.image_size)
        self.rate_hz = float(rate_hz if rate_hz is not None else prof["rate_hz"])
        self.seqlen = int(seqlen)
        self.seed = seed
        self._runtime = runtime
        self.instruction = ""
        self._embedding: np.ndarray | None = None
        self.closedness = 0.0
        self.last_info: dict = {}

    def availability(self) -> str | None:
        missing: dict[str, str] = {}
        paths: dict = {}
        if self._runtime is None:
            if self.backend == "tf":
                missing.update({m: TF_INSTALL_HINT for m in missing_modules(["tensorflow", "tf_agents"])})
                paths["checkpoint"] = (self.checkpoint, TF_CHECKPOINT_HINT)
            else:
                missing.update({m: JAX_INSTALL_HINT for m in missing_modules(["jax", "flax"])})
                paths["checkpoint"] = (self.checkpoint, JAX_CHECKPOINT_HINT)
                paths["RT-1 code (rt1.py)"] = (None if self.code_path is None else self.code_path / "rt1.py", JAX_INSTALL_HINT)
        if self._embed is None:
            missing.update({m: TF_INSTALL_HINT for m in missing_modules(["tensorflow"]) if m not in missing})
            paths["sentence encoder"] = (self.embedder_path, EMBEDDER_HINT)
        return availability_message("RT-1-X", missing, paths)

    def _ensure_runtime(self):
        if self._runtime is None or self._embed is None:
            problem = self.availability()
            if problem:
                raise RuntimeError(problem)
        if self._embed is None:
            self._embed = load_sentence_encoder(self.embedder_path)
        if self._runtime is None:
            if self.backend == "tf":
                self._runtime = TFSavedModelRuntime(self.checkpoint)
            else:
                self._runtime = JaxRuntime(self.checkpoint, self.code_path, self.seqlen, seed=self.seed)
            self._runtime.reset()
        return self._runtime

    def reset(self, instruction: str = "", goal_image: np.ndarray | None = None) -> None:
        self.instruction = instruction
        self._embedding = None
        self.closedness = 0.0
        self.last_info = {}
        if self._runtime is not None:
            self._runtime.reset()

    def embedding(self) -> np.ndarray:
        """The instruction's 512-d embedding (computed once per subtask)."""
        if self._embedding is None:
            assert self._embed is not None, "the sentence encoder is loaded with the runtime (act calls _ensure_runtime first)"
            self._embedding = np.asarray(self._embed([self.instruction]), dtype=np.float32)[0]
        return self._embedding

    def act(self, obs: PolicyObservation) -> list[Command]:
        runtime = self._ensure_runtime()
        if obs.instruction and obs.instruction != self.instruction:
            self.instruction, self._embedding = obs.instruction, None
        if self.backend == "tf":
            image = prepare_tf_image(obs.rgb, *self.tf_size)
        else:
            image = prepare_jax_image(obs.rgb, self.jax_image_size)
        action = runtime.step(image, self.embedding())
        cmd = decode_action(action, self.frame_rotation, self.translation_scale, self.rotation_scale,
                            self.gripper_mode, self.closedness)
        self.closedness = cmd.gripper
        self.last_info = {"raw_action": action}
        return [cmd]

    def close(self) -> None:
        self._runtime = None
