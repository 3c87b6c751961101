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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from homiebot.policies._loading import (
    availability_message,
    expand,
    imagenet_normalize,
    missing_modules,
    module_installed,
    resize_pil,
    torch_device,
)
from homiebot.policies.base import Command, DiscreteMove, Move, Policy, PolicyObservation, Velocity, Waypoints
from homiebot.policies.training_cameras import training_camera, with_input_size

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
MAX_W = 0.4  # rad/s
FRAME_RATE = 4.0  # Hz
PD_EPS = 1e-8

INSTALL_HINT = ("git clone https://github.com/robodhruv/visualnav-transformer.git && "
                "pip install -e visualnav-transformer/train/ && "
                "git clone https://github.com/real-stanford/diffusion_policy.git && pip install -e diffusion_policy/ && "
                "pip install efficientnet_pytorch torchvision einops")
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
    """The last ``context_size + 1`` transformed frames. As upstream, ``ready`` stays False until the
    queue is full (``pad="wait"``, the default); ``pad="repeat"`` instead repeats the first frame of a
    subtask to fill it, so that the first step can act."""

    def __init__(self, context_size: int, pad: str = "wait") -> None:
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


def clip_angle(theta: float) -> float:
    """An angle wrapped into (-pi, pi] (upstream ``pd_controller.clip_angle``)."""
    theta = math.fmod(theta, 2 * math.pi)
    theta = theta + 2 * math.pi if theta < 0 else theta
    return theta if theta < math.pi else theta - 2 * math.pi


def pd_controller(waypoint: np.ndarray, dt: float, max_v: float = MAX_V, max_w: float = MAX_W) -> tuple[float, float]:
    """Upstream's ``deployment/src/pd_controller.py``: one (dx, dy) or (dx, dy, hx, hy) waypoint in metres,
    robot frame -> (v, w). It reaches the waypoint in one period ``dt`` (v = dx / dt, w = atan(dy / dx)
    / dt), turns in place towards a waypoint beside the robot, and clips v to [0, max_v] (never
    backwards) and w to [-max_w, max_w]."""
    wp = np.asarray(waypoint, dtype=np.float64).reshape(-1)
    if len(wp) not in (2, 4):
        raise ValueError("a waypoint is (dx, dy) or (dx, dy, hx, hy)")
    dx, dy = float(wp[0]), float(wp[1])
    if len(wp) == 4 and abs(dx) < PD_EPS and abs(dy) < PD_EPS:
        v, w = 0.0, clip_angle(math.atan2(float(wp[3]), float(wp[2]))) / dt
    elif abs(dx) < PD_EPS:
        v, w = 0.0, float(np.sign(dy)) * math.pi / (2 * dt)
    else:
        v, w = dx / dt, math.atan(dy / dx) / dt
    return float(np.clip(v, 0.0, max_v)), float(np.clip(w, -max_w, max_w))


class TopoMap:
    """A topological map of goal images, in the order the robot recorded them (node 0 where it started,
    the last node at the goal), as ``deployment/src/navigate.py`` reads ``topomaps/images/<dir>``.

    Build it from a directory of numbered images (upstream's ``create_topomap.py`` output), from frames
    the robot recorded when it explored (``from_frames`` keeps one every ``every`` frames,
    ``from_recording`` one every ``spacing`` metres of its odometry), or from views rendered at poses
    along a path planned on the map (``from_views``)."""

    def __init__(self, images: list[np.ndarray]) -> None:
        if not images:
            raise ValueError("a topological map needs at least one image")
        self.images = [np.asarray(im) for im in images]

    def __len__(self) -> int:
        return len(self.images)

    @classmethod
    def from_directory(cls, path: str | Path) -> TopoMap:
        """Images named by their node number (``0.png``, ``1.png``, ...), sorted numerically as upstream."""
        from PIL import Image

        root = Path(path).expanduser()
        if not root.is_dir():
            raise FileNotFoundError(f"topological map directory {root} does not exist")
        files = [f for f in root.iterdir() if f.suffix.lower() in (".png", ".jpg", ".jpeg") and f.stem.isdigit()]
        if not files:
            raise ValueError(f"{root} holds no numbered images (0.png, 1.png, ...) of a topological map")
        files.sort(key=lambda f: int(f.stem))
        return cls([np.asarray(Image.open(f).convert("RGB")) for f in files])

    @classmethod
    def from_frames(cls, frames: list[np.ndarray], every: int = 1) -> TopoMap:
        """Recorded frames (oldest first), one node every ``every`` frames; the last frame is always a node."""
        if every < 1:
            raise ValueError("every must be >= 1")
        picked = list(frames[::every])
        if frames and (len(frames) - 1) % every:
            picked.append(frames[-1])
        return cls(picked)

    @classmethod
    def from_recording(cls, frames: list[np.ndarray], poses: list[tuple[float, float, float]], spacing: float = 1.0) -> TopoMap:
        """Frames recorded while the robot explored, with its (x, y, yaw) at each: a node whenever it moved
        ``spacing`` metres since the last node (upstream samples by time, ``create_topomap.py --dt``);
        the first and the last frame are always nodes."""
        if len(frames) != len(poses):
            raise ValueError(f"{len(frames)} frames but {len(poses)} poses")
        if not frames:
            raise ValueError("a topological map needs at least one image")
        keep = [0]
        for i in range(1, len(frames)):
            last = poses[keep[-1]]
            if math.hypot(poses[i][0] - last[0], poses[i][1] - last[1]) >= spacing:
                keep.append(i)
        if keep[-1] != len(frames) - 1:
            keep.append(len(frames) - 1)
        return cls([frames[i] for i in keep])

    @classmethod
    def from_views(cls, render: Callable[[tuple[float, float, float]], np.ndarray], poses: list[tuple[float, float, float]]) -> TopoMap:
        """Views rendered (e.g. by a simulator or from a map's stored views) at ``poses`` along a path to the goal."""
        return cls([np.asarray(render(p)) for p in poses])

    def save(self, path: str | Path) -> Path:
        """Write the nodes as ``<n>.png`` (upstream's layout)."""
        from PIL import Image

        root = Path(path).expanduser()
        root.mkdir(parents=True, exist_ok=True)
        for i, im in enumerate(self.images):
            Image.fromarray(im.astype(np.uint8)).save(root / f"{i}.png")
        return root


def localize(dists: np.ndarray, start: int, close_threshold: float) -> tuple[int, int]:
    """Upstream's subgoal choice: the node with the smallest predicted distance is where the robot is;
    the subgoal is the next node once that one is closer than ``close_threshold``. Returns
    (closest node, subgoal index into ``dists``)."""
    d = np.asarray(dists, dtype=np.float64).reshape(-1)
    i = int(np.argmin(d))
    return start + i, min(i + int(d[i] < close_threshold), len(d) - 1)


def make_noise_scheduler(num_diffusion_iters: int, prefer_diffusers: bool = True):
    """diffusers' DDPMScheduler configured as upstream when diffusers is installed, else ``DDPMSampler``."""
    if prefer_diffusers and module_installed("diffusers"):
        from diffusers.schedulers.scheduling_ddpm import DDPMScheduler

        return DDPMScheduler(num_train_timesteps=num_diffusion_iters, beta_schedule="squaredcos_cap_v2",
                             clip_sample=True, prediction_type="epsilon")
    return DDPMSampler(num_diffusion_iters)


def sample_actions(model, noise_scheduler, obs_img, goal_img, goal_mask, num_samples: int, len_traj_pred: int,
                   num_diffusion_iters: int, generator=None, obs_cond=None):
    """Upstream's sampling loop: encode (unless ``obs_cond`` is given, e.g. the topological map's chosen
    subgoal), repeat the condition ``num_samples`` times, denoise Gaussian noise of shape
    (num_samples, len_traj_pred, 2). Returns the normalised deltas and the encoder condition."""
    import torch

    with torch.no_grad():
        if obs_cond is None:
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
    """NoMaD goal-conditioned navigation / exploration, driven as upstream deploys it.

    Goal-conditioned with a topological map (``topomap``: the subgoal is the node with the smallest
    predicted distance, as ``navigate.py``), or with one goal image from ``reset`` / the observation;
    exploring otherwise. Each step it samples trajectories and, with ``controller="pd"`` (default),
    returns one ``Velocity``: upstream's PD controller towards waypoint ``waypoint_index`` (2) of the
    chosen sample, at most ``max_v`` (0.2 m/s), re-planned at the next step. ``controller="waypoints"``
    returns all waypoints for the robot's own tracker instead. Reaching the map's goal node returns
    ``STOP``. Until ``context_size + 1`` frames arrived it returns no command (upstream waits)."""

    family = "nomad"
    image_size = (96, 96)
    rate_hz = FRAME_RATE

    def __init__(self, checkpoint: str | None = None, config: str | None = None, device: str = "cpu",
                 context_size: int | None = None, image_size: list[int] | None = None,
                 len_traj_pred: int | None = None, num_diffusion_iters: int | None = None,
                 num_samples: int = 8, sample_index: int = 0, waypoint_index: int = 2,
                 action_stats: dict | None = None, max_v: float = MAX_V, frame_rate: float = FRAME_RATE,
                 waypoint_scale: float | None = None, context_pad: str = "wait", seed: int | None = 0,
                 prefer_diffusers: bool = True, model: Any = None, camera: str | dict | None = "nomad",
                 controller: str = "pd", max_w: float = MAX_W, topomap: Any = None, goal_node: int = -1,
                 radius: int = 4, close_threshold: float = 3.0) -> None:
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
            context_pad: "wait" (return no command until context_size + 1 frames arrived, as upstream) or
                "repeat" the first frame to fill the context.
            seed: seed of the sampling noise (None: nondeterministic).
            prefer_diffusers: use diffusers' DDPMScheduler when installed (else the built-in equivalent).
            model: an already built network with upstream's ``model(func_name, **kwargs)`` interface
                (injected instead of loading ``checkpoint``).
            camera: the training camera the observation is produced as (default 4:3 wide-angle frames;
                a family name or ``TrainingCamera`` fields; see ``skills.training_cameras``).
            controller: "pd" (upstream's PD controller to ``waypoint_index``, one ``Velocity`` per step) or
                "waypoints" (all waypoints of the sample, tracked by the robot).
            max_w: the PD controller's angular limit (upstream robot.yaml 0.4 rad/s).
            topomap: a ``TopoMap`` or a directory of numbered images: navigate by the topological map.
            goal_node: the map's goal node (-1: the last); radius: nodes either side of the closest one
                compared each step (upstream 4); close_threshold: predicted distance under which the
                next node becomes the subgoal (upstream 3).
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
        if controller not in ("pd", "waypoints"):
            raise ValueError("controller must be 'pd' or 'waypoints'")
        self.controller = controller
        self.max_v, self.max_w = float(max_v), float(max_w)
        self.topomap = topomap if topomap is None or isinstance(topomap, TopoMap) else TopoMap.from_directory(str(topomap))
        self.goal_node_param, self.radius, self.close_threshold = int(goal_node), int(radius), float(close_threshold)
        self.closest_node = 0
        self._camera_param = camera
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
        self.camera = with_input_size(training_camera(self._camera_param), self.image_size)

    def availability(self) -> str | None:
        if self._model is not None:
            return None
        missing = {m: INSTALL_HINT for m in missing_modules(["vint_train", "diffusion_policy", "efficientnet_pytorch",
                                                             "torchvision", "einops"])}
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
        self.closest_node = 0
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

    @property
    def goal_node(self) -> int:
        """The topological map's goal node."""
        assert self.topomap is not None
        n = len(self.topomap)
        if not -1 <= self.goal_node_param < n:
            raise ValueError(f"goal_node {self.goal_node_param} is outside the topological map's {n} nodes")
        return n - 1 if self.goal_node_param == -1 else self.goal_node_param

    def _topomap_condition(self, model, obs_img):
        """``navigate.py``'s localisation: encode the observation against the nodes within ``radius`` of the
        closest one, pick the subgoal by predicted distance; returns its condition (1, D) and the info."""
        import torch

        assert self.topomap is not None
        goal = self.goal_node
        start = max(self.closest_node - self.radius, 0)
        end = min(self.closest_node + self.radius + 1, goal)
        wh = tuple(self.config["image_size"])
        goals = torch.from_numpy(np.stack([transform_image(im, wh) for im in self.topomap.images[start:end + 1]])).to(self.device)
        n = len(goals)
        obs_t = torch.from_numpy(obs_img).to(self.device)
        mask = torch.zeros(n, dtype=torch.long, device=self.device)
        with torch.no_grad():
            cond = model("vision_encoder", obs_img=obs_t.repeat(n, 1, 1, 1), goal_img=goals, input_goal_mask=mask)
            dists = model("dist_pred_net", obsgoal_cond=cond).detach().cpu().numpy().reshape(-1)
        self.closest_node, sg = localize(dists, start, self.close_threshold)
        info = {"node_distances": dists, "closest_node": self.closest_node, "subgoal_node": start + sg, "goal_node": goal}
        return cond[sg:sg + 1], info

    def act(self, obs: PolicyObservation) -> list[Command]:
        import torch

        model = self._ensure_model()
        obs_img, goal_img, mask = self.preprocess(obs)
        if obs_img is None:
            self.last_info = {"waiting_for_context": len(self.context.frames)}
            return []
        if self._generator is None and self.seed is not None:
            self._generator = torch.Generator().manual_seed(int(self.seed))
        dev = self.device
        info: dict = {}
        cond = None
        if self.topomap is not None:
            cond, info = self._topomap_condition(model, obs_img)
            mask = np.zeros(1, dtype=np.int64)
        naction, cond = sample_actions(model, self._scheduler, torch.from_numpy(obs_img).to(dev),
                                       torch.from_numpy(goal_img).to(dev), torch.from_numpy(mask).to(dev),
                                       self.num_samples, int(self.config["len_traj_pred"]),
                                       int(self.config["num_diffusion_iters"]), self._generator, obs_cond=cond)
        samples = deltas_to_waypoints(naction.detach().cpu().numpy(), self.action_stats)
        chosen = samples[min(self.sample_index, len(samples) - 1)] * self.waypoint_scale
        index = min(self.waypoint_index, len(chosen) - 1)
        info.update({"samples_m": samples * self.waypoint_scale, "goal_conditioned": bool(mask[0] == 0),
                     "waypoint_index": index, "waypoint_m": chosen[index].copy()})
        if mask[0] == 0 and self.topomap is None and hasattr(model, "dist_pred_net"):
            with torch.no_grad():
                info["temporal_distance"] = float(model("dist_pred_net", obsgoal_cond=cond).flatten()[0])
        self.last_info = info
        if self.topomap is not None and self.closest_node == self.goal_node:
            return [DiscreteMove(Move.STOP)]  # upstream publishes reached_goal and the controller stops
        if self.controller == "waypoints":
            return [Waypoints(points=chosen.astype(np.float64))]
        v, w = pd_controller(chosen[index], 1.0 / self.rate_hz, self.max_v, self.max_w)
        info["velocity"] = (v, w)
        return [Velocity(v, w)]

    def close(self) -> None:
        self._model = None
