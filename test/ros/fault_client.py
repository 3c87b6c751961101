"""Faults of issue 62 from a client that knows only rclpy and homiebot_msgs (no homiebot import): run as a script,
``fault_client.py MODE`` with its arguments as JSON on standard input; prints one JSON line with what it saw.

Modes: ``burst`` (``count`` goals sent at once from a client whose queues are as deep, none waiting for its reply:
how many were answered, accepted, and ended with which error codes), ``ghost`` (heartbeats of nodes that are not
the graph's, then silence; then a task), ``intruder`` (a world reset of another owner that the world refuses; then a
task). Built on ``plain_client`` (a plain client too).
"""

from __future__ import annotations

import json
import sys
import time

import rclpy
from homiebot_msgs.msg import Heartbeat
from homiebot_msgs.srv import ResetWorld
from plain_client import Client, _call, goal_id, send_burst


def burst(c: Client, args: dict) -> dict:
    handles, accepted = send_burst(c, args["goal"], args["count"], args.get("timeout", 120.0))
    results = [h.get_result_async() for h in accepted]
    c.wait(lambda: all(f.done() for f in results), args.get("timeout", 120.0))
    ended = [f.result() for f in results if f.done()]
    ids = {goal_id(h) for h in accepted}
    c.spin(1.0)
    failed = [e for e in c.events if e["id"] in ids and e["state"] == "failed"]
    return {"answered": len(handles), "accepted": len(accepted), "ended": len(ended),
            "codes": sorted({r.result.error_code for r in ended}), "messages": sorted({r.result.error_msg for r in ended})[:5],
            "failed_events": len({e["id"] for e in failed}), "causes": sorted({e["cause"] for e in failed})}


def ghost(c: Client, args: dict) -> dict:
    """Heartbeats of nodes named ``names`` for a second and a half, then silence beyond the heartbeat timeout; then
    a task: its result."""
    pub = c.pub("/homiebot/heartbeat", Heartbeat)
    c.connect(["/homiebot/heartbeat"])
    for _ in range(3):
        for name in args["names"]:
            pub.publish(Heartbeat(node=name, instance="f00d", pid=4242))
        c.spin(0.5)
    c.node.destroy_publisher(pub)
    c.spin(args["silence"])
    started = time.time()
    result = c.finish(c.send(args["goal"]), args.get("timeout", 120.0))
    return {"result": result, "events": c.mine(result["id"]), "seconds": time.time() - started}


def intruder(c: Client, args: dict) -> dict:
    """A world reset of owner ``/intruder`` with a scene the world refuses; then a task: both answers."""
    reply = _call(c, ResetWorld, "/homiebot/world/reset", ResetWorld.Request(scene=json.dumps(args["scene"]), owner="/intruder"), 60.0)
    refused = {"code": reply.error_code, "msg": reply.error_msg} if reply is not None else None
    result = c.finish(c.send(args["goal"]), args.get("timeout", 120.0))
    return {"reset": refused, "result": result, "events": c.mine(result["id"])}


if __name__ == "__main__":
    mode, arguments = sys.argv[1], json.loads(sys.stdin.read())
    client = Client()
    try:
        print(json.dumps({"burst": burst, "ghost": ghost, "intruder": intruder}[mode](client, arguments)))
    finally:
        client.node.destroy_node()
        rclpy.try_shutdown()
