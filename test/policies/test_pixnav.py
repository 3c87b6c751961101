"""PixNav wrapper: goal mask, colour order, history, action decoding, and a tiny real network."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from homiebot.policies.base import DiscreteMove, Move, PolicyObservation
from homiebot.policies.pixnav import (
    PixNavPolicy,
    build_pixnav_network,
    decode_action,
    goal_box_mask,
    mask_box_center,
    prepare_goal_mask,
    prepare_image,
)


class FakePixNav:
    """Upstream's ``forward(goal_mask, goal_image, episode_image)``; the logits at every slot are
    ``logits``; it records what it was given."""

    def __init__(self, logits) -> None:
        self.logits = torch.tensor(logits, dtype=torch.float32)
        self.inputs: list[tuple] = []

    def __call__(self, goal_mask, goal_image, episode_image):
        self.inputs.append((goal_mask, goal_image, episode_image))
        t = episode_image.shape[1]
        return (self.logits.expand(1, t, 6), torch.full((1, t, 1), 0.3), torch.full((1, t, 2), 0.5))


def test_goal_box_mask_is_upstream_square():
    m = goal_box_mask((100, 120), (50, 40), half=8)
    ys, xs = np.nonzero(m)
    assert (xs.min(), xs.max(), ys.min(), ys.max()) == (42, 58, 32, 48)
    assert m.max() == 255 and m.dtype == np.uint8
    detection = np.zeros((100, 120), bool)
    detection[30:51, 20:61] = True
    assert mask_box_center(detection) == (40, 40)
    assert mask_box_center(np.zeros((4, 4), bool)) is None


def test_prepare_goal_mask_resizes_bilinearly():
    full = np.zeros((448, 448), bool)
    full[100:300, 100:300] = True
    out = prepare_goal_mask(full, 224, box_half=None)
    assert out.shape == (224, 224) and out[100, 100] == 255 and out[10, 10] == 0
    boxed = prepare_goal_mask(full, 224, box_half=8)
    # the square of 17 px around (199, 199) at half resolution: ~8 px, with soft (bilinear) edges
    assert boxed[99, 99] == 255 and boxed[50, 50] == 0
    assert set(np.unique(boxed)) - {0, 255}, "bilinear resize leaves intermediate values at the edges"


def test_prepare_image_swaps_channels_and_keeps_uint8():
    img = np.zeros((10, 10, 3), np.uint8)
    img[..., 0] = 200  # red
    out = prepare_image(img, 20, swap_rb=True)
    assert out.shape == (20, 20, 3) and out.dtype == np.uint8
    assert out[5, 5].tolist() == [0, 0, 200]
    assert prepare_image(img, 20, swap_rb=False)[5, 5].tolist() == [200, 0, 0]


def test_decode_action_order_and_collision_rule():
    assert decode_action([0, 5, 1, 1, 1, 1]) is Move.FORWARD
    assert decode_action([0, 0, 0, 0, 0, 9]) is Move.LOOK_DOWN
    # after a collision the forward logit becomes -1 (not -inf): the next best wins
    assert decode_action([-3, 5, -2, 0.5, -4, -4], collided=True) is Move.TURN_RIGHT
    # upstream quirk kept: if every other logit is below -1, forward still wins after a collision
    assert decode_action([-3, 5, -2, -2, -4, -4], collided=True) is Move.FORWARD
    assert decode_action([-3, 5, -0.5, -2, -4, -4], collided=True) is Move.TURN_LEFT


def goal_obs(rgb_value: int = 80, **extras) -> PolicyObservation:
    goal = np.full((64, 64, 3), 30, np.uint8)
    mask = np.zeros((64, 64), bool)
    mask[10:20, 30:40] = True
    return PolicyObservation(rgb=np.full((64, 64, 3), rgb_value, np.uint8), goal_image=goal, goal_mask=mask, extras=extras)


def test_history_slots_early_stop_and_reset():
    fake = FakePixNav([0, 1, 0.5, 0, 0, 0])
    pol = PixNavPolicy(model=fake, image_size=32, max_token_length=8, early_stop_steps=3, truncate_history=False)
    pol.reset()
    moves = [pol.act(goal_obs(v))[0].move for v in (10, 20, 30, 40)]
    assert moves == [Move.FORWARD, Move.FORWARD, Move.FORWARD, Move.STOP]  # > 3 steps: early stop
    gm, gi, ep = fake.inputs[-1]
    assert gm.shape == (1, 32, 32, 1) and gi.shape == (1, 32, 32, 3) and ep.shape == (1, 8, 32, 32, 3)
    assert [int(ep[0, i, 0, 0, 0]) for i in range(8)] == [10, 20, 30, 40, 0, 0, 0, 0]
    assert pol.act(goal_obs(50, collided=True))[0].move is Move.STOP
    pol.reset()
    assert pol.steps == 0 and pol.history.max() == 0
    assert pol.act(goal_obs(60, collided=True))[0].move is Move.TURN_LEFT


def test_truncated_history_and_history_full():
    fake = FakePixNav([0, 1, 0, 0, 0, 0])
    pol = PixNavPolicy(model=fake, image_size=16, max_token_length=2, early_stop_steps=None)
    pol.reset()
    pol.act(goal_obs())
    assert fake.inputs[-1][2].shape == (1, 1, 16, 16, 3)
    pol.act(goal_obs())
    assert fake.inputs[-1][2].shape == (1, 2, 16, 16, 3)
    assert pol.act(goal_obs())[0] == DiscreteMove(Move.STOP)


def test_missing_goal_is_an_error():
    pol = PixNavPolicy(model=FakePixNav([1, 0, 0, 0, 0, 0]), image_size=16)
    pol.reset()
    with pytest.raises(ValueError, match="goal image and goal mask"):
        pol.act(PolicyObservation(rgb=np.zeros((16, 16, 3), np.uint8)))


def test_tiny_real_network_end_to_end_and_checkpoint_round_trip(tmp_path):
    torch.manual_seed(0)
    tiny = {"num_layers": 1, "dim_feedforward": 32}
    net = build_pixnav_network(max_token_length=4, **tiny)
    keys = net.state_dict().keys()
    assert "history_backbone.4.0.conv1.weight" in keys and "goal_backbone.0.weight" in keys
    assert net.state_dict()["goal_backbone.0.weight"].shape == (64, 4, 7, 7)
    ckpt = tmp_path / "navigator.ckpt"
    torch.save(net.state_dict(), ckpt)
    pol = PixNavPolicy(checkpoint=str(ckpt), image_size=32, max_token_length=4, network=tiny)
    assert pol.availability() is None
    pol.reset()
    cmd = pol.act(goal_obs())
    assert isinstance(cmd[0], DiscreteMove)
    assert pol.last_info["logits"].shape == (6,)
    # causal decoder: the truncated history gives the same logits as the zero-padded one
    full = PixNavPolicy(checkpoint=str(ckpt), image_size=32, max_token_length=4, truncate_history=False, network=tiny)
    full.reset()
    full.act(goal_obs())
    np.testing.assert_allclose(full.last_info["logits"], pol.last_info["logits"], atol=1e-4)


def test_availability_names_missing_checkpoint(tmp_path):
    msg = PixNavPolicy(checkpoint=str(tmp_path / "navigator.ckpt")).availability()
    assert msg == (f"PixNav unavailable: checkpoint not found at {tmp_path / 'navigator.ckpt'} (a PixelNav checkpoint "
                   "(Checkpoint_A/B/C) from the Pixel-Navigator README's 'Download the checkpoints' table (Google Drive); "
                   "set params.checkpoint).")
    up = PixNavPolicy(checkpoint=str(tmp_path / "x"), use_upstream_code=True).availability()
    assert "Python module 'policy_network' is not installed" in up
    assert "git clone https://github.com/wzcai99/Pixel-Navigator.git" in up
