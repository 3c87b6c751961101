"""What the world node and the mapper node exchange about the semantic map (``homiebot_msgs/srv/Map*``):
an observation with its images and camera rig, the floor plan, and the places exploration reads."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
from homiebot_msgs.msg import InstanceLabel, MapPlace, MapRoom, RoundObservation
from homiebot_msgs.srv import MapIntegrate
from sensor_msgs.msg import Image

from homiebot.core.contracts import VIEW_NAMES, Observation, ViewImage
from homiebot.core.map_access import MappedPlace
from homiebot.core.rooms import RoomPrior, rooms_from
from homiebot.perception.projection import CameraRig
from homiebot.ros.messages.common import IMAGE_KINDS, from_image, person_msg, to_image
from homiebot.ros.messages.poses import matrix_of_pose, matrix_pose_msg, planar_pose_msg
from homiebot.ros.messages.round import header, labels_of, people_of, pose_of

KINDS = tuple(IMAGE_KINDS)  # image, depth, segmentation: the order of each view's images in a request


def integrate_request(obs: Observation, rig: CameraRig, *, session: str, publish: bool, episode: int,
                      open_state: Mapping[int, bool], holding: bool, dynamic: Mapping[str, Any] | None) -> MapIntegrate.Request:
    """One observation for the mapper: its metadata, its images per view and kind, and the rig it was seen through."""
    images: list[Image] = []
    for view in VIEW_NAMES:
        img = obs.views[view]
        for kind, array in zip(KINDS, (img.rgb, img.depth, img.segmentation), strict=True):
            images.append(to_image(array, kind, 0, f"homiebot/{view}_camera") if array is not None else Image())
    meta = RoundObservation(header=header(0), round=int(obs.round), robot_pose=planar_pose_msg(obs.pose.x, obs.pose.y, obs.pose.yaw),
                            inventory=list(obs.inventory), people=[person_msg(p) for p in obs.people],
                            labels=[InstanceLabel(id=int(i), name=label.name, category=label.category) for i, label in obs.labels.items()])
    ids = sorted(open_state)
    return MapIntegrate.Request(
        session=session, publish=publish, episode=int(episode), observation=meta, images=images,
        intrinsics=[float(v) for v in rig.intrinsics],
        world_from_camera=[matrix_pose_msg(rig.pose(view)) for view in VIEW_NAMES],
        open_ids=[int(i) for i in ids], open=[bool(open_state[i]) for i in ids], holding=bool(holding),
        dynamic=json.dumps(dict(dynamic)) if dynamic is not None else "")


def observation_of(request: MapIntegrate.Request) -> Observation:
    """The observation a request carries (ValueError when its images or fields are not the graph's)."""
    if len(request.images) != len(VIEW_NAMES) * len(KINDS):
        raise ValueError(f"{len(request.images)} images; a request carries {len(KINDS)} per view of {list(VIEW_NAMES)}")
    views: dict[str, ViewImage] = {}
    for n, view in enumerate(VIEW_NAMES):
        arrays = [from_image(msg) if msg.width and msg.height else None for msg in request.images[n * len(KINDS):(n + 1) * len(KINDS)]]
        if arrays[0] is None:
            raise ValueError(f"view '{view}' has no colour image")
        views[view] = ViewImage(rgb=arrays[0], depth=arrays[1], segmentation=arrays[2])
    meta = request.observation
    return Observation(round=int(meta.round), views=views, pose=pose_of(meta), inventory=list(meta.inventory),  # type: ignore[arg-type]
                       labels=labels_of(meta), people=people_of(meta))


def rig_of(request: MapIntegrate.Request) -> CameraRig:
    """The camera rig a request carries (ValueError, a CameraError, when it is not a rig)."""
    if len(request.world_from_camera) != len(VIEW_NAMES):
        raise ValueError(f"{len(request.world_from_camera)} camera poses; a rig has one per view of {list(VIEW_NAMES)}")
    if not np.all(np.isfinite(request.intrinsics)):
        raise ValueError("the rig's intrinsics must be finite numbers")
    try:
        matrices = [matrix_of_pose(pose) for pose in request.world_from_camera]
    except ValueError as err:
        raise ValueError(f"the rig's camera poses: {err}") from None
    fx, fy, cx, cy = (float(v) for v in request.intrinsics)
    return CameraRig((fx, fy, cx, cy), {view: matrices[n] for n, view in enumerate(VIEW_NAMES)})


def open_state_of(request: Any) -> dict[int, bool]:
    """A request's container states by segmentation id (ValueError when ids and states do not pair up)."""
    if len(request.open_ids) != len(request.open):
        raise ValueError(f"{len(request.open_ids)} container ids but {len(request.open)} states")
    return {int(i): bool(o) for i, o in zip(request.open_ids, request.open, strict=True)}


def rooms_msg(floor_plan: Any) -> list[MapRoom]:
    """A floor plan (what ``World.floor_plan`` returns) as MapRoom messages."""
    return [MapRoom(name=r.name, rect=[r.x0, r.y0, r.x1, r.y1]) for r in rooms_from(floor_plan)]


def rooms_of(msgs: list[MapRoom]) -> list[RoomPrior]:
    """The floor plan MapRoom messages carry (ValueError when a room is unnamed or not a finite rectangle)."""
    rooms = []
    for m in msgs:
        rect = [float(v) for v in m.rect]
        if not m.name or not all(np.isfinite(rect)) or rect[2] <= rect[0] or rect[3] <= rect[1]:
            raise ValueError(f"room {m.name!r} {rect}: a room needs a name and a rectangle x0 < x1, y0 < y1")
        rooms.append(RoomPrior(m.name, *rect))
    return rooms_from(rooms)  # checks the names are unique


def place_msg(place: MappedPlace) -> MapPlace:
    return MapPlace(id=place.id, kind=place.kind, articulated=place.articulated, x=place.x, y=place.y, reach=place.reach,
                    description=place.description)


def place_of(msg: MapPlace) -> MappedPlace:
    return MappedPlace(id=msg.id, kind=msg.kind, articulated=bool(msg.articulated), x=float(msg.x), y=float(msg.y),
                       reach=float(msg.reach), description=msg.description)
