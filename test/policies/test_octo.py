"""Octo wrapper: image preparation, observation window and pad masks, tasks, unnormalisation,
ensembling / receding horizon and the gripper and frame conventions."""

from __future__ import annotations

import json
from collections import deque

import numpy as np
import pytest

from homiebot.policies.base import EndEffectorDelta, PolicyObservation
from homiebot.policies.octo import (
    ObservationWindow,
    OctoPolicy,
    action_to_command,
    octo_resize,
    select_statistics,
    temporal_ensemble,
    unnormalize_actions,
)

STATS = {"mean": np.array([0.01, -0.02, 0.0, 0.0, 0.0, 0.1, 0.5]),
         "std": np.array([0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 1.0]),
         "mask": np.array([True] * 6 + [False])}


class FakeOctoModel:
    """OctoModel's ``create_tasks`` / ``sample_actions`` signatures. The normalised chunk is
    ``normalised`` (horizon 4, dim 7); unnormalisation uses the upstream formula."""

    def __init__(self, normalised: np.ndarray, wrist: bool = False) -> None:
        self.normalised = normalised
        self.dataset_statistics = {"bridge_dataset": {"action": STATS}, "other": {"action": {"mean": np.zeros(7), "std": np.ones(7)}}}
        obs = {"image_primary": np.zeros((1, 2, 256, 256, 3), np.uint8), "timestep_pad_mask": np.ones((1, 2), bool)}
        if wrist:
            obs["image_wrist"] = np.zeros((1, 2, 128, 128, 3), np.uint8)
        self.example_batch = {"observation": obs}
        self.tasks: list[dict] = []
        self.calls: list[dict] = []

    def create_tasks(self, goals=None, texts=None):
        task = {"texts": texts, "goals": goals}
        self.tasks.append(task)
        return task

    def sample_actions(self, observations, tasks, unnormalization_statistics=None, timestep_pad_mask=None,
                       train=False, argmax=False, sample_shape=(), rng=None, temperature=1.0):
        self.calls.append({"obs": observations, "task": tasks, "stats": unnormalization_statistics,
                           "timestep_pad_mask": timestep_pad_mask})
        a = self.normalised[None]
        if unnormalization_statistics is not None:
            a = unnormalize_actions(a, unnormalization_statistics)
        return a


def frame(value: int, size: int = 64) -> np.ndarray:
    return np.full((size, size, 3), value, np.uint8)


def test_octo_resize_sizes_and_uniform_image():
    out = octo_resize(frame(77, 300), 256)
    assert out.shape == (256, 256, 3) and out.dtype == np.uint8
    assert np.all(out == 77)
    grad = np.tile(np.linspace(0, 255, 256).astype(np.uint8)[None, :, None], (256, 1, 3))
    cropped = octo_resize(grad, 256, average_crop=True)
    plain = octo_resize(grad, 256, average_crop=False)
    # the average crop zooms in on the centre: the left edge becomes brighter, the right darker
    assert cropped[128, 0, 0] > plain[128, 0, 0] + 3 and cropped[128, 255, 0] < plain[128, 255, 0] - 3


def test_window_pad_mask_like_history_wrapper():
    w = ObservationWindow(2)
    first = w.push({"image_primary": frame(1)})
    assert first["image_primary"].shape == (2, 64, 64, 3)
    assert first["timestep_pad_mask"].tolist() == [False, True]
    assert first["image_primary"][0, 0, 0, 0] == 1 and first["image_primary"][1, 0, 0, 0] == 1
    second = w.push({"image_primary": frame(2)})
    assert second["timestep_pad_mask"].tolist() == [True, True]
    assert [second["image_primary"][i, 0, 0, 0] for i in range(2)] == [1, 2]
    w.reset()
    assert w.push({"image_primary": frame(3)})["timestep_pad_mask"].tolist() == [False, True]


def test_unnormalize_normal_mask_and_bounds():
    a = np.array([[1.0, 0, 0, 0, 0, 0, 0.8]])
    out = unnormalize_actions(a, STATS)
    np.testing.assert_allclose(out[0, :6], [0.11, -0.02, 0, 0, 0, 0.1])
    assert out[0, 6] == 0.8  # gripper is not normalised
    b = unnormalize_actions(np.array([0.0, -1.0]), {"p01": np.array([0.0, -2.0]), "p99": np.array([2.0, 2.0])}, "bounds")
    np.testing.assert_allclose(b, [1.0, -2.0])


def test_select_statistics_layouts():
    assert select_statistics({"bridge_dataset": {"action": STATS}}, "bridge_dataset")["mean"][0] == 0.01
    assert select_statistics({"action": STATS}, None)["std"][0] == 0.1
    with pytest.raises(KeyError, match="available"):
        select_statistics({"a": {"action": STATS}}, "b")
    with pytest.raises(ValueError, match="several datasets"):
        select_statistics({"a": {"action": STATS}, "b": {"action": STATS}}, None)


def test_gripper_and_frame_conventions():
    a = np.array([0.01, 0.02, 0.03, 0.1, 0.2, 0.3, 0.2])  # open value 0.2 -> closing
    cmd = action_to_command(a, np.eye(3), np.ones(3), np.ones(3), binarize_gripper=0.5)
    assert cmd.gripper == 1.0 and not cmd.terminate
    assert action_to_command(a, np.eye(3), np.ones(3), np.ones(3), binarize_gripper=None).gripper == pytest.approx(0.8)
    # a model frame with x right, y forward -> homiebot x forward, y left
    rot = np.array([[0, 1, 0], [-1, 0, 0], [0, 0, 1]], float)
    cmd = action_to_command(a, rot, np.full(3, 2.0), np.ones(3))
    np.testing.assert_allclose(cmd.translation, [0.04, -0.02, 0.06])
    np.testing.assert_allclose(cmd.rotation, [0.2, -0.1, 0.3])


def test_temporal_ensemble_averages_predictions_for_now():
    c1 = np.arange(4 * 7, dtype=float).reshape(4, 7)
    c2 = c1 + 100
    out = temporal_ensemble(deque([c1, c2]), 0.0)
    np.testing.assert_allclose(out, (c1[1] + c2[0]) / 2)


def test_act_language_task_chunk_and_statistics():
    norm = np.zeros((4, 7))
    norm[:, 0] = 1.0
    norm[:, 6] = 1.0  # open
    model = FakeOctoModel(norm)
    pol = OctoPolicy(model=model, execution="rhc")
    pol.reset("put the can in the fridge")
    cmds = pol.act(PolicyObservation(rgb=frame(10, 300)))
    assert len(cmds) == 4 and all(isinstance(c, EndEffectorDelta) for c in cmds)
    np.testing.assert_allclose(cmds[0].translation, [0.11, -0.02, 0.0])
    np.testing.assert_allclose(cmds[0].rotation, [0.0, 0.0, 0.1])
    assert cmds[0].gripper == 0.0
    call = model.calls[0]
    assert model.tasks[0]["texts"] == ["put the can in the fridge"]
    assert call["stats"] is STATS or np.array_equal(call["stats"]["mean"], STATS["mean"])
    assert call["obs"]["image_primary"].shape == (1, 2, 256, 256, 3)
    assert call["obs"]["image_primary"].dtype == np.uint8
    assert call["timestep_pad_mask"].tolist() == [[False, True]]
    assert "image_wrist" not in call["obs"]
    pol.act(PolicyObservation(rgb=frame(20, 300)))
    assert model.calls[1]["timestep_pad_mask"].tolist() == [[True, True]]
    assert len(model.tasks) == 1  # the task is made once per subtask
    pol.reset("open the drawer")
    pol.act(PolicyObservation(rgb=frame(30, 300)))
    assert model.calls[2]["timestep_pad_mask"].tolist() == [[False, True]]
    assert model.tasks[-1]["texts"] == ["open the drawer"]


def test_ensemble_mode_one_command_and_wrist_padding():
    model = FakeOctoModel(np.zeros((4, 7)), wrist=True)
    pol = OctoPolicy(model=model, dataset="other")
    pol.reset("pick")
    assert len(pol.act(PolicyObservation(rgb=frame(10)))) == 1
    obs = model.calls[0]["obs"]
    assert obs["image_wrist"].shape == (1, 2, 128, 128, 3)
    assert obs["pad_mask_dict"]["image_wrist"].tolist() == [[False, False]]  # no wrist camera given
    pol.act(PolicyObservation(rgb=frame(10), extras={"wrist_rgb": frame(5)}))
    assert model.calls[1]["obs"]["pad_mask_dict"]["image_wrist"].tolist() == [[True, True]]


def test_goal_image_task_and_statistics_file(tmp_path):
    path = tmp_path / "dataset_statistics.json"
    path.write_text(json.dumps({"bridge_dataset": {"action": {k: v.tolist() for k, v in STATS.items()}}}))
    model = FakeOctoModel(np.zeros((4, 7)))
    pol = OctoPolicy(model=model, statistics=str(path), normalization_type="bounds")
    pol.reset(goal_image=frame(90, 100))
    with pytest.raises(KeyError):  # bounds statistics need p01/p99
        pol.act(PolicyObservation(rgb=frame(10)))
    assert model.tasks[0]["goals"]["image_primary"].shape == (1, 256, 256, 3)
    assert model.calls[0]["stats"] is None


def test_availability_names_octo_install_and_checkpoint(tmp_path):
    msg = OctoPolicy(checkpoint=str(tmp_path / "octo-small-1.5")).availability()
    assert msg.startswith("Octo unavailable:")
    assert "Python module 'octo' is not installed" in msg
    assert "git clone https://github.com/octo-models/octo.git && cd octo && pip install -e ." in msg
    assert "PyPI package named 'octo' is unrelated" in msg
    assert f"checkpoint not found at {tmp_path / 'octo-small-1.5'}" in msg
    (tmp_path / "ckpt").mkdir()
    assert f"checkpoint config.json not found at {tmp_path / 'ckpt' / 'config.json'}" in OctoPolicy(checkpoint=str(tmp_path / "ckpt")).availability()


def test_rotation_order_is_roll_pitch_yaw():
    """Octo's Bridge actions are differences of a POS_EULER state (xyz, roll, pitch, yaw): action[5] is a
    yaw delta, a turn about the base z axis; action[3] a roll about x."""
    yaw_only = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 1.0])
    np.testing.assert_allclose(action_to_command(yaw_only, np.eye(3), np.ones(3), np.ones(3)).rotation, [0.0, 0.0, 0.25])
    roll_only = np.array([0.0, 0.0, 0.0, -0.1, 0.0, 0.0, 1.0])
    np.testing.assert_allclose(action_to_command(roll_only, np.eye(3), np.ones(3), np.ones(3)).rotation, [-0.1, 0.0, 0.0])
