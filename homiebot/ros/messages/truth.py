"""The sim driver's ground truth (/homiebot/sim/ground_truth, /homiebot/sim/truth) typed, and back.

``homiebot_msgs/GroundTruth`` carries what ``homiebot.robots.sim.SimTruth`` keeps as a dict: ``robot``,
``stamp`` (ns), ``dynamic`` (the home's moving state), ``belief`` (a ``homiebot.core.errors.take_snapshot``),
``powered``, ``standing``, ``labels`` (segmentation id as text -> {name, category}) and ``counters``
(command counters). Only ``dynamic`` stays JSON: it is the simulator's own state, free-form by nature.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from homiebot_msgs import msg as hb

from homiebot.ros.messages.common import ns_of, pairs_from_msg, pairs_msg
from homiebot.ros.messages.round import belief_msg, header, snapshot_of
from homiebot.ros.messages.wire import WireError


def ground_truth_msg(data: Mapping[str, Any]) -> hb.GroundTruth:
    """The driver's truth dict as a message (the belief's episode and round are 0: it is an instant's)."""
    stamp = int(data["stamp"])
    return hb.GroundTruth(
        header=header(stamp), robot=str(data.get("robot", "")), powered=bool(data.get("powered", False)),
        standing=bool(data.get("standing", False)), dynamic=json.dumps(data.get("dynamic") or {}),
        belief=belief_msg(data["belief"], episode=0, round_index=0, stamp_ns=stamp, resolves=False),
        labels=[hb.InstanceLabel(id=int(i), name=str(label["name"]), category=str(label["category"]))
                for i, label in (data.get("labels") or {}).items()],
        counters=pairs_msg({str(k): str(int(v)) for k, v in (data.get("counters") or {}).items()}))


def truth_of(msg: hb.GroundTruth) -> dict[str, Any]:
    """The truth dict a message carries; WireError (a ValueError) naming the field that cannot be read."""
    try:
        dynamic = json.loads(msg.dynamic or "{}")
    except ValueError:
        raise WireError("GroundTruth.dynamic is not JSON") from None
    if not isinstance(dynamic, dict):
        raise WireError("GroundTruth.dynamic must be a JSON object")
    try:
        counters = {k: int(v) for k, v in pairs_from_msg(msg.counters).items()}
    except ValueError:
        raise WireError("GroundTruth.counters must hold integers") from None
    return {"robot": msg.robot, "stamp": ns_of(msg.header.stamp), "dynamic": dynamic, "belief": snapshot_of(msg.belief),
            "powered": bool(msg.powered), "standing": bool(msg.standing),
            "labels": {str(label.id): {"name": label.name, "category": label.category} for label in msg.labels},
            "counters": counters}
