"""The cameras the supported low-level models were trained with (``homiebot.core.camera_geometry.TrainingCamera``).

* NoMaD: its datasets' frames are centre-cropped to 4:3 when processed (``IMAGE_ASPECT_RATIO = 4/3`` in
  ``vint_train/process_data``) and squashed to 96x96 by ``transform_images``; the cameras are wide-angle
  (the deployment README uses a 170 degree fisheye). A pinhole cannot show 170 degrees, so the spec is a
  120 degree pinhole: set ``hfov_deg`` to your training data's value if you know it.
* PixNav: Habitat's 640x480 RGB sensor at hfov 79, ``cv2.resize`` (squash) to 224x224.
* Octo (Bridge): BridgeData V2's 640x480 Logitech C920 frames (hfov about 70 degrees) squashed to
  256x256 by ``ResizeImageWrapper``.
* RT-1-X (Bridge profile): the same 4:3 frames, ``tf.image.resize_with_pad`` (letterbox) into 256x320.
  The fractal (RT-1) profile's frames are natively 256x320 (5:4).

``capture_size`` keeps the aspect at a resolution near the network input, so simulation renders no
more pixels than the model uses.
"""

from __future__ import annotations

from dataclasses import replace

from homiebot.core.camera_geometry import TrainingCamera

NOMAD_CAMERA = TrainingCamera(480, 640, 120.0, (96, 96), "squash", (96, 128),
                          "4:3 wide-angle frames (pinhole stand-in for the datasets' fisheye) squashed to 96x96")
PIXNAV_CAMERA = TrainingCamera(480, 640, 79.0, (224, 224), "squash", (240, 320),
                           "Habitat 640x480 at hfov 79 resized to 224x224")
OCTO_BRIDGE_CAMERA = TrainingCamera(480, 640, 70.0, (256, 256), "squash", (240, 320),
                                "BridgeData V2 640x480 (Logitech C920) squashed to 256x256")
RT1X_BRIDGE_CAMERA = TrainingCamera(480, 640, 70.0, (256, 320), "letterbox", (240, 320),
                                "4:3 Bridge frames letterboxed (resize_with_pad) into 256x320")
RT1X_FRACTAL_CAMERA = TrainingCamera(256, 320, 70.0, (256, 320), "letterbox", (256, 320),
                                 "RT-1 robot frames, natively 256x320")

TRAINING_CAMERAS: dict[str, TrainingCamera] = {
    "nomad": NOMAD_CAMERA,
    "pixnav": PIXNAV_CAMERA,
    "octo": OCTO_BRIDGE_CAMERA,
    "rt1x": RT1X_BRIDGE_CAMERA,
    "rt1x_fractal": RT1X_FRACTAL_CAMERA,
}


def training_camera(value: str | dict | TrainingCamera | None) -> TrainingCamera | None:
    """A ``TrainingCamera`` from a model family name (``nomad``, ``pixnav``, ``octo``, ``rt1x``,
    ``rt1x_fractal``), a mapping of ``TrainingCamera`` fields, or a spec; None stays None."""
    if value is None or isinstance(value, TrainingCamera):
        return value
    if isinstance(value, str):
        key = value.lower().replace("-", "")
        if key not in TRAINING_CAMERAS:
            raise ValueError(f"unknown training camera '{value}'; known: {sorted(TRAINING_CAMERAS)} (or give its fields)")
        return TRAINING_CAMERAS[key]
    try:
        return TrainingCamera.from_dict(dict(value))
    except (KeyError, TypeError) as err:
        raise ValueError(f"a training camera needs height, width, hfov_deg and input_size: {err}") from None


def default_training_camera(family: str, params: dict | None = None) -> TrainingCamera | None:
    """The training camera a wrapper of ``family`` built with ``params`` declares (for a policy served by
    another process, before the server describes it)."""
    params = params or {}
    if "camera" in params:
        return training_camera(params["camera"])
    if family == "rt1x" and params.get("profile") == "fractal":
        return RT1X_FRACTAL_CAMERA
    return TRAINING_CAMERAS.get(family)


def with_input_size(spec: TrainingCamera | None, size: tuple[int, int]) -> TrainingCamera | None:
    """``spec`` with the network input a wrapper was configured with (e.g. a non-default image size)."""
    if spec is None or tuple(spec.input_size) == tuple(size):
        return spec
    return replace(spec, input_size=(int(size[0]), int(size[1])))


__all__ = ["NOMAD_CAMERA", "OCTO_BRIDGE_CAMERA", "PIXNAV_CAMERA", "RT1X_BRIDGE_CAMERA", "RT1X_FRACTAL_CAMERA",
           "TRAINING_CAMERAS", "default_training_camera", "training_camera", "with_input_size"]
