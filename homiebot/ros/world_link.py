"""The world node's typed services (``homiebot_msgs/srv``): their names, and what both sides convert.

The task manager resets, observes and queries the world; the executor lists the simulator's skills and
runs their attempts there; the detector grounds phrases with a mapped world's belief. Each caller makes
only the clients it uses, so that the graph shows who calls what.
"""

from __future__ import annotations

import json
from typing import Any

from homiebot_msgs.srv import (
    GoalSatisfied,
    ListSkills,
    Observe,
    ReleaseWorld,
    ResetWorld,
    Resolve,
    RoomOf,
    Route,
    SkillAttempt,
    WorldInfo,
)
from rclpy.node import Node

from homiebot.contracts import PersonSeen
from homiebot.ros.messages import person_from_msg, person_msg
from homiebot.ros.services import ServiceCaller

PREFIX = "/homiebot/world"
SERVICES: dict[str, Any] = {
    "reset": ResetWorld, "release": ReleaseWorld, "observe": Observe, "info": WorldInfo, "goal": GoalSatisfied,
    "room_of": RoomOf, "route": Route, "resolve": Resolve, "skills": ListSkills, "attempt": SkillAttempt,
}

EPISODE_CALLS = ("reset", "release", "observe", "info", "goal", "room_of", "route")  # what the task manager's episodes call


def service_name(name: str) -> str:
    """The ROS name of one of the world's services (``reset`` -> ``/homiebot/world/reset``)."""
    return f"{PREFIX}/{name}"


def world_callers(node: Node, names: tuple[str, ...]) -> dict[str, ServiceCaller]:
    """Blocking clients of the named world services."""
    return {n: ServiceCaller(node, SERVICES[n], service_name(n), "world") for n in names}


def observation_meta(r: Observe.Response) -> dict[str, Any]:
    """An Observe response as the round's metadata (the form /homiebot/observation publishes)."""
    meta: dict[str, Any] = {
        "episode": int(r.episode), "round": int(r.round), "stamp": int(r.stamp), "kinds": list(r.kinds),
        "pose": {"x": r.x, "y": r.y, "yaw": r.yaw}, "inventory": list(r.inventory),
        "labels": {str(i): {"name": n, "category": c} for i, n, c in zip(r.label_ids, r.label_names, r.label_categories, strict=True)},
        "path_length": r.path_length, "mapped": r.mapped,
    }
    if r.has_map_text:
        meta["map_text"] = r.map_text
    meta["people"] = [person_from_msg(p).model_dump() for p in r.people]
    return meta


def observe_response(meta: dict[str, Any]) -> Observe.Response:
    """The round's metadata as an Observe response."""
    labels = {int(k): v for k, v in meta["labels"].items()}
    pose = meta["pose"]
    return Observe.Response(
        episode=meta["episode"], round=meta["round"], stamp=meta["stamp"], kinds=list(meta["kinds"]),
        x=float(pose["x"]), y=float(pose["y"]), yaw=float(pose["yaw"]), inventory=list(meta["inventory"]),
        label_ids=list(labels), label_names=[v["name"] for v in labels.values()], label_categories=[v["category"] for v in labels.values()],
        path_length=float(meta["path_length"]), mapped=bool(meta["mapped"]), has_map_text="map_text" in meta,
        map_text=str(meta.get("map_text", "")), people=[person_msg(PersonSeen(**p)) for p in meta.get("people", [])])


def scene_text(scene: dict[str, Any] | None) -> str:
    """A scene description for ResetWorld (empty: the world's own)."""
    return "" if scene is None else json.dumps(scene, sort_keys=True)
