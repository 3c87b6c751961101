"""What the world and the mapper publish each round, typed (``homiebot_msgs``), and back.

* ``RoundObservation`` (/homiebot/observation, and the reply of /homiebot/world/observe): pose, inventory,
  labels, persons; the camera images carry its stamp.
* ``Belief`` (/homiebot/world/belief, /homiebot/belief): the error detector's snapshot of every name.
* ``SemanticMap`` (/homiebot/map/summary, and in MapIntegrate replies): the semantic map's summary.
* ``SimState`` (/homiebot/world/state): the simulator's moving state, for the mirrors of the mapper and of
  privileged planners, and the executor's copy of the simulator.

Each converter has its inverse, so a consumer in another process sees what the world's own objects say.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from homiebot_msgs import msg as hb
from std_msgs.msg import Header

from homiebot.core.contracts import InstanceLabel, Observation, PersonSeen, Pose2D
from homiebot.ros.messages.common import person_from_msg, person_msg, stamp_of
from homiebot.ros.messages.poses import planar_of, planar_pose_msg


def header(stamp_ns: int, frame_id: str = "map") -> Header:
    return Header(stamp=stamp_of(stamp_ns), frame_id=frame_id)


def _tri(value: bool | None) -> int:
    """A bool that may be unknown, as the messages' OPEN / CLOSED / OPEN_UNKNOWN."""
    return hb.BeliefEntity.OPEN_UNKNOWN if value is None else int(bool(value))


def _untri(value: int) -> bool | None:
    return None if value < 0 else bool(value)


def _floats(values: Sequence[float], n: int, what: str) -> list[float]:
    if len(values) != n:
        raise ValueError(f"{what} needs {n} numbers, not {len(values)}")
    return [float(v) for v in values]


# --- /homiebot/observation -----------------------------------------------------------------------


def round_observation_msg(obs: Observation, *, episode: int, stamp_ns: int, kinds: Sequence[str], path_length: float,
                          mapped: bool, map_text: str | None) -> hb.RoundObservation:
    """The round's observation without its images (they go out on the camera topics with this stamp)."""
    return hb.RoundObservation(
        header=header(stamp_ns), episode=episode, round=obs.round, kinds=list(kinds),
        robot_pose=planar_pose_msg(obs.pose.x, obs.pose.y, obs.pose.yaw), inventory=list(obs.inventory),
        labels=[hb.InstanceLabel(id=int(i), name=label.name, category=label.category) for i, label in obs.labels.items()],
        path_length=float(path_length), mapped=mapped, has_map_text=map_text is not None, map_text=map_text or "",
        people=[person_msg(p) for p in obs.people])


def pose_of(msg: hb.RoundObservation) -> Pose2D:
    """The robot's pose a round's observation carries (ValueError when it is not a pose)."""
    x, y, yaw = planar_of(msg.robot_pose)
    return Pose2D(x=x, y=y, yaw=yaw)


def labels_of(msg: hb.RoundObservation) -> dict[int, InstanceLabel]:
    return {int(label.id): InstanceLabel(name=label.name, category=label.category) for label in msg.labels}


def people_of(msg: hb.RoundObservation) -> list[PersonSeen]:
    return [person_from_msg(p) for p in msg.people]


# --- /homiebot/world/belief, /homiebot/belief --------------------------------------------------------


def belief_msg(snapshot: Mapping[str, Any], *, episode: int, round_index: int, stamp_ns: int, resolves: bool) -> hb.Belief:
    """A belief snapshot (``homiebot.core.errors.take_snapshot``) as a message."""
    entities = [hb.BeliefEntity(name=name, kind=e["kind"], articulated=bool(e["articulated"]), is_open=_tri(e["is_open"]),
                                relation=e["relation"] or "", distance=float(e["distance"]), container=e["container"] or "")
                for name, e in snapshot["entities"].items()]
    return hb.Belief(header=header(stamp_ns), episode=episode, round=round_index, held=snapshot["held"] or "",
                     resolves=resolves, entities=entities)


def snapshot_of(msg: hb.Belief) -> dict[str, Any]:
    """The belief snapshot a Belief message carries (what ``SnapshotBelief`` reads)."""
    entities = {e.name: {"kind": e.kind, "articulated": bool(e.articulated), "is_open": _untri(e.is_open),
                         "relation": e.relation or None, "distance": float(e.distance), "container": e.container or None}
                for e in msg.entities}
    return {"held": msg.held or None, "entities": entities}


# --- /homiebot/map/summary ---------------------------------------------------------------------------


def _instance_msg(i: Mapping[str, Any]) -> hb.MapInstance:
    return hb.MapInstance(
        id=str(i["id"]), label=str(i["label"]), kind=str(i.get("kind") or ""), colour=i.get("colour") or "",
        position=_floats(i.get("position", (0.0, 0.0, 0.0)), 3, "an instance's position"),
        extent=_floats(i.get("extent", (0.0, 0.0, 0.0)), 3, "an instance's extent"),
        confidence=float(i.get("confidence", 0.0)), times_seen=int(i.get("times_seen", 0)),
        first_seen=int(i.get("first_seen", 0)), last_seen=int(i.get("last_seen", 0)), room=i.get("room") or "",
        stale=bool(i.get("stale", False)), held=bool(i.get("held", False)), is_open=_tri(i.get("is_open")),
        relation=i.get("relation") or "", support=i.get("support") or "")


def semantic_map_msg(summary: Mapping[str, Any], *, episode: int, round_index: int, stamp_ns: int) -> hb.SemanticMap:
    """A semantic map's summary (``SemanticMap.summary()``) as a message."""
    robot = summary.get("robot")
    return hb.SemanticMap(
        header=header(stamp_ns), episode=episode, round=round_index, mapped=True, has_robot=robot is not None,
        robot=planar_pose_msg(*_floats(robot, 3, "the robot's pose")) if robot is not None else planar_pose_msg(0.0, 0.0, 0.0),
        instances=[_instance_msg(i) for i in summary.get("instances", [])],
        rooms=[hb.MapRoom(name=str(r["name"]), rect=_floats(r["rect"], 4, "a room's rectangle")) for r in summary.get("rooms", [])],
        explored_m2=float(summary.get("explored_m2", 0.0)),
        frontiers=[hb.MapFrontier(centroid=_floats(f["centroid"], 2, "a frontier's centroid"), size=int(f["size"]),
                                  goal=_floats(f["goal"], 2, "a frontier's goal")) for f in summary.get("frontiers", [])])


def labelled_map_msg(seen: Mapping[str, tuple[str, int, int]], *, episode: int, round_index: int, stamp_ns: int) -> hb.SemanticMap:
    """Oracle perception's map: every labelled instance seen so far (name -> category, first and last round)."""
    return hb.SemanticMap(header=header(stamp_ns), episode=episode, round=round_index, mapped=False,
                          instances=[hb.MapInstance(id=name, label=category, first_seen=first, last_seen=last,
                                                    is_open=hb.MapInstance.OPEN_UNKNOWN)
                                     for name, (category, first, last) in seen.items()])


def _r3(values: Any) -> list[float]:
    return [round(float(v), 3) for v in values]


def summary_of(msg: hb.SemanticMap) -> dict[str, Any]:
    """The summary a SemanticMap message carries, in ``SemanticMap.summary()``'s form (planners read it)."""
    instances = [{"id": i.id, "label": i.label, "kind": i.kind, "colour": i.colour or None, "position": _r3(i.position),
                  "extent": _r3(i.extent), "confidence": float(i.confidence), "times_seen": int(i.times_seen),
                  "first_seen": int(i.first_seen), "last_seen": int(i.last_seen), "room": i.room or None, "stale": bool(i.stale),
                  "held": bool(i.held), "is_open": _untri(i.is_open), "relation": i.relation or None, "support": i.support or None}
                 for i in msg.instances]
    return {"round": int(msg.round), "robot": _r3(planar_of(msg.robot)) if msg.has_robot else None, "instances": instances,
            "rooms": [{"name": r.name, "rect": [float(v) for v in r.rect]} for r in msg.rooms],
            "explored_m2": float(msg.explored_m2),
            "frontiers": [{"centroid": _r3(f.centroid), "size": int(f.size), "goal": _r3(f.goal)} for f in msg.frontiers]}


# --- /homiebot/world/state -----------------------------------------------------------------------------


def sim_state_msg(dynamic: Mapping[str, Any], *, episode: int, round_index: int, stamp_ns: int) -> hb.SimState:
    return hb.SimState(header=header(stamp_ns), episode=episode, round=round_index, dynamic=json.dumps(dynamic))


def dynamic_of(msg: hb.SimState) -> dict[str, Any]:
    """The simulator's state a SimState message carries (ValueError when it is not a JSON object)."""
    value = json.loads(msg.dynamic)
    if not isinstance(value, dict):
        raise ValueError("SimState.dynamic must be a JSON object")
    return value
