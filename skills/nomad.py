"""NoMaD (visualnav-transformer) behind the ``Policy`` contract: images in, metric waypoints out.

Upstream contract (robodhruv/visualnav-transformer, ``deployment/src/{explore,navigate,utils}.py``,
``train/config/nomad.yaml``, ``train/vint_train/data/data_config.yaml``,
``train/vint_train/training/train_utils.py``):

* observation: the last ``context_size + 1`` RGB frames (context_size 3), each resized with PIL to
  ``image_size`` (96x96, listed as [width, height]), scaled to [0, 1], ImageNet-normalised and
  concatenated on channels oldest first -> (1, 3 * (context_size + 1), H, W);
* goal: one image with the same transform, and ``input_goal_mask`` 0 = goal-conditioned, 1 = explore
  (the goal token is masked; upstream feeds random noise as the goal);
* ``model("vision_encoder", obs_img, goal_img, input_goal_mask)`` -> condition, repeated for
  ``num_samples`` (8); DDPM (10 train steps, squaredcos_cap_v2, clip_sample, epsilon) denoises noise of
  shape (num_samples, len_traj_pred=8, 2) with ``model("noise_pred_net", sample, timestep, global_cond)``;
* decoding (``get_action``): map [-1, 1] to the action statistics (min [-2.5, -4], max [5, 4]), cumulative
  sum of the deltas -> 8 (x, y) waypoints in units of the waypoint spacing; deployment scales by
  ``max_v / frame_rate`` (0.2 m/s / 4 Hz = 0.05 m) when ``normalize`` is set and drives to waypoint 2.

Frame: NoMaD's (x, y) is the robot's local frame, x forward and y left, which is homiebot's base frame;
``waypoint_scale`` converts its units to metres.
"""

from __future__ import annotations

import math
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from homiebot.skills._loading import (
    availability_message,
    expand,
    imagenet_normalize,
    missing_modules,
    module_installed,
    resize_pil,
    torch_device,
)
from homiebot.skills.policy import Command, Policy, PolicyObservation, Waypoints

if TYPE_CHECKING:
    import torch

# Defaults of train/config/nomad.yaml, deployment/config/robot.yaml and data_config.yaml.
NOMAD_DEFAULTS: dict[str, Any] = {
    "context_size": 3,
    "image_size": [96, 96],  # [width, height], as upstream lists it
    "len_traj_pred": 8,
    "num_diffusion_iters": 10,
    "encoding_size": 256,
    "normalize": True,
}
ACTION_STATS = {"min": np.array([-2.5, -4.0]), "max": np.array([5.0, 4.0])}
MAX_V = 0.2  # m/s
FRAME_RATE = 4.0  # Hz

INSTALL_HINT = ("git clone https://github.com/robodhruv/visualnav-transformer.git && "
                "pip install -e visualnav-transformer/train/ && "
                "git clone https://github.com/real-stanford/diffusion_policy.git && pip install -e diffusion_policy/ && "
                "pip install efficientnet_pytorch")
CHECKPOINT_HINT = ("nomad.pth from the visualnav-transformer README's 'Pre-Trained Models' Google Drive folder; "
                   "set params.checkpoint")
CONFIG_HINT = "train/config/nomad.yaml of visualnav-transformer; set params.config"


# --------------------------------------------------------------------------------------------------
# pure pre/post-processing
# --------------------------------------------------------------------------------------------------

def transform_image(rgb: np.ndarray, image_size_wh: tuple[int, int]) -> np.ndarray:
    """One frame as upstream ``transform_images`` prepares it: PIL resize to (width, height) with PIL's
    default filter (bicubic), ToTensor, ImageNet Normalize -> (3, H, W) float32."""
    w, h = int(image_size_wh[0]), int(image_size_wh[1])
    return imagenet_normalize(resize_pil(rgb, (h, w), "bicubic"))


def stack_context(frames: list[np.ndarray]) -> np.ndarray:
    """Transformed frames (oldest first) concatenated on channels -> (1, 3 * len(frames), H, W)."""
    return np.concatenate(frames, axis=0)[None].astype(np.float32)


class ContextQueue:
    """The last ``context_size + 1`` transformed frames. Upstream waits until the queue is full before it
    acts; here the first frame of a subtask is repeated to fill it so that the first step can act
    (``pad="repeat"``), or ``ready`` stays False until it is full (``pad="wait"``)."""

    def __init__(self, context_size: int, pad: str = "repeat") -> None:
        if pad not in ("repeat", "wait"):
            raise ValueError("pad must be 'repeat' or 'wait'")
        self.length = int(context_size) + 1
        self.pad = pad
        self.frames: deque[np.ndarray] = deque(maxlen=self.length)

    def reset(self) -> None:
        self.frames.clear()

    def push(self, frame: np.ndarray) -> None:
        if not self.frames and self.pad == "repeat":
            self.frames.extend([frame] * self.length)
        else:
            self.frames.append(frame)

    @property
    def ready(self) -> bool:
        return len(self.frames) == self.length

    def stacked(self) -> np.ndarray:
        return stack_context(list(self.frames))


def unnormalize_data(ndata: np.ndarray, stats: dict) -> np.ndarray:
    """[-1, 1] -> [min, max] per dimension (upstream ``unnormalize_data``)."""
    lo, hi = np.asarray(stats["min"], dtype=np.float64), np.asarray(stats["max"], dtype=np.float64)
    return (np.asarray(ndata, dtype=np.float64) + 1.0) / 2.0 * (hi - lo) + lo


def deltas_to_waypoints(ndeltas: np.ndarray, stats: dict = ACTION_STATS) -> np.ndarray:
    """Diffusion output (B, T*2) or (B, T, 2) of normalised deltas -> (B, T, 2) cumulative waypoints in
    units of the waypoint spacing (upstream ``get_action``)."""
    ndeltas = np.asarray(ndeltas, dtype=np.float64)
    ndeltas = ndeltas.reshape(ndeltas.shape[0], -1, 2)
    return np.cumsum(unnormalize_data(ndeltas, stats), axis=1)


def squaredcos_cap_v2_betas(num_train_timesteps: int, max_beta: float = 0.999) -> np.ndarray:
    """Betas of the cosine schedule (diffusers ``betas_for_alpha_bar``, "squaredcos_cap_v2")."""
    def alpha_bar(t: float) -> float:
        return math.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2

    n = num_train_timesteps
    return np.array([min(1 - alpha_bar((i + 1) / n) / alpha_bar(i / n), max_beta) for i in range(n)])


class DDPMSampler:
    """The reverse process of diffusers' ``DDPMScheduler(num_train_timesteps=n,
    beta_schedule="squaredcos_cap_v2", clip_sample=True, prediction_type="epsilon")`` with the default
    "fixed_small" variance and "leading" timestep spacing, in torch, so NoMaD samples the same way
    without diffusers. ``set_timesteps`` / ``timesteps`` / ``step(...).prev_sample`` mirror diffusers."""

    class _Out:
        def __init__(self, prev_sample):
            self.prev_sample = prev_sample

    def __init__(self, num_train_timesteps: int = 10, clip_sample_range: float = 1.0) -> None:
        import torch

        self.num_train_timesteps = int(num_train_timesteps)
        self.betas = torch.tensor(squaredcos_cap_v2_betas(self.num_train_timesteps), dtype=torch.float32)
        self.alphas_cumprod = torch.cumprod(1.0 - self.betas, dim=0)
        self.clip_sample_range = clip_sample_range
        self.set_timesteps(self.num_train_timesteps)

    def set_timesteps(self, num_inference_steps: int) -> None:
        import torch

        self.num_inference_steps = int(num_inference_steps)
        ratio = self.num_train_timesteps // self.num_inference_steps
        self.timesteps = torch.from_numpy((np.arange(self.num_inference_steps) * ratio).round()[::-1].copy().astype(np.int64))

    def step(self, model_output, timestep, sample, generator=None):
        import torch

        t = int(timestep)
        prev_t = t - self.num_train_timesteps // self.num_inference_steps
        a_t = self.alphas_cumprod[t]
        a_prev = self.alphas_cumprod[prev_t] if prev_t >= 0 else torch.tensor(1.0)
        b_t, b_prev = 1 - a_t, 1 - a_prev
        cur_alpha = a_t / a_prev
        cur_beta = 1 - cur_alpha
        x0 = (sample - b_t.sqrt() * model_output) / a_t.sqrt()
        x0 = x0.clamp(-self.clip_sample_range, self.clip_sample_range)
        mean = (a_prev.sqrt() * cur_beta / b_t) * x0 + (cur_alpha.sqrt() * b_prev / b_t) * sample
        if t > 0:
            variance = torch.clamp(b_prev / b_t * cur_beta, min=1e-20)
            noise = torch.randn(model_output.shape, generator=generator, dtype=model_output.dtype).to(model_output.device)
            mean = mean + variance.sqrt() * noise
        return self._Out(mean)


def make_noise_scheduler(num_diffusion_iters: int, prefer_diffusers: bool = True):
    """diffusers' DDPMScheduler configured as upstream when diffusers is installed, else ``DDPMSampler``."""
    if prefer_diffusers and module_installed("diffusers"):
        from diffusers.schedulers.scheduling_ddpm import DDPMScheduler

        return DDPMScheduler(num_train_timesteps=num_diffusion_iters, beta_schedule="squaredcos_cap_v2",
                             clip_sample=True, prediction_type="epsilon")
    return DDPMSampler(num_diffusion_iters)


def sample_actions(model, noise_scheduler, obs_img, goal_img, goal_mask, num_samples: int, len_traj_pred: int,
                   num_diffusion_iters: int, generator=None):
    """Upstream's sampling loop: encode, repeat the condition ``num_samples`` times, denoise Gaussian noise
    of shape (num_samples, len_traj_pred, 2). Returns the normalised deltas and the encoder condition."""
    import torch

    with torch.no_grad():
        obs_cond = model("vision_encoder", obs_img=obs_img, goal_img=goal_img, input_goal_mask=goal_mask)
        cond = obs_cond.repeat(num_samples, 1) if obs_cond.dim() == 2 else obs_cond.repeat(num_samples, 1, 1)
        naction = torch.randn((num_samples, len_traj_pred, 2), generator=generator).to(obs_img.device)
        noise_scheduler.set_timesteps(num_diffusion_iters)
        for k in noise_scheduler.timesteps[:]:
            noise_pred = model("noise_pred_net", sample=naction, timestep=k, global_cond=cond)
            kwargs = {"generator": generator} if generator is not None else {}
            naction = noise_scheduler.step(model_output=noise_pred, timestep=k, sample=naction, **kwargs).prev_sample
    return naction, obs_cond


# --------------------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------------------

def load_nomad_config(path: str | Path | None) -> dict:
    """Upstream's nomad.yaml merged over the defaults (defaults alone when ``path`` is None)."""
    cfg = dict(NOMAD_DEFAULTS)
    if path:
        import yaml

        with open(Path(path).expanduser()) as f:
            cfg.update(yaml.safe_load(f) or {})
    return cfg


def build_upstream_nomad(config: dict):
    """The NoMaD module exactly as upstream ``deployment/src/utils.py::load_model`` builds it."""
    from diffusion_policy.model.diffusion.conditional_unet1d import ConditionalUnet1D
    from vint_train.models.nomad.nomad import DenseNetwork, NoMaD
    from vint_train.models.nomad.nomad_vint import NoMaD_ViNT, replace_bn_with_gn

    if config.get("vision_encoder", "nomad_vint") == "nomad_vint":
        encoder = NoMaD_ViNT(obs_encoding_size=config["encoding_size"], context_size=config["context_size"],
                             mha_num_attention_heads=config["mha_num_attention_heads"],
                             mha_num_attention_layers=config["mha_num_attention_layers"],
                             mha_ff_dim_factor=config["mha_ff_dim_factor"])
    elif config["vision_encoder"] == "vit":
        from vint_train.models.vint.vit import ViT

        encoder = ViT(obs_encoding_size=config["encoding_size"], context_size=config["context_size"],
                      image_size=config["image_size"], patch_size=config["patch_size"],
                      mha_num_attention_heads=config["mha_num_attention_heads"],
                      mha_num_attention_layers=config["mha_num_attention_layers"])
    else:
        raise ValueError(f"NoMaD vision encoder {config['vision_encoder']!r} is not supported")
    encoder = replace_bn_with_gn(encoder)
    noise_pred_net = ConditionalUnet1D(input_dim=2, global_cond_dim=config["encoding_size"],
                                       down_dims=config["down_dims"], cond_predict_scale=config["cond_predict_scale"])
    return NoMaD(vision_encoder=encoder, noise_pred_net=noise_pred_net,
                 dist_pred_net=DenseNetwork(embedding_dim=config["encoding_size"]))


def load_nomad(checkpoint: str | Path, config: dict, device: str = "cpu"):
    """Build the network and load ``nomad.pth`` (a raw state dict, loaded with strict=False as upstream)."""
    import torch

    model = build_upstream_nomad(config)
    state = torch.load(Path(checkpoint).expanduser(), map_location=device, weights_only=True)  # tensors only: a checkpoint path must not run code
    if isinstance(state, dict) and "model" in state and not isinstance(state["model"], dict):
        module = state["model"]
        inner: Any = getattr(module, "module", module)  # unwrap DataParallel
        state = inner.state_dict()
    model.load_state_dict(state, strict=False)
    return model.to(device).eval()


# --------------------------------------------------------------------------------------------------
# the policy
# --------------------------------------------------------------------------------------------------

class NoMaDPolicy(Policy):
    """NoMaD goal-conditioned navigation / exploration -> ``Waypoints`` in metres, robot frame.

    Goal-conditioned when ``reset`` (or the observation) gives a goal image, exploring otherwise.
    ``act`` returns one ``Waypoints`` with all ``len_traj_pred`` waypoints of the chosen sample (upstream
    drives to ``waypoint_index``, default 2, which is recorded in ``last_info``)."""

    family = "nomad"
    image_size = (96, 96)
    rate_hz = FRAME_RATE

    def __init__(self, checkpoint: str | None = None, config: str | None = None, device: str = "cpu",
                 context_size: int | None = None, image_size: list[int] | None = None,
                 len_traj_pred: int | None = None, num_diffusion_iters: int | None = None,
                 num_samples: int = 8, sample_index: int = 0, waypoint_index: int = 2,
                 action_stats: dict | None = None, max_v: float = MAX_V, frame_rate: float = FRAME_RATE,
                 waypoint_scale: float | None = None, context_pad: str = "repeat", seed: int | None = 0,
                 prefer_diffusers: bool = True, model: Any = None) -> None:
        """
        Args:
            checkpoint: path to ``nomad.pth``.
            config: path to upstream ``train/config/nomad.yaml`` (architecture and context settings).
            device: torch device ("cpu", "cuda:0").
            context_size, image_size ([width, height]), len_traj_pred, num_diffusion_iters: override the
                config (defaults 3, [96, 96], 8, 10).
            num_samples: trajectories sampled per step (upstream 8); ``sample_index`` picks one (upstream 0).
            waypoint_index: the waypoint upstream's PD controller drives to (reported in ``last_info``).
            action_stats: {"min": [..], "max": [..]} of the normalised deltas (upstream data_config.yaml).
            max_v, frame_rate: the robot's speed limit and rate; with ``normalize`` the waypoints are in
                units of ``max_v / frame_rate`` metres, as in upstream deployment.
            waypoint_scale: metres per unit; overrides ``max_v / frame_rate`` (e.g. the training dataset's
                ``metric_waypoint_spacing``). 1.0 if the config has ``normalize: false``.
            context_pad: "repeat" the first frame to fill the context, or "wait" (return no command) as
                upstream does until context_size + 1 frames arrived.
            seed: seed of the sampling noise (None: nondeterministic).
            prefer_diffusers: use diffusers' DDPMScheduler when installed (else the built-in equivalent).
            model: an already built network with upstream's ``model(func_name, **kwargs)`` interface
                (injected instead of loading ``checkpoint``).
        """
        self.checkpoint = expand(checkpoint)
        self.config_path = expand(config)
        self.device = torch_device(device)
        self._model = model
        self._explicit = {"context_size": context_size, "image_size": image_size, "len_traj_pred": len_traj_pred,
                          "num_diffusion_iters": num_diffusion_iters}
        self.config = self._resolve_config(read_file=True)
        self.num_samples = int(num_samples)
        self.sample_index = int(sample_index)
        self.waypoint_index = int(waypoint_index)
        self.action_stats = {k: np.asarray(v, dtype=np.float64) for k, v in (action_stats or ACTION_STATS).items()}
        self.rate_hz = float(frame_rate)
        self._explicit_scale = waypoint_scale is not None
        self.waypoint_scale = float(waypoint_scale) if waypoint_scale is not None else max_v / frame_rate
        self.context_pad = context_pad
        self.seed = seed
        self.prefer_diffusers = prefer_diffusers
        self._scheduler = None
        self._generator: torch.Generator | None = None
        self._apply_config()
        self.goal: np.ndarray | None = None
        self.last_info: dict = {}

    # configuration ------------------------------------------------------------------------------
    def _resolve_config(self, read_file: bool) -> dict:
        cfg = load_nomad_config(self.config_path if read_file and self.config_path and self.config_path.exists() else None)
        cfg.update({k: v for k, v in self._explicit.items() if v is not None})
        return cfg

    def _apply_config(self) -> None:
        w, h = self.config["image_size"]
        self.image_size = (int(h), int(w))
        self.context = ContextQueue(int(self.config["context_size"]), self.context_pad)

    def availability(self) -> str | None:
        if self._model is not None:
            return None
        missing = {m: INSTALL_HINT for m in missing_modules(["vint_train", "diffusion_policy", "efficientnet_pytorch"])}
        return availability_message("NoMaD", missing, {"checkpoint": (self.checkpoint, CHECKPOINT_HINT),
                                                       "config": (self.config_path, CONFIG_HINT)})

    def _ensure_model(self):
        if self._model is None:
            problem = self.availability()
            if problem:
                raise RuntimeError(problem)
            self.config = self._resolve_config(read_file=True)
            self._apply_config()
            if not self._explicit_scale and not self.config.get("normalize", True):
                self.waypoint_scale = 1.0
            self._model = load_nomad(self.checkpoint, self.config, self.device)
        if self._scheduler is None:
            self._scheduler = make_noise_scheduler(int(self.config["num_diffusion_iters"]), self.prefer_diffusers)
        return self._model

    # Policy -------------------------------------------------------------------------------------
    def reset(self, instruction: str = "", goal_image: np.ndarray | None = None) -> None:
        self.context.reset()
        self.goal = None if goal_image is None else np.asarray(goal_image)
        if self.seed is not None:
            import torch

            self._generator = torch.Generator().manual_seed(int(self.seed))
        self.last_info = {}

    def preprocess(self, obs: PolicyObservation) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """Push the frame; return (obs_img (1, 3(c+1), H, W), goal_img (1, 3, H, W), goal_mask (1,));
        obs_img is None until the context holds enough frames."""
        wh = tuple(self.config["image_size"])
        self.context.push(transform_image(obs.rgb, wh))
        goal = obs.goal_image if obs.goal_image is not None else self.goal
        if goal is not None:
            goal_img = transform_image(goal, wh)[None]
            mask = np.zeros(1, dtype=np.int64)  # 0: goal-conditioned
        else:
            goal_img = np.zeros((1, 3, self.image_size[0], self.image_size[1]), dtype=np.float32)
            mask = np.ones(1, dtype=np.int64)  # 1: the goal token is masked (exploration)
        return (self.context.stacked() if self.context.ready else None), goal_img, mask

    def act(self, obs: PolicyObservation) -> list[Command]:
        import torch

        model = self._ensure_model()
        obs_img, goal_img, mask = self.preprocess(obs)
        if obs_img is None:
            return []
        if self._generator is None and self.seed is not None:
            self._generator = torch.Generator().manual_seed(int(self.seed))
        dev = self.device
        naction, cond = sample_actions(model, self._scheduler, torch.from_numpy(obs_img).to(dev),
                                       torch.from_numpy(goal_img).to(dev), torch.from_numpy(mask).to(dev),
                                       self.num_samples, int(self.config["len_traj_pred"]),
                                       int(self.config["num_diffusion_iters"]), self._generator)
        samples = deltas_to_waypoints(naction.detach().cpu().numpy(), self.action_stats)
        chosen = samples[min(self.sample_index, len(samples) - 1)] * self.waypoint_scale
        info: dict = {"samples_m": samples * self.waypoint_scale, "goal_conditioned": bool(mask[0] == 0),
                      "waypoint_index": min(self.waypoint_index, len(chosen) - 1)}
        if mask[0] == 0 and hasattr(model, "dist_pred_net"):
            with torch.no_grad():
                info["temporal_distance"] = float(model("dist_pred_net", obsgoal_cond=cond).flatten()[0])
        self.last_info = info
        return [Waypoints(points=chosen.astype(np.float64))]

    def close(self) -> None:
        self._model = None
