"""RT-1-X wrapper: image preparation, policy state, instruction embedding, detokenisation, rescaling,
gripper and terminate conventions, for the tf_agents and the JAX runtimes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from homiebot.policies.base import EndEffectorDelta, PolicyObservation
from homiebot.policies.rt1x import (
    JaxRuntime,
    RT1XPolicy,
    TFSavedModelRuntime,
    decode_action,
    detokenize_action,
    one_hot,
    prepare_jax_image,
    prepare_tf_image,
)


class FakeTFPolicy:
    """tf_agents' policy interface: ``get_initial_state(batch_size)`` and ``action(time_step, state)``
    returning a PolicyStep-like object; the state counts the steps."""

    def __init__(self, action: dict) -> None:
        self.action_out = action
        self.seen: list[tuple] = []

    def get_initial_state(self, batch_size: int):
        return {"t": np.zeros(batch_size, np.int32)}

    def action(self, time_step, policy_state):
        self.seen.append((time_step, policy_state))
        return SimpleNamespace(action=self.action_out, state={"t": policy_state["t"] + 1})


class FakeTFRuntime(TFSavedModelRuntime):
    """The colab's runtime with the two tf_agents helpers replaced (tf_agents is not installed here)."""

    def _zero_observation(self) -> dict:
        return {"image": np.zeros((256, 320, 3), np.uint8), "natural_language_embedding": np.zeros(512, np.float32)}

    def _transition(self, observation: dict):
        return {"observation": observation, "reward": np.zeros((), np.float32)}


def model_action(wv=(0.0, 0.0, 0.0), rd=(0.0, 0.0, 0.0), g=0.0, term=(0, 1, 0)) -> dict:
    return {"world_vector": np.array(wv, np.float32), "rotation_delta": np.array(rd, np.float32),
            "gripper_closedness_action": np.array([g], np.float32), "terminate_episode": np.array(term, np.int32),
            "base_displacement_vertical_rotation": np.zeros(1, np.float32), "base_displacement_vector": np.zeros(2, np.float32)}


def fake_embed(texts):
    return np.stack([np.full(512, len(t), np.float32) for t in texts])


def test_prepare_tf_image_resize_with_pad():
    img = np.full((480, 640, 3), 200, np.uint8)  # 4:3 into 256x320 (5:4): scaled to 240x320, padded top/bottom
    out = prepare_tf_image(img)
    assert out.shape == (256, 320, 3) and out.dtype == np.uint8
    assert out[0].max() == 0 and out[7].max() == 0 and out[8, 0, 0] == 200 and out[247, 319, 0] == 200
    assert out[248].max() == 0
    square = prepare_tf_image(np.full((100, 100, 3), 9, np.uint8))  # 256x256 centred: 32 px each side
    assert square[:, :32].max() == 0 and square[:, 32:288].min() == 9 and square[:, 288:].max() == 0


def test_prepare_jax_image_scales_to_unit_range():
    out = prepare_jax_image(np.full((64, 80, 3), 255, np.uint8))
    assert out.shape == (300, 300, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out, 1.0)


def test_detokenize_matches_rt1_bins():
    tokens = np.array([[0, 0, 511, 255, 0, 511, 255, 511, 0, 0, 511]])
    a = detokenize_action(tokens, 512, (-2.0, 2.0))
    assert a["terminate_episode"].tolist() == [[1, 0, 0]]
    np.testing.assert_allclose(a["world_vector"][0], [-2.0, 2.0, -2.0 + 4 * 255 / 511], atol=1e-6)
    np.testing.assert_allclose(a["rotation_delta"][0, :2], [-np.pi / 2, np.pi / 2], rtol=1e-6)
    assert a["gripper_closedness_action"][0, 0] == pytest.approx(1.0)
    np.testing.assert_allclose(a["base_displacement_vector"][0], [-1.0, 1.0])


def test_decode_bridge_units_gripper_and_terminate():
    eye, one = np.eye(3), np.ones(3)
    cmd = decode_action(model_action(wv=(1.75, -1.75, 0.35), rd=(1.4, 0, -0.7), g=1.0), eye,
                        np.full(3, 0.05 / 1.75), np.full(3, 0.25 / 1.4))
    np.testing.assert_allclose(cmd.translation, [0.05, -0.05, 0.01])
    np.testing.assert_allclose(cmd.rotation, [0.25, 0.0, -0.125])
    assert cmd.gripper == 1.0 and not cmd.terminate
    assert decode_action(model_action(g=-1.0), eye, one, one).gripper == 0.0
    assert decode_action(model_action(g=0.0), eye, one, one).gripper == 0.5
    assert decode_action(model_action(term=(1, 0, 0)), eye, one, one).terminate
    assert not decode_action(model_action(term=(0, 0, 0)), eye, one, one).terminate
    # relative gripper: keep the previous state unless the command is decisive
    assert decode_action(model_action(g=0.1), eye, one, one, "relative", previous_closedness=1.0).gripper == 1.0
    assert decode_action(model_action(g=-0.9), eye, one, one, "relative", previous_closedness=1.0).gripper == 0.0


def test_tf_runtime_threads_policy_state_and_resets():
    fake = FakeTFPolicy(model_action(wv=(1.75, 0, 0), g=1.0))
    pol = RT1XPolicy(runtime=FakeTFRuntime(None, policy=fake), embedder=fake_embed)
    assert pol.availability() is None
    pol.reset("pick coke can")
    cmds = [pol.act(PolicyObservation(rgb=np.full((480, 640, 3), 50, np.uint8))) for _ in range(3)]
    assert all(len(c) == 1 and isinstance(c[0], EndEffectorDelta) for c in cmds)
    np.testing.assert_allclose(cmds[0][0].translation, [0.05, 0, 0])
    assert [int(s["t"][0]) for _, s in fake.seen] == [0, 1, 2]
    obs = fake.seen[0][0]["observation"]
    assert obs["image"].shape == (256, 320, 3) and obs["image"].dtype == np.uint8
    assert obs["natural_language_embedding"].shape == (512,) and obs["natural_language_embedding"][0] == len("pick coke can")
    pol.reset("open drawer")
    pol.act(PolicyObservation(rgb=np.zeros((256, 320, 3), np.uint8)))
    assert int(fake.seen[-1][1]["t"][0]) == 0
    assert fake.seen[-1][0]["observation"]["natural_language_embedding"][0] == len("open drawer")


def test_jax_runtime_history_logits_and_fallback():
    seqlen, n_img, n_act, vocab = 3, 4, 11, 8
    seen = []

    def apply_fn(observation, rng):
        seen.append(observation)
        logits = np.zeros((1, seqlen * (n_img + n_act), vocab), np.float32)
        per_step = logits.reshape(1, seqlen, n_img + n_act, vocab)
        tokens = [1, 7, 0, 0, 0, 0, 0, 7, 0, 0, 0]  # continue, +x, closing
        for i, tok in enumerate(tokens):
            per_step[0, -1, n_img - 1 + i, tok] = 5.0
        return per_step.reshape(1, -1, vocab)

    runtime = JaxRuntime(None, seqlen=seqlen, model_kwargs={"num_image_tokens": n_img, "vocab_size": vocab},
                         apply_fn=apply_fn)
    pol = RT1XPolicy(backend="jax", runtime=runtime, embedder=fake_embed, profile="fractal", jax_image_size=32)
    pol.reset("close the drawer")
    cmd = pol.act(PolicyObservation(rgb=np.full((40, 40, 3), 255, np.uint8)))[0]
    np.testing.assert_allclose(cmd.translation, [2.0, -2.0, -2.0])
    assert cmd.gripper == 1.0 and not cmd.terminate
    assert seen[0]["image"].shape == (3, 32, 32, 3) and seen[0]["natural_language_embedding"].shape == (3, 512)
    pol.act(PolicyObservation(rgb=np.zeros((40, 40, 3), np.uint8)))
    assert seen[1]["image"][-1].max() == 0 and seen[1]["image"][0].min() == 1.0  # newest last


def test_availability_hints(tmp_path):
    msg = RT1XPolicy(checkpoint=str(tmp_path / "rt_1_x_tf_trained_for_002272480_step")).availability()
    assert msg.startswith("RT-1-X unavailable:")
    assert "Python module 'tensorflow' is not installed (install: pip install tensorflow==2.15.0 tf-agents==0.19.0" in msg
    assert "Python module 'tf_agents' is not installed" in msg
    assert f"checkpoint not found at {tmp_path / 'rt_1_x_tf_trained_for_002272480_step'}" in msg
    assert "no sentence encoder path is configured" in msg and "universal-sentence-encoder-large/5" in msg
    jmsg = RT1XPolicy(backend="jax", embedder=fake_embed).availability()
    assert "Python module 'jax' is not installed" in jmsg and "rt_1_x_jax" in jmsg
    assert "no RT-1 code (rt1.py) path is configured" in jmsg
    with pytest.raises(RuntimeError, match="RT-1-X unavailable"):
        RT1XPolicy(embedder=fake_embed).act(PolicyObservation(rgb=np.zeros((8, 8, 3), np.uint8)))


def test_learned_policy_registry():
    from homiebot.policies.learned import LEARNED_POLICIES

    assert sorted(LEARNED_POLICIES) == ["nomad", "octo", "pixnav", "rt1x"]
    assert {name: cls.family for name, cls in LEARNED_POLICIES.items()} == {n: n for n in LEARNED_POLICIES}
    assert LEARNED_POLICIES["rt1x"].image_size == (256, 320) and LEARNED_POLICIES["nomad"].image_size == (96, 96)


def test_invalid_terminate_token_gives_zeros_and_falls_back_to_base_mode():
    """Upstream one-hot encodes the terminate token with ``jax.nn.one_hot``: a token outside 0..2 (the
    network may emit any of its 512) gives all zeros, which ``rt1_inference_example`` replaces by the
    base mode [0, 0, 1]. The tokens here are what the network argmaxes, not a constructed action."""
    tokens = np.array([[7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [300, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]])
    assert detokenize_action(tokens, 512)["terminate_episode"].tolist() == [[0, 0, 0], [0, 0, 0], [0, 0, 1]]
    assert one_hot(np.array([-1, 3, 0]), 3).tolist() == [[0, 0, 0], [0, 0, 0], [1, 0, 0]]

    seqlen, n_img, n_act, vocab = 2, 4, 11, 16

    def apply_fn(observation, rng):
        per_step = np.zeros((1, seqlen, n_img + n_act, vocab), np.float32)
        for i, tok in enumerate([9, 15, 0, 0, 0, 0, 0, 15, 0, 0, 0]):  # terminate slot: token 9, invalid
            per_step[0, -1, n_img - 1 + i, tok] = 5.0
        return per_step.reshape(1, -1, vocab)

    runtime = JaxRuntime(None, seqlen=seqlen, model_kwargs={"num_image_tokens": n_img, "vocab_size": vocab}, apply_fn=apply_fn)
    pol = RT1XPolicy(backend="jax", runtime=runtime, embedder=fake_embed, profile="fractal", jax_image_size=16)
    pol.reset("pick the cup")
    (cmd,) = pol.act(PolicyObservation(rgb=np.zeros((40, 40, 3), np.uint8)))
    assert pol.last_info["raw_action"]["terminate_episode"].tolist() == [0, 0, 1]  # the fallback
    assert not cmd.terminate and cmd.gripper == 1.0
    np.testing.assert_allclose(cmd.translation[0], 2.0)


def test_bridge_runs_at_5_hz_fractal_at_3():
    assert RT1XPolicy(embedder=fake_embed).rate_hz == 5.0
    assert RT1XPolicy(embedder=fake_embed, profile="fractal").rate_hz == 3.0
    assert RT1XPolicy(embedder=fake_embed, rate_hz=2.0).rate_hz == 2.0
