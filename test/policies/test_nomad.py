"""NoMaD wrapper: preprocessing, context, goal masking, DDPM sampling and waypoint decoding."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from homiebot.policies.base import DiscreteMove, Move, PolicyObservation, Velocity, Waypoints
from homiebot.policies.nomad import (
    ACTION_STATS,
    DDPMSampler,
    NoMaDPolicy,
    TopoMap,
    deltas_to_waypoints,
    localize,
    pd_controller,
    squaredcos_cap_v2_betas,
    transform_image,
    unnormalize_data,
)


class FakeNoMaD(torch.nn.Module):
    """Upstream's ``model(func_name, **kwargs)`` interface. The noise prediction is chosen so that every
    denoising step predicts x0 = ``target``; the final DDPM step then returns exactly ``target``."""

    def __init__(self, target: np.ndarray, num_iters: int = 10, enc: int = 16) -> None:
        super().__init__()
        self.target = torch.tensor(target, dtype=torch.float32)
        self.alphas_cumprod = torch.cumprod(1 - torch.tensor(squaredcos_cap_v2_betas(num_iters), dtype=torch.float32), 0)
        self.enc = enc
        self.calls: list[tuple[str, dict]] = []
        self.dist_pred_net = torch.nn.Linear(enc, 1)

    def forward(self, func_name: str, **kw):
        self.calls.append((func_name, kw))
        if func_name == "vision_encoder":
            return torch.ones(kw["obs_img"].shape[0], self.enc)
        if func_name == "noise_pred_net":
            a = self.alphas_cumprod[int(kw["timestep"])]
            return (kw["sample"] - a.sqrt() * self.target) / (1 - a).sqrt()
        if func_name == "dist_pred_net":
            return torch.full((kw["obsgoal_cond"].shape[0], 1), 4.0)
        raise NotImplementedError


def frame(value: int, size: int = 96) -> np.ndarray:
    return np.full((size, size, 3), value, np.uint8)


def test_transform_image_imagenet_normalisation():
    img = np.zeros((120, 160, 3), np.uint8)
    img[..., 0] = 255
    out = transform_image(img, (96, 96))
    assert out.shape == (3, 96, 96) and out.dtype == np.float32
    assert out[0, 10, 10] == pytest.approx((1 - 0.485) / 0.229, abs=1e-5)
    assert out[1, 10, 10] == pytest.approx((0 - 0.456) / 0.224, abs=1e-5)


def test_unnormalise_and_cumulative_sum():
    assert unnormalize_data(np.array([-1.0, 1.0]), {"min": [-2.5, -4], "max": [5, 4]}).tolist() == [-2.5, 4.0]
    deltas = np.zeros((1, 8, 2))  # the middle of the range: (1.25, 0) per step
    wp = deltas_to_waypoints(deltas.reshape(1, 16), ACTION_STATS)
    assert wp.shape == (1, 8, 2)
    np.testing.assert_allclose(wp[0, :, 0], 1.25 * np.arange(1, 9))
    np.testing.assert_allclose(wp[0, :, 1], 0.0)


def test_ddpm_sampler_schedule_and_deterministic_last_step():
    s = DDPMSampler(10)
    s.set_timesteps(10)
    assert s.timesteps.tolist() == list(range(9, -1, -1))
    betas = squaredcos_cap_v2_betas(10)
    ab = lambda t: math.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2  # noqa: E731
    assert betas[0] == pytest.approx(1 - ab(0.1) / ab(0.0))
    x = torch.full((1, 8, 2), 0.3)
    a0 = s.alphas_cumprod[0]
    eps = (x - a0.sqrt() * 0.5) / (1 - a0).sqrt()  # x0 = 0.5
    np.testing.assert_allclose(s.step(eps, 0, x).prev_sample.numpy(), 0.5, atol=1e-5)


def test_ddpm_sampler_matches_diffusers_when_installed():
    diffusers = pytest.importorskip("diffusers")
    ref = diffusers.DDPMScheduler(num_train_timesteps=10, beta_schedule="squaredcos_cap_v2", clip_sample=True,
                                  prediction_type="epsilon")
    ours = DDPMSampler(10)
    np.testing.assert_allclose(ours.alphas_cumprod.numpy(), ref.alphas_cumprod.numpy(), rtol=1e-5)


def make_policy(target=None, **kw) -> tuple[NoMaDPolicy, FakeNoMaD]:
    target = np.zeros((8, 2)) if target is None else target
    fake = FakeNoMaD(target)
    pol = NoMaDPolicy(model=fake, num_samples=2, prefer_diffusers=False, **kw)
    return pol, fake


def test_act_exploration_decodes_metric_waypoints():
    pol, fake = make_policy(controller="waypoints", context_pad="repeat")
    pol.reset()
    cmds = pol.act(PolicyObservation(rgb=frame(100)))
    assert len(cmds) == 1 and isinstance(cmds[0], Waypoints)
    pts = cmds[0].points
    assert pts.shape == (8, 2)
    # (1.25 units per step) x (0.2 m/s / 4 Hz) = 0.0625 m per waypoint, straight ahead
    np.testing.assert_allclose(pts[:, 0], 0.0625 * np.arange(1, 9), atol=1e-5)
    np.testing.assert_allclose(pts[:, 1], 0.0, atol=1e-5)
    enc = [kw for name, kw in fake.calls if name == "vision_encoder"][0]
    assert tuple(enc["obs_img"].shape) == (1, 12, 96, 96)
    assert enc["input_goal_mask"].tolist() == [1]  # exploration: goal masked
    noise_calls = [kw for name, kw in fake.calls if name == "noise_pred_net"]
    assert len(noise_calls) == 10 and tuple(noise_calls[0]["sample"].shape) == (2, 8, 2)
    assert not pol.last_info["goal_conditioned"]


def test_goal_conditioned_mask_zero_and_left_turn():
    target = np.zeros((8, 2))
    target[:, 1] = 0.5  # dy = 0.5 normalised -> +2 units each step (left)
    pol, fake = make_policy(target, waypoint_scale=0.25, controller="waypoints", context_pad="repeat")
    pol.reset(goal_image=frame(50))
    pts = pol.act(PolicyObservation(rgb=frame(100)))[0].points
    enc = [kw for name, kw in fake.calls if name == "vision_encoder"][0]
    assert enc["input_goal_mask"].tolist() == [0]
    assert tuple(enc["goal_img"].shape) == (1, 3, 96, 96)
    np.testing.assert_allclose(pts[:, 1], 0.25 * 2.0 * np.arange(1, 9), atol=1e-5)
    assert pol.last_info["temporal_distance"] == 4.0


def test_context_window_oldest_first_and_reset():
    pol, fake = make_policy(context_pad="repeat")
    pol.reset()
    for v in (10, 20, 30, 40, 50):
        pol.act(PolicyObservation(rgb=frame(v)))
    obs_imgs = [kw["obs_img"] for name, kw in fake.calls if name == "vision_encoder"]
    first, last = obs_imgs[0], obs_imgs[-1]
    # first step: the first frame repeated 4 times
    assert torch.allclose(first[0, 0], first[0, 9])
    # last step: frames 20, 30, 40, 50 oldest first (channel 0 of each frame)
    expected = [(v / 255 - 0.485) / 0.229 for v in (20, 30, 40, 50)]
    got = [float(last[0, 3 * i, 0, 0]) for i in range(4)]
    np.testing.assert_allclose(got, expected, atol=1e-4)
    pol.reset()
    assert len(pol.context.frames) == 0


def test_waits_for_its_context_by_default():
    pol, fake = make_policy()  # upstream: no command until context_size + 1 = 4 frames arrived
    pol.reset()
    outs = [pol.act(PolicyObservation(rgb=frame(v))) for v in (10, 20, 30, 40, 50)]
    assert [len(o) for o in outs] == [0, 0, 0, 1, 1]
    assert pol.last_info["waypoint_index"] == 2
    first = [kw["obs_img"] for name, kw in fake.calls if name == "vision_encoder"][0]
    got = [float(first[0, 3 * i, 0, 0]) for i in range(4)]  # four real frames, no copies of the first
    np.testing.assert_allclose(got, [(v / 255 - 0.485) / 0.229 for v in (10, 20, 30, 40)], atol=1e-4)
    pol.reset()
    assert pol.act(PolicyObservation(rgb=frame(0))) == []


def test_availability_names_missing_code_and_checkpoint(tmp_path):
    pol = NoMaDPolicy(checkpoint=str(tmp_path / "nomad.pth"), config=str(tmp_path / "nomad.yaml"))
    msg = pol.availability()
    assert msg is not None and msg.startswith("NoMaD unavailable:")
    assert "Python module 'vint_train' is not installed" in msg
    assert "pip install -e visualnav-transformer/train/" in msg
    assert "git clone https://github.com/real-stanford/diffusion_policy.git" in msg
    assert f"checkpoint not found at {tmp_path / 'nomad.pth'}" in msg
    assert "Pre-Trained Models" in msg
    assert "no checkpoint path is configured" in NoMaDPolicy().availability()
    with pytest.raises(RuntimeError, match="NoMaD unavailable"):
        pol.act(PolicyObservation(rgb=frame(0)))


def test_upstream_config_sets_image_size_and_context(tmp_path):
    cfg = tmp_path / "nomad.yaml"
    cfg.write_text("context_size: 2\nimage_size: [64, 48]\nlen_traj_pred: 8\nnum_diffusion_iters: 10\n")
    pol = NoMaDPolicy(config=str(cfg), model=FakeNoMaD(np.zeros((8, 2))), num_samples=1, prefer_diffusers=False,
                      context_pad="repeat")
    assert pol.image_size == (48, 64) and pol.context.length == 3
    pol.reset()
    pol.act(PolicyObservation(rgb=frame(10, 100)))
    enc = [kw for name, kw in pol._model.calls if name == "vision_encoder"][0]
    assert tuple(enc["obs_img"].shape) == (1, 9, 48, 64)


# ---- upstream's controller and topological map ------------------------------------------------------

def test_pd_controller_as_upstream():
    dt = 0.25
    assert pd_controller(np.array([0.1, 0.0]), dt) == (0.2, 0.0)  # 0.4 m/s wanted, 0.2 m/s allowed
    v, w = pd_controller(np.array([0.02, 0.01]), dt, max_w=10.0)
    assert v == pytest.approx(0.08) and w == pytest.approx(math.atan(0.5) / dt)
    assert pd_controller(np.array([0.02, 0.02]), dt) == (pytest.approx(0.08), 0.4)  # w clipped to max_w
    assert pd_controller(np.array([-0.1, 0.05]), dt)[0] == 0.0  # never backwards
    assert pd_controller(np.array([0.0, -0.1]), dt, max_w=100.0) == (0.0, pytest.approx(-math.pi / (2 * dt)))
    v, w = pd_controller(np.array([0.0, 0.0, 0.0, 1.0]), dt, max_w=100.0)  # heading only: turn towards it
    assert v == 0.0 and w == pytest.approx(math.pi / 2 / dt)
    with pytest.raises(ValueError):
        pd_controller(np.zeros(3), dt)


def turning_target() -> np.ndarray:
    target = np.zeros((8, 2))  # dx 1.25 units per step; a +2 unit step to the left at the third waypoint
    target[2, 1] = 0.5
    return target


def test_policy_drives_to_waypoint_two_with_the_pd_controller():
    pol, _ = make_policy(turning_target(), context_pad="repeat", max_w=100.0)
    pol.reset()
    (cmd,) = pol.act(PolicyObservation(rgb=frame(100)))
    assert isinstance(cmd, Velocity)
    wp = pol.last_info["waypoint_m"]  # waypoint 2: (3 * 1.25, 2) units of 0.05 m
    np.testing.assert_allclose(wp, [0.1875, 0.1], atol=1e-5)
    assert cmd.linear == pytest.approx(0.2)  # 0.75 m/s asked, upstream's max_v
    assert cmd.angular == pytest.approx(math.atan(2 / 3.75) * 4.0, rel=1e-4)  # waypoint 7 would give atan(2/10)*4
    assert pol.last_info["waypoint_index"] == 2


def test_nomad_skill_replans_each_step_and_never_exceeds_0_2_m_s():
    from homiebot.core.contracts import Action, Subtask
    from homiebot.skills.base import SkillContext
    from homiebot.skills.policy_skill import PolicySkill
    from test.fakes import PlanarWorld

    pol, fake = make_policy()
    world = PlanarWorld()
    skill = PolicySkill("NoMaD", policy=pol, check="robot_signals", max_steps=60)
    assert skill.rate_hz == 4.0
    res = skill.run(Subtask(action=Action.GO_TO, target="marker"), world, SkillContext(0, 1, 1, 1))
    assert res.success, res.message
    drives = world.own_robot().commands
    assert drives and all(0.0 <= v <= 0.2 + 1e-9 and d == 0.25 for _, v, _, d in drives)
    assert res.stats["steps"] == len(drives)
    encodes = [kw for name, kw in fake.calls if name == "vision_encoder"]
    assert len(encodes) == len(drives)  # one new plan per command
    assert tuple(encodes[0]["obs_img"].shape) == (1, 12, 96, 96)


class TopoNet(FakeNoMaD):
    """Stand-in network: the predicted distance is how far the newest frame's brightness is from the goal's
    (in node spacings of 50 grey levels); the condition carries it so the chosen subgoal is visible."""

    def forward(self, func_name: str, **kw):
        if func_name == "vision_encoder":
            self.calls.append((func_name, kw))
            newest = kw["obs_img"][:, -3, 0, 0]
            goal = kw["goal_img"][:, 0, 0, 0]
            d = (newest - goal).abs() * 0.229 * 255 / 50
            cond = torch.zeros(len(d), self.enc)
            cond[:, 0] = d
            cond[:, 1] = goal
            return cond
        if func_name == "dist_pred_net":
            self.calls.append((func_name, kw))
            return kw["obsgoal_cond"][:, :1]
        return super().forward(func_name, **kw)


def test_topological_map_picks_the_subgoal_with_the_smallest_predicted_distance(tmp_path):
    levels = [0, 50, 100, 150, 200, 250, 30, 80]
    TopoMap([frame(v) for v in levels]).save(tmp_path / "topomap")
    net = TopoNet(np.zeros((8, 2)))
    pol = NoMaDPolicy(model=net, num_samples=1, prefer_diffusers=False, context_pad="repeat",
                      topomap=str(tmp_path / "topomap"), close_threshold=0.2)
    pol.reset()
    (cmd,) = pol.act(PolicyObservation(rgb=frame(150)))
    info = pol.last_info
    assert len(info["node_distances"]) == 6  # nodes 0..5: within radius 4 of node 0, as upstream
    assert info["closest_node"] == 3 and info["subgoal_node"] == 4  # at node 3 (distance 0 < 0.2): go on to 4
    cond = [kw["global_cond"] for name, kw in net.calls if name == "noise_pred_net"][0]
    assert float(cond[0, 1]) == pytest.approx((200 / 255 - 0.485) / 0.229, abs=1e-4)  # node 4's goal image
    assert isinstance(cmd, Velocity)
    # 120 grey: nearest node 2 (100) at 0.4 spacings, not close enough to move on; the window is now nodes 0..7
    (cmd,) = pol.act(PolicyObservation(rgb=frame(120)))
    assert pol.last_info["closest_node"] == 2 and pol.last_info["subgoal_node"] == 2
    assert len(pol.last_info["node_distances"]) == 8
    # at the goal node: stop as upstream's reached_goal does
    pol.reset()
    pol.closest_node = 6
    (cmd,) = pol.act(PolicyObservation(rgb=frame(80)))
    assert pol.last_info["closest_node"] == 7 and cmd == DiscreteMove(Move.STOP)


def test_topomap_builders_and_errors(tmp_path):
    frames = [frame(v) for v in range(7)]
    assert [int(im[0, 0, 0]) for im in TopoMap.from_frames(frames, every=3).images] == [0, 3, 6]
    assert [int(im[0, 0, 0]) for im in TopoMap.from_frames(frames[:6], every=4).images] == [0, 4, 5]
    views = TopoMap.from_views(lambda pose: frame(int(pose[0])), [(1, 0, 0), (2, 0, 0)])
    assert len(views) == 2 and int(views.images[1][0, 0, 0]) == 2
    with pytest.raises(FileNotFoundError):
        TopoMap.from_directory(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="numbered images"):
        TopoMap.from_directory(tmp_path / "empty")
    with pytest.raises(ValueError):
        TopoMap([])
    pol = NoMaDPolicy(model=TopoNet(np.zeros((8, 2))), topomap=TopoMap(frames[:2]), goal_node=5)
    with pytest.raises(ValueError, match="outside the topological map"):
        _ = pol.goal_node
    assert localize(np.array([5.0, 2.0, 0.5]), 3, 3.0) == (5, 2)  # last node: no further subgoal
