"""PixNav (Pixel-Navigator) behind the ``Policy`` contract: a pixel goal in, discrete moves out.

Upstream contract (wzcai99/Pixel-Navigator ``policy_agent.py``, ``policy_network.py``,
``objnav_benchmark.py``, ``evaluate_policy.py``):

* ``Policy_Agent(model_path, max_token_length=64, image_size=224)``; the checkpoint is the state dict of
  ``PixelNav_Policy`` (``load_state_dict(torch.load(path))``);
* ``reset(goal_image, goal_mask)``: goal image passed through ``cv2.cvtColor(BGR2RGB)`` and
  ``cv2.resize`` to 224x224; goal mask (uint8, 255 inside) resized the same way. The third positional
  argument of that ``cv2.resize`` call is ``dst``, so the mask is resized bilinearly, not nearest;
* the goal mask is a 16x16 square of 255 around the centre of the detector's box (``+-8`` px);
* ``step(obs)``: the frame goes into slot ``t`` of a zero history of 64 frames; the network sees
  ``forward(goal_mask (1,H,W,1), goal_image (1,H,W,3), episode_image (1,64,H,W,3))`` with every array
  divided by 255 (no mean/std) and returns action logits (1,64,6), distance (1,64,1) and the pixel goal
  (1,64,2, normalised y, x); the action is the argmax of the logits at slot ``t``; after a collision the
  "forward" logit is overwritten with -1; past 32 steps the agent answers stop (early stop);
* actions are Habitat's: 0 stop, 1 move forward (0.25 m), 2 turn left (30 deg), 3 turn right,
  4 look up, 5 look down.

Colour order: upstream feeds Habitat's RGB frames through ``BGR2RGB``, so the network sees the channels
swapped; ``swap_rb=True`` (default) reproduces exactly that for RGB input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from homiebot.policies._loading import (
    as_rgb_uint8,
    availability_message,
    expand,
    missing_modules,
    resize_uint8_cv2,
    torch_device,
)
from homiebot.policies.base import Command, DiscreteMove, Move, Policy, PolicyObservation
from homiebot.policies.training_cameras import training_camera, with_input_size

PIXNAV_ACTIONS: tuple[Move, ...] = (Move.STOP, Move.FORWARD, Move.TURN_LEFT, Move.TURN_RIGHT, Move.LOOK_UP, Move.LOOK_DOWN)
FORWARD_STEP_M = 0.25
TURN_STEP_DEG = 30.0

INSTALL_HINT = "pip install torch  (the PixNav network is rebuilt here from plain torch)"
CHECKPOINT_HINT = ("a PixelNav checkpoint (Checkpoint_A/B/C) from the Pixel-Navigator README's 'Download the checkpoints' "
                   "table (Google Drive); set params.checkpoint")


# --------------------------------------------------------------------------------------------------
# pure pre/post-processing
# --------------------------------------------------------------------------------------------------

def prepare_image(rgb: np.ndarray, image_size: int, swap_rb: bool = True) -> np.ndarray:
    """A frame as ``Policy_Agent`` stores it: channel swap (cv2 BGR2RGB) then cv2 bilinear resize to
    ``image_size`` square; uint8 HxWx3 (the network divides by 255 itself)."""
    img = as_rgb_uint8(rgb)
    if swap_rb:
        img = img[..., ::-1]
    return resize_uint8_cv2(img, (image_size, image_size))


def goal_box_mask(shape: tuple[int, int], center_xy: tuple[float, float], half: int = 8) -> np.ndarray:
    """Upstream's goal mask: zeros with a filled square of 255 from ``centre - half`` to ``centre + half``
    (cv2.rectangle, both corners inclusive) around an integer pixel centre (x, y)."""
    h, w = shape
    cx, cy = int(center_xy[0]), int(center_xy[1])
    mask = np.zeros((h, w), dtype=np.uint8)
    x0, x1 = max(cx - half, 0), min(cx + half, w - 1)
    y0, y1 = max(cy - half, 0), min(cy + half, h - 1)
    if x0 <= x1 and y0 <= y1:
        mask[y0:y1 + 1, x0:x1 + 1] = 255
    return mask


def mask_box_center(mask: np.ndarray) -> tuple[int, int] | None:
    """Centre (x, y) of the bounding box of a boolean mask, as upstream takes the centre of the detector's
    box: ``int((x0 + x1) / 2)``. None for an empty mask."""
    ys, xs = np.nonzero(np.asarray(mask))
    if len(xs) == 0:
        return None
    return int((xs.min() + xs.max()) / 2), int((ys.min() + ys.max()) / 2)


def prepare_goal_mask(mask: np.ndarray, image_size: int, box_half: int | None = 8) -> np.ndarray:
    """HxW goal pixels (bool or uint8) -> the network's uint8 mask at ``image_size`` (bilinear, as the
    upstream resize call does). With ``box_half`` the mask is first replaced by upstream's square around
    the centre of its bounding box; with None the given mask is used as is (scaled to 0/255)."""
    m = np.asarray(mask)
    if box_half is not None:
        centre = mask_box_center(m > 0)
        m = np.zeros(m.shape, np.uint8) if centre is None else goal_box_mask(m.shape, centre, box_half)
    else:
        m = np.where(m > 0, 255, 0).astype(np.uint8)
    return resize_uint8_cv2(m, (image_size, image_size))


def decode_action(logits: np.ndarray, collided: bool = False) -> Move:
    """Upstream's choice: argmax of the 6 logits; after a collision the forward logit becomes -1."""
    logits = np.array(logits, dtype=np.float64).reshape(-1)
    if collided:
        logits[1] = -1.0
    return PIXNAV_ACTIONS[int(np.argmax(logits))]


# --------------------------------------------------------------------------------------------------
# the network, rebuilt from plain torch with upstream's parameter names
# --------------------------------------------------------------------------------------------------

def _build_network_classes():
    import torch
    from torch import nn

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    def resnet18_trunk(in_channels: int = 3) -> nn.Sequential:
        """torchvision's resnet18 without its fc layer, flattened: Sequential indices 0 conv1, 1 bn1,
        2 relu, 3 maxpool, 4-7 layer1-4, 8 avgpool, 9 Flatten (the keys upstream's checkpoint uses)."""
        def layer(inplanes: int, planes: int, stride: int) -> nn.Sequential:
            return nn.Sequential(BasicBlock(inplanes, planes, stride), BasicBlock(planes, planes, 1))

        trunk = nn.Sequential(
            nn.Conv2d(in_channels, 64, kernel_size=7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64),
            nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=3, stride=2, padding=1),
            layer(64, 64, 1), layer(64, 128, 2), layer(128, 256, 2), layer(256, 512, 2),
            nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten())
        for m in trunk.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        return trunk

    def causal_mask(sz: int):
        mask = (torch.triu(torch.ones(sz, sz)) == 1).transpose(0, 1)
        return mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, 0.0)

    class PixelNavNetwork(nn.Module):
        """``PixelNav_Policy``: ResNet18 history and goal (RGB + mask, 4 channels) encoders, a 4-layer
        transformer decoder (d 768, 4 heads) over the frame tokens with the goal token as memory, and
        action (6) / distance (1) / pixel-goal (2) heads. ``forward`` takes numpy uint8 arrays as upstream.
        Histories shorter than ``max_token_length`` are accepted (the decoder is causal, so the outputs of
        the given slots equal those of the zero-padded full history)."""

        def __init__(self, max_token_length: int = 64, device: str = "cpu", nhead: int = 4, num_layers: int = 4,
                     dim_feedforward: int = 2048, dropout: float = 0.25) -> None:
            super().__init__()
            self.device = device
            self.max_token_length = max_token_length
            self.history_backbone = resnet18_trunk(3)
            self.goal_backbone = resnet18_trunk(4)
            self.goal_concat_proj = nn.Linear(512, 256)
            d_model = 768  # 512 frame features + 256 goal features
            self.goal_input_proj = nn.Linear(512, d_model)
            self.dt_policy = nn.TransformerDecoder(
                nn.TransformerDecoderLayer(d_model, nhead, dim_feedforward=dim_feedforward, dropout=dropout,
                                           batch_first=True), num_layers)
            self.po_embedding = nn.Embedding(max_token_length, d_model)
            nn.init.normal_(self.po_embedding.weight, 0, 0.01)
            self.action_head = nn.Linear(d_model, 6)
            self.distance_head = nn.Linear(d_model, 1)
            self.goal_head = nn.Linear(d_model, 2)
            self.to(device)

        def forward(self, goal_mask, goal_image, episode_image):
            dev = self.device
            gm = torch.as_tensor(np.asarray(goal_mask) / 255.0, dtype=torch.float32, device=dev).permute(0, 3, 1, 2)
            gi = torch.as_tensor(np.asarray(goal_image) / 255.0, dtype=torch.float32, device=dev).permute(0, 3, 1, 2)
            goal_token = self.goal_backbone(torch.cat((gi, gm), dim=1)).unsqueeze(1)
            goal_concat = self.goal_concat_proj(goal_token)
            goal_input = self.goal_input_proj(goal_token)
            ep = torch.as_tensor(np.asarray(episode_image) / 255.0, dtype=torch.float32, device=dev).permute(0, 1, 4, 2, 3)
            b, t, c, h, w = ep.shape
            tokens = self.history_backbone(ep.reshape(-1, c, h, w)).view(b, t, -1)
            tokens = torch.cat((tokens, goal_concat.tile((1, t, 1))), dim=-1)
            pos = torch.arange(t, device=dev).expand(b, t)
            tokens = tokens + self.po_embedding(pos)
            out = self.dt_policy(tgt=tokens, memory=goal_input, tgt_mask=causal_mask(t).to(dev))
            return self.action_head(out), self.distance_head(out), self.goal_head(out)

    return PixelNavNetwork, resnet18_trunk


def build_pixnav_network(max_token_length: int = 64, device: str = "cpu", **network: Any):
    """A randomly initialised PixNav network (load a checkpoint with ``load_state_dict``). ``network``
    overrides the decoder's ``nhead`` (4), ``num_layers`` (4) and ``dim_feedforward`` (2048); upstream's
    checkpoints need the defaults."""
    cls, _ = _build_network_classes()
    return cls(max_token_length=max_token_length, device=device, **network)


def load_pixnav(checkpoint: str | Path, max_token_length: int = 64, device: str = "cpu", upstream: bool = False,
                network: dict | None = None):
    """The network with the checkpoint's weights. ``upstream=True`` uses Pixel-Navigator's own
    ``policy_network.PixelNav_Policy`` (needs that repository and torchvision on the path)."""
    import torch

    if upstream:
        from policy_network import PixelNav_Policy

        net = PixelNav_Policy(max_token_length, device)
    else:
        net = build_pixnav_network(max_token_length, device, **(network or {}))
    state = torch.load(Path(checkpoint).expanduser(), map_location=device, weights_only=True)  # tensors only: a checkpoint path must not run code
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    net.load_state_dict(state)
    return net.eval()


# --------------------------------------------------------------------------------------------------
# the policy
# --------------------------------------------------------------------------------------------------

class PixNavPolicy(Policy):
    """PixNav pixel-goal navigation -> one ``DiscreteMove`` per step.

    The goal is the goal image plus its goal pixels (``PolicyObservation.goal_mask`` or
    ``reset(goal_image=...)`` with ``extras["goal_mask"]`` on the first observation). The history holds
    the frames since ``reset``; after ``early_stop_steps`` steps (or a full history) the policy stops.
    ``extras["collided"]`` on an observation applies upstream's collision rule. Moves are Habitat's:
    forward 0.25 m, turns 30 degrees, look up/down one tilt step."""

    family = "pixnav"
    image_size = (224, 224)
    rate_hz = 4.0

    def __init__(self, checkpoint: str | None = None, device: str = "cpu", image_size: int = 224,
                 max_token_length: int = 64, early_stop_steps: int | None = 32, swap_rb: bool = True,
                 goal_box_half: int | None = 8, truncate_history: bool = True, use_upstream_code: bool = False,
                 network: dict | None = None, model: Any = None, camera: str | dict | None = "pixnav") -> None:
        """
        Args:
            checkpoint: path to a PixelNav policy checkpoint (a state dict of ``PixelNav_Policy``).
            device: torch device.
            image_size: square input size (upstream 224).
            max_token_length: history slots (upstream 64).
            early_stop_steps: stop once more than this many steps were taken (upstream 32; None: off).
            swap_rb: swap R and B as upstream's BGR2RGB on Habitat's RGB frames does.
            goal_box_half: replace the goal mask by upstream's square of +-this many pixels around the
                centre of its bounding box (None: use the given mask).
            truncate_history: feed only the frames seen so far (identical outputs, much less compute);
                False feeds the zero-padded 64-frame history as upstream.
            use_upstream_code: build the network from Pixel-Navigator's ``policy_network`` module.
            network: decoder overrides for the built-in network (``nhead``, ``num_layers``,
                ``dim_feedforward``); leave unset for upstream checkpoints.
            model: an already built network with upstream's ``forward(goal_mask, goal_image, episode_image)``.
            camera: the training camera the observation is produced as (default Habitat's 640x480, hfov 79;
                a family name or ``TrainingCamera`` fields; see ``skills.training_cameras``).
        """
        self.checkpoint = expand(checkpoint)
        self.device = torch_device(device)
        self.size = int(image_size)
        self.image_size = (self.size, self.size)
        self.camera = with_input_size(training_camera(camera), self.image_size)
        self.max_token_length = int(max_token_length)
        self.early_stop_steps = early_stop_steps
        self.swap_rb = swap_rb
        self.goal_box_half = goal_box_half
        self.truncate_history = truncate_history and not use_upstream_code
        self.use_upstream_code = use_upstream_code
        self.network = dict(network or {})
        self._model = model
        self.goal_image: np.ndarray | None = None
        self.goal_mask: np.ndarray | None = None
        self.history = np.zeros((self.max_token_length, self.size, self.size, 3), dtype=np.uint8)
        self.steps = 0
        self.last_info: dict = {}
        self._raw_goal: np.ndarray | None = None

    def availability(self) -> str | None:
        if self._model is not None:
            return None
        modules = ["torch"] + (["policy_network", "torchvision", "cv2"] if self.use_upstream_code else [])
        hint = ("git clone https://github.com/wzcai99/Pixel-Navigator.git and put it on PYTHONPATH; pip install torch torchvision opencv-python"
                if self.use_upstream_code else INSTALL_HINT)
        missing = {m: hint for m in missing_modules(modules)}
        return availability_message("PixNav", missing, {"checkpoint": (self.checkpoint, CHECKPOINT_HINT)})

    def _ensure_model(self):
        if self._model is None:
            problem = self.availability()
            if problem:
                raise RuntimeError(problem)
            self._model = load_pixnav(self.checkpoint, self.max_token_length, self.device, self.use_upstream_code,
                                      self.network)
        return self._model

    def reset(self, instruction: str = "", goal_image: np.ndarray | None = None) -> None:
        self.history[:] = 0
        self.steps = 0
        self.goal_mask = None
        self._raw_goal = None if goal_image is None else np.asarray(goal_image)
        self.goal_image = None if goal_image is None else prepare_image(goal_image, self.size, self.swap_rb)
        self.last_info = {}

    def set_goal(self, goal_image: np.ndarray, goal_mask: np.ndarray) -> None:
        """Upstream's ``reset(goal_image, goal_mask)``: the goal view and its goal pixels."""
        self.goal_image = prepare_image(goal_image, self.size, self.swap_rb)
        self.goal_mask = prepare_goal_mask(goal_mask, self.size, self.goal_box_half)

    def _goal_from(self, obs: PolicyObservation) -> None:
        mask = obs.goal_mask if obs.goal_mask is not None else obs.extras.get("goal_mask")
        if obs.goal_image is not None and mask is not None:
            same = self._raw_goal is not None and self._raw_goal is obs.goal_image
            if self.goal_mask is None or not same:
                self._raw_goal = obs.goal_image
                self.set_goal(obs.goal_image, mask)
        elif mask is not None and self.goal_mask is None:
            if self.goal_image is None:  # the goal is marked in the current view
                self.goal_image = prepare_image(obs.rgb, self.size, self.swap_rb)
            self.goal_mask = prepare_goal_mask(mask, self.size, self.goal_box_half)
        if self.goal_image is None or self.goal_mask is None:
            raise ValueError("PixNav needs a goal image and goal mask (PolicyObservation.goal_image / goal_mask)")

    def network_inputs(self, obs: PolicyObservation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Store the frame in the history and return (goal_mask (1,H,W,1), goal_image (1,H,W,3),
        episode_image (1,T,H,W,3)) as upstream passes them to the network."""
        self._goal_from(obs)
        assert self.goal_mask is not None and self.goal_image is not None  # _goal_from raises otherwise
        self.history[self.steps] = prepare_image(obs.rgb, self.size, self.swap_rb)
        frames = self.history[: self.steps + 1] if self.truncate_history else self.history
        return self.goal_mask[None, :, :, None], self.goal_image[None], frames[None]

    def act(self, obs: PolicyObservation) -> list[Command]:
        import torch

        if self.steps >= self.max_token_length:
            self.last_info = {"reason": "history full"}
            return [DiscreteMove(Move.STOP)]
        model = self._ensure_model()
        goal_mask, goal_image, episode = self.network_inputs(obs)
        with torch.no_grad():
            action_pred, distance_pred, goal_pred = model(goal_mask, goal_image, episode)
        t = self.steps
        logits = action_pred[0][t].detach().cpu().numpy()
        move = decode_action(logits, bool(obs.extras.get("collided", False)))
        goal_yx = goal_pred[0][t].detach().cpu().numpy()
        self.last_info = {"logits": logits, "distance": float(distance_pred[0][t].detach().cpu().numpy()[0]),
                          "pixel_goal_yx": goal_yx, "step": t}
        self.steps += 1
        if self.early_stop_steps is not None and self.steps > self.early_stop_steps:
            move = Move.STOP
            self.last_info["reason"] = "early stop"
        return [DiscreteMove(move)]

    def close(self) -> None:
        self._model = None
