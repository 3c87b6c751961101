"""The mapper node's map services (mapped perception) against garbage: a plain rclpy client that imports
only the interfaces calls every service with requests the map cannot serve (no session, another
session, unreadable floor plans, scenes, images, camera rigs and subtasks) and gets INVALID_REQUEST
with a reason, a detector that cannot read the images gets FAILED, and the node goes on to serve a
well-formed episode.

The node runs with localhost-only discovery and a ROS_DOMAIN_ID of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.bringup.graph import graph  # noqa: E402
from homiebot.ros.bringup.up import spawn_all, stop  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = domain_of(__name__)

CLIENT = r'''
import json, sys, time
import numpy as np
import rclpy
from rclpy.node import Node
from homiebot_msgs.msg import InstanceLabel, MapRoom, RoundObservation, Subtask
from homiebot_msgs.srv import MapBind, MapIntegrate, MapNote, MapPlaces, MapReset, NextFrontier, Resolve, RoomOf
from geometry_msgs.msg import Point, Pose, Quaternion
from sensor_msgs.msg import Image

rclpy.init()
node = Node("map_garbage_client")
kinds = {"reset": MapReset, "integrate": MapIntegrate, "bind": MapBind, "note": MapNote, "frontier": NextFrontier,
         "places": MapPlaces, "resolve": Resolve, "room_of": RoomOf}
clients = {n: node.create_client(k, f"/homiebot/map/{n}") for n, k in kinds.items()}
for name, client in clients.items():
    if not client.wait_for_service(timeout_sec=120.0):
        sys.exit(f"no /homiebot/map/{name} service")

def call(name, request):
    future = clients[name].call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=60.0)
    return future.result()

def image(array, encoding):
    a = np.ascontiguousarray(array)
    return Image(height=a.shape[0], width=a.shape[1], encoding=encoding, step=a.shape[1] * a.itemsize * (a.shape[2] if a.ndim == 3 else 1),
                 data=a.tobytes())

H = W = 32
rgb = image(np.zeros((H, W, 3), np.uint8), "rgb8")
depth = image(np.full((H, W), 2.0, np.float32), "32FC1")
segmentation = image(np.zeros((H, W), np.int32), "32SC1")
camera = [Pose(position=Point(z=1.2), orientation=Quaternion(x=0.5 ** 0.5, w=0.5 ** 0.5))]  # looking along +y from 1.2 m up
kitchen = [MapRoom(name="kitchen", rect=[0.0, 0.0, 4.0, 4.0]), MapRoom(name="hall", rect=[4.0, 0.0, 6.0, 4.0])]

def integrate(session, images=None, poses=None, **extra):
    return MapIntegrate.Request(session=session, publish=True, episode=7, observation=RoundObservation(round=1, robot_pose=Pose(position=Point(x=2.0, y=1.0))),
                                images=images if images is not None else [rgb, depth, segmentation] * 4,
                                intrinsics=[16.0, 16.0, 16.0, 16.0], world_from_camera=poses if poses is not None else camera * 4, **extra)

answers = {}
def answer(key, name, request):
    r = call(name, request)
    answers[key] = {"code": r.error_code, "msg": r.error_msg}
    return r

answer("integrate_before_reset", "integrate", integrate("nobody"))
answer("resolve_before_reset", "resolve", Resolve.Request(phrase="green can"))
answer("reset_no_session", "reset", MapReset.Request(rooms=kitchen))
answer("reset_no_rooms", "reset", MapReset.Request(session="s1"))
answer("reset_inside_out_room", "reset", MapReset.Request(session="s1", rooms=[MapRoom(name="kitchen", rect=[4.0, 0.0, 0.0, 4.0])]))
answer("reset_twice_named", "reset", MapReset.Request(session="s1", rooms=[kitchen[0], kitchen[0]]))
answer("reset_unreadable_scene", "reset", MapReset.Request(session="s1", rooms=kitchen, scene="{not json", world="embedded_home"))
answer("reset_unknown_world", "reset", MapReset.Request(session="s1", rooms=kitchen, scene="{}", world="no_such_world"))
answer("reset", "reset", MapReset.Request(session="s1", rooms=kitchen))
answer("integrate_other_session", "integrate", integrate("s2"))
answer("integrate_three_images", "integrate", integrate("s1", images=[rgb, depth, segmentation]))
answer("integrate_bad_encoding", "integrate", integrate("s1", images=[Image(height=2, width=2, encoding="bgr16", step=16, data=bytes(64))] * 12))
answer("integrate_short_pixels", "integrate", integrate("s1", images=[Image(height=H, width=W, encoding="rgb8", step=W * 3, data=bytes(5))] * 12))
answer("integrate_nan_pose", "integrate", integrate("s1", poses=[Pose(position=Point(x=float("nan")))] * 4))
answer("integrate_few_poses", "integrate", integrate("s1", poses=camera))
answer("integrate_unpaired_doors", "integrate", integrate("s1", open_ids=[1, 2], open=[True]))
answer("integrate_state_without_scene", "integrate", integrate("s1", dynamic='{"robot": 1}'))
answer("integrate_no_segmentation", "integrate", integrate("s1", images=[rgb, depth, Image()] * 4))  # sim_truth cannot detect
answer("bind_bad_action", "bind", MapBind.Request(session="s1", subtask=Subtask(action="Fly", target="x")))
answer("note_other_session", "note", MapNote.Request(session="s2", subtask=Subtask(action="Pick", target="cup_1"), success=True))
ok = answer("integrate", "integrate", integrate("s1"))
answers["integrate"].update(people=len(ok.people), held=ok.held, mapped=ok.map.mapped, rooms=[r.name for r in ok.map.rooms],
                            belief_round=ok.belief.round, belief_episode=ok.belief.episode, resolves=ok.belief.resolves)
bound = answer("bind", "bind", MapBind.Request(session="s1", subtask=Subtask(action="Go to", target="kitchen")))
answers["bind"]["acted"] = [bound.acted.action, bound.acted.target]
places = answer("places", "places", MapPlaces.Request(session="s1"))
answers["places"]["n"] = len(places.places)
frontier = answer("frontier", "frontier", NextFrontier.Request(session="s1"))
answers["frontier"]["found"] = frontier.found
resolved = answer("resolve", "resolve", Resolve.Request(episode=7, phrase="purple elephant"))
answers["resolve"].update(found=resolved.found, message=resolved.message)
answer("resolve_other_episode", "resolve", Resolve.Request(episode=8, phrase="purple elephant"))
room = answer("room_of", "room_of", RoomOf.Request(name="hall"))
answers["room_of"].update(known=room.known, room=room.room)
print(json.dumps(answers))
'''


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("map_server")
    cfg = folder / "mapped.yaml"
    cfg.write_text("perception: {mode: mapped, detector: {name: sim_truth}}\nworld: {name: embedded_home, params: {width: 32, height: 32}}\n")
    script = folder / "client.py"
    script.write_text(CLIENT)
    env = ros_environment(DOMAIN)
    procs = spawn_all([spec for spec in graph(str(cfg), "", str(folder / "runs")) if spec.name == "mapper"], env)
    try:
        run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
        alive = procs["mapper"].poll() is None
    finally:
        stop(procs)
    assert run.returncode == 0, run.stderr[-3000:]
    return {**json.loads(run.stdout.strip().splitlines()[-1]), "alive": alive}


INVALID, FAILED = 1, 2


@pytest.mark.parametrize(("key", "says"), [
    ("integrate_before_reset", "reset the map"), ("resolve_before_reset", "no map yet"), ("reset_no_session", "needs a name"),
    ("reset_no_rooms", "floor plan"), ("reset_inside_out_room", "x0 < x1"), ("reset_twice_named", "unique"),
    ("reset_unreadable_scene", "not a embedded_home scene"), ("reset_unknown_world", "no_such_world"),
    ("integrate_other_session", "'s1', not 's2'"), ("integrate_three_images", "3 images"), ("integrate_bad_encoding", "bgr16"),
    ("integrate_short_pixels", "the observation"), ("integrate_nan_pose", "finite"), ("integrate_few_poses", "1 camera poses"),
    ("integrate_unpaired_doors", "2 container ids but 1 states"), ("integrate_state_without_scene", "without a scene"),
    ("bind_bad_action", "Fly"), ("note_other_session", "'s2'"), ("resolve_other_episode", "episode 8 is over"),
])
def test_a_request_the_map_cannot_serve_is_invalid_with_a_reason(answers, key, says):
    assert answers[key]["code"] == INVALID and says in answers[key]["msg"], answers[key]


def test_a_detector_that_cannot_read_the_images_fails_the_request_not_the_node(answers):
    assert answers["integrate_no_segmentation"]["code"] == FAILED and "segmentation" in answers["integrate_no_segmentation"]["msg"]
    assert answers["alive"]


def test_after_the_garbage_the_map_serves_an_episode(answers):
    assert answers["reset"]["code"] == 0
    done = answers["integrate"]
    assert done["code"] == 0 and done["mapped"] and done["rooms"] == ["kitchen", "hall"] and done["held"] == ""
    assert (done["belief_episode"], done["belief_round"], done["resolves"]) == (7, 1, True)
    assert answers["bind"]["code"] == 0 and answers["bind"]["acted"] == ["Go to", "kitchen"]  # on a robot names pass through
    assert answers["places"]["code"] == 0 and answers["places"]["n"] == 0  # nothing seen twice yet
    assert answers["frontier"]["code"] == 0
    assert answers["resolve"]["code"] == 0 and not answers["resolve"]["found"] and answers["resolve"]["message"]
    assert answers["room_of"] == {"code": 0, "msg": "", "known": True, "room": "hall"}
