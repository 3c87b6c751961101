"""Training-camera specs by name, on served policies, and NoMaD's velocity command on the policy wire."""

from __future__ import annotations

import json

import numpy as np
import pytest

from homiebot.core.camera_geometry import TrainingCamera
from homiebot.policies.base import Velocity
from homiebot.policies.nomad import TopoMap
from homiebot.policies.training_cameras import (
    NOMAD_CAMERA,
    RT1X_BRIDGE_CAMERA,
    RT1X_FRACTAL_CAMERA,
    default_training_camera,
    training_camera,
    with_input_size,
)
from homiebot.policies.wire import WireError, decode_commands, encode_commands
from homiebot.ros.clients.remote_policy import RemotePolicy


def test_training_camera_by_name_fields_or_spec():
    assert training_camera("NoMaD") is NOMAD_CAMERA and training_camera("rt-1-x") is RT1X_BRIDGE_CAMERA
    assert training_camera(None) is None and training_camera(NOMAD_CAMERA) is NOMAD_CAMERA
    custom = training_camera({"height": 720, "width": 1280, "hfov_deg": 100, "input_size": [96, 96], "capture_size": [72, 128]})
    assert custom == TrainingCamera(720, 1280, 100.0, (96, 96), "squash", (72, 128))
    with pytest.raises(ValueError, match="unknown training camera 'fisheye'"):
        training_camera("fisheye")
    with pytest.raises(ValueError, match="needs height, width, hfov_deg and input_size"):
        training_camera({"height": 480})
    assert with_input_size(NOMAD_CAMERA, (64, 48)).input_size == (64, 48)


def test_a_served_policy_knows_its_camera_before_and_after_describe(monkeypatch):
    assert RemotePolicy("nomad").camera is NOMAD_CAMERA
    fractal = RemotePolicy("rt1x", {"profile": "fractal"})
    assert fractal.camera is RT1X_FRACTAL_CAMERA and fractal.rate_hz == 3.0
    assert RemotePolicy("rt1x").rate_hz == 5.0
    assert default_training_camera("expert", {}) is None
    msgs = pytest.importorskip("homiebot_msgs.srv", reason="the policy services are ROS 2 interfaces: make setup builds them")
    from homiebot.ros.messages.policy import camera_msg

    served = RemotePolicy("pixnav")
    reported = TrainingCamera(480, 640, 90.0, (224, 224), "squash", (120, 160))
    answer = msgs.DescribePolicy.Response(policy="pixnav", family="pixnav", kind="navigation", image_height=224, image_width=224,
                                          rate_hz=4.0, has_camera=True, camera=camera_msg(reported))
    monkeypatch.setattr(served, "_call", lambda *a, **k: answer)
    assert served.describe() == {"policy": "pixnav", "family": "pixnav", "kind": "navigation", "image_size": [224, 224],
                                 "rate_hz": 4.0, "availability": None}
    assert served.camera == reported


def test_velocity_round_trips_and_garbage_is_refused():
    back = decode_commands(json.loads(json.dumps(encode_commands([Velocity(0.2, -0.4)]))))
    assert back == [Velocity(0.2, -0.4)]
    with pytest.raises(WireError, match="bad command"):
        decode_commands([{"kind": "velocity", "linear": "fast", "angular": 0}])
    with pytest.raises(WireError, match="bad command"):
        decode_commands([{"kind": "velocity", "linear": float("nan"), "angular": 0}])


def test_topomap_from_a_recorded_exploration():
    frames = [np.full((4, 4, 3), i, np.uint8) for i in range(6)]
    poses = [(0.0, 0.0, 0.0), (0.4, 0.0, 0.0), (1.0, 0.0, 0.0), (1.2, 0.5, 0.0), (1.9, 0.2, 0.0), (2.0, 0.2, 0.0)]
    topo = TopoMap.from_recording(frames, poses, spacing=0.9)
    assert [int(im[0, 0, 0]) for im in topo.images] == [0, 2, 4, 5]
    with pytest.raises(ValueError, match="6 frames but 2 poses"):
        TopoMap.from_recording(frames, poses[:2])
