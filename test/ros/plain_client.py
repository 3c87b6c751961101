"""A client of the graph that knows only rclpy, the standard messages and homiebot_msgs (it never imports
homiebot), as a third party's program would be. Run as a script: ``plain_client.py MODE`` with its
arguments as JSON on standard input; prints one JSON line with what it saw.

Modes: ``goals`` (hostile RunTask goals, collect their results and status events), ``session`` (a world
reset while another client holds the episode), ``fuzz`` (seeded hostile messages on every topic the
graph subscribes to), ``services`` (malformed requests to the typed services), ``task`` (run one task and wait for its end), ``watch`` (run one task and print
its status events as they come), ``cancel_motion`` (an ExecuteSubtask goal cancelled while the robot drives; what
the driver's cmd_vel topic carried before and after), ``on_the_copy`` (one ExecuteSubtask goal in the embedded
home: what the world node took over from the executor's copy of the simulator), ``deactivate`` (the task manager deactivated mid-episode
through its lifecycle service: the goal's result, a goal sent while inactive, then one after activation), ``deactivate_recorder``
(the recorder deactivated mid-episode and activated again: that episode's result and events, then the next one's), ``burst`` (many
RunTask goals at once, then all cancelled).
"""

from __future__ import annotations

import json
import random
import sys
import time

import rclpy
from geometry_msgs.msg import Twist
from homiebot_msgs.action import ExecuteSubtask, RunTask
from homiebot_msgs.msg import Subtask, TaskStatus
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from std_msgs.msg import String

# a transient-local publisher reaches volatile and transient-local subscriptions alike (the graph's round data);
# subscribed so, the task status keeps its recent history for a late match
PUB_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
ROUND_TOPICS = ("world/belief", "observation", "world/state", "belief", "map/summary")
VIEWS = ("front", "left", "back", "right")
KINDS = ("image", "depth", "segmentation")


class Client:
    def __init__(self) -> None:
        rclpy.init()
        self.node = Node("plain_client")
        self.events: list[dict] = []
        self.node.create_subscription(TaskStatus, "/homiebot/task/status", lambda m: self.events.append(_status(m)), PUB_QOS)
        self.run_task = ActionClient(self.node, RunTask, "/homiebot/run_task")
        self.pubs: dict[str, object] = {}

    def pub(self, topic: str, kind=String):
        if topic not in self.pubs:
            self.pubs[topic] = self.node.create_publisher(kind, topic, PUB_QOS)
        return self.pubs[topic]

    def spin(self, seconds: float) -> None:
        end = time.time() + seconds
        while time.time() < end:
            rclpy.spin_once(self.node, timeout_sec=0.02)

    def connect(self, topics: list[str], timeout: float = 60.0) -> None:
        """Until the graph subscribes to each topic; then a little longer, since discovery is not symmetric."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if all(self.pubs[t].get_subscription_count() > 0 for t in topics):
                break
            rclpy.spin_once(self.node, timeout_sec=0.1)
        else:
            raise SystemExit(f"the graph does not listen on {[t for t in topics if self.pubs[t].get_subscription_count() == 0]}")
        self.spin(1.0)

    def wait(self, done, timeout: float = 120.0, resend=None) -> None:
        deadline, sent = time.time() + timeout, 0.0
        while time.time() < deadline and not done():
            if resend and time.time() - sent > 1.0:
                resend()
                sent = time.time()
            rclpy.spin_once(self.node, timeout_sec=0.05)

    def mine(self, rid: str) -> list[dict]:
        return [e for e in self.events if e.get("id") == rid]

    def send(self, fields: dict):
        """Send a RunTask goal; returns its handle once the task manager accepted it."""
        assert self.run_task.wait_for_server(timeout_sec=60), "no RunTask server"
        # no pause for the server to see our reply readers: the graph's nodes wait for that before they answer
        sent = self.run_task.send_goal_async(RunTask.Goal(**fields))
        rclpy.spin_until_future_complete(self.node, sent, timeout_sec=60)
        handle = sent.result()
        assert handle is not None and handle.accepted, "the goal was not accepted"
        return handle

    def finish(self, handle, timeout: float = 120.0) -> dict:
        """The goal's result, once its final status event has come too (topic and result travel apart)."""
        got = handle.get_result_async()
        rclpy.spin_until_future_complete(self.node, got, timeout_sec=timeout)
        r = got.result()
        rid = goal_id(handle)
        self.wait(lambda: any(e["state"] in ("finished", "failed") for e in self.mine(rid)), 30.0)
        return {"id": rid, "status": r.status, "code": r.result.error_code, "msg": r.result.error_msg, "record": r.result.record,
                "termination": r.result.termination}



def goal_id(handle) -> str:
    """A goal's id as the graph's status events name it: its UUID's first 12 hex digits."""
    return bytes(handle.goal_id.uuid).hex()[:12]


def _status(m: TaskStatus) -> dict:
    return {"id": m.id, "state": m.state, "cause": m.cause, "reason": m.reason, "round": m.round, "record": m.record,
            "termination": m.termination, "rounds": m.rounds, "code": m.feedback.code, "action": m.subtask.action}


def goals(c: Client, args: dict) -> dict:
    """Hostile goals, one after the other: each one's result and status events."""
    out = []
    for fields in args["goals"]:
        result = c.finish(c.send(fields))
        out.append({**result, "events": c.mine(result["id"])})
    return {"goals": out}


def session(c: Client, args: dict) -> dict:
    """Another client holds the world's episode session; our reset is out of turn until it releases."""
    from homiebot_msgs.srv import ReleaseWorld, ResetWorld

    scene = json.dumps(args["scene"])
    answers = {}
    for name, kind, service, request in (
            ("held", ResetWorld, "reset", ResetWorld.Request(scene=scene, owner="/someone_else")),
            ("intruder", ResetWorld, "reset", ResetWorld.Request(scene=scene)),
            ("released", ReleaseWorld, "release", ReleaseWorld.Request(owner="/someone_else")),
            ("after", ResetWorld, "reset", ResetWorld.Request(scene=scene))):
        reply = _call(c, kind, f"/homiebot/world/{service}", request, 120.0)
        answers[name] = {"code": reply.error_code, "msg": reply.error_msg} if reply is not None else None
    return answers


def _round_type(topic: str):
    from homiebot_msgs.msg import Belief, RoundObservation, SemanticMap, SimState

    return {"observation": RoundObservation, "world/belief": Belief, "belief": Belief, "world/state": SimState,
            "map/summary": SemanticMap}[topic]


def _text(rng: random.Random) -> str:
    return rng.choice(["", " ", "x" * rng.randrange(1, 3000), "fridge_1", "\u00e9\u2603", "{", "null", "../../etc"])


def _number(rng: random.Random) -> float:
    return rng.choice([0.0, -1.0, 1e308, -1e308, float("nan"), float("inf"), float("-inf"), rng.uniform(-100, 100)])


def _bad_round(rng: random.Random, topic: str):
    """A typed per-round message with hostile contents, of an episode no real run reaches (a message of a real
    episode's round cannot be told from the world's own: ROS topics are open to anyone on the domain)."""
    from homiebot_msgs.msg import BeliefEntity, InstanceLabel, MapFrontier, MapInstance, MapRoom, PersonSeen

    msg = _round_type(topic.removeprefix("/homiebot/"))()
    msg.episode, msg.round = rng.choice([0, 10**6 + rng.randrange(1000), 2**32 - 1]), rng.choice([0, 1, 2**32 - 1])
    many = rng.choice([0, 1, 3, 500])
    name = msg.__class__.__name__
    if name == "RoundObservation":
        msg.kinds = [_text(rng) for _ in range(rng.choice([0, 3]))]
        p, q = msg.robot_pose.position, msg.robot_pose.orientation
        p.x, p.y, q.z, q.w, msg.path_length = (_number(rng) for _ in range(5))
        msg.inventory = [_text(rng) for _ in range(many)]
        msg.labels = [InstanceLabel(id=rng.choice([-5, 0, 2**31 - 1]), name=_text(rng), category=_text(rng)) for _ in range(many)]
        msg.mapped, msg.has_map_text, msg.map_text = rng.random() < 0.5, rng.random() < 0.5, _text(rng)
        msg.people = [PersonSeen(name=_text(rng), x=_number(rng), y=_number(rng), distance=_number(rng)) for _ in range(min(many, 5))]
    elif name == "Belief":
        msg.held, msg.resolves = _text(rng), rng.random() < 0.5
        msg.entities = [BeliefEntity(name=rng.choice(["", "fridge_1", _text(rng)]), kind=_text(rng), is_open=rng.choice([-128, -1, 1, 127]),
                                     distance=_number(rng), relation=_text(rng), container=_text(rng)) for _ in range(many)]
    elif name == "SemanticMap":
        msg.mapped, msg.has_robot, msg.explored_m2 = rng.random() < 0.5, True, _number(rng)
        msg.robot.position.x, msg.robot.position.y, msg.robot.orientation.z, msg.robot.orientation.w = (_number(rng) for _ in range(4))
        msg.instances = [MapInstance(id=_text(rng), label=_text(rng), position=[_number(rng) for _ in range(3)], is_open=5,
                                     confidence=_number(rng)) for _ in range(many)]
        msg.rooms = [MapRoom(name=_text(rng), rect=[_number(rng) for _ in range(4)]) for _ in range(min(many, 5))]
        msg.frontiers = [MapFrontier(centroid=[_number(rng), _number(rng)], size=rng.randrange(2**32)) for _ in range(min(many, 5))]
    else:
        msg.dynamic = rng.choice(["", "[1, 2]", "{", "null", '{"objects": 5}', "x" * 5000])
    return msg


def _bad_image(rng: random.Random) -> Image:
    msg = Image()
    case = rng.randrange(5)
    msg.height, msg.width = rng.choice([(0, 0), (4, 4), (96, 96), (1, 100000)])
    msg.encoding = rng.choice(["rgb8", "32FC1", "32SC1", "bgr8", "", "x" * 100])
    msg.step = msg.width * rng.choice([1, 3, 4])
    size = {0: 0, 1: 7, 2: msg.step * msg.height, 3: 48, 4: 64}[case]
    if msg.encoding == "32FC1" and case == 4:
        msg.height, msg.width, msg.step = 4, 4, 16
        msg.data = b"\x00\x00\xc0\x7f" * 16  # NaN
    else:
        msg.data = bytes(rng.randrange(256) for _ in range(min(size, 4096)))
    return msg


def _bad_heartbeat(rng: random.Random):
    from homiebot_msgs.msg import Heartbeat

    # refused ones only: a well-formed heartbeat (a node joining, or a forgery) is believed; only SROS2 access control stops forgeries
    return Heartbeat(node=rng.choice(["", "x" * 5000]), instance=rng.choice(["", "0" * 4000, "f00d"]),
                     pid=rng.choice([-1, 0, 2**31 - 1]))


def fuzz(c: Client, args: dict) -> dict:
    """``count`` seeded hostile messages spread over every topic the graph subscribes to."""
    rng = random.Random(args["seed"])
    typed = [f"/homiebot/{t}" for t in ROUND_TOPICS]
    images = [f"/homiebot/camera/{v}/{k}" for v in VIEWS for k in KINDS]
    for t in typed:
        c.pub(t, _round_type(t.removeprefix("/homiebot/")))
    for t in images:
        c.pub(t, Image)
    from homiebot_msgs.msg import Heartbeat

    c.pub("/homiebot/heartbeat", Heartbeat)
    c.pub("/homiebot/cancel")
    c.connect(["/homiebot/observation"])
    sent: dict[str, int] = {}
    for i in range(args["count"]):
        draw = rng.random()
        if draw < 0.15:
            topic = rng.choice(images)
            c.pubs[topic].publish(_bad_image(rng))
        elif draw < 0.25:
            topic = "/homiebot/heartbeat"
            c.pubs[topic].publish(_bad_heartbeat(rng))
        elif draw < 0.3:  # ids no submission has (a cancel of what runs is an empty one: not sent here)
            topic = "/homiebot/cancel"
            c.pubs[topic].publish(String(data=rng.choice(["nope", "x" * rng.randrange(201, 100_000), "\u2603" * 50])))
        else:
            topic = rng.choice(typed)
            c.pubs[topic].publish(_bad_round(rng, topic))
        sent[topic] = sent.get(topic, 0) + 1
        if i % 50 == 0:
            c.spin(0.05)
    c.spin(3.0)
    return {"sent": sent}


def services(c: Client, args: dict) -> dict:
    """Malformed requests to the typed services and the executor's action: each answer's error code and message; the models listed."""
    from homiebot_msgs.action import ExecuteSubtask, PlanSubtask
    from homiebot_msgs.msg import Feedback, ModelInfo, PlannerOutput, Subtask
    from homiebot_msgs.srv import ApplyState, Check, GoalSatisfied, ListModels, ResetPlanner, ResetWorld

    nomad = [ModelInfo(name="NoMaD", actions=["Go to"])]
    calls = {
        "reset_unreadable": (ResetPlanner, "/homiebot/planner/reset", ResetPlanner.Request(task="{unclosed")),
        "reset_not_a_task": (ResetPlanner, "/homiebot/planner/reset", ResetPlanner.Request(task="- a list")),
        "check_bad_action": (Check, "/homiebot/detector/check",
                             Check.Request(output=PlannerOutput(subtask=Subtask(action="Fly", target="x")), capabilities=nomad)),
        "check_bad_capability": (Check, "/homiebot/detector/check",
                                 Check.Request(output=PlannerOutput(subtask=Subtask(action="End")),
                                               capabilities=[ModelInfo(name="m", actions=["Teleport"])])),
        "world_reset_unreadable": (ResetWorld, "/homiebot/world/reset", ResetWorld.Request(scene="{unclosed")),
        "world_reset_not_a_scene": (ResetWorld, "/homiebot/world/reset", ResetWorld.Request(scene='{"bogus": 1}')),
        "world_goal_not_conditions": (GoalSatisfied, "/homiebot/world/goal", GoalSatisfied.Request(goal='"all"')),
        "world_apply_old_episode": (ApplyState, "/homiebot/world/apply", ApplyState.Request(episode=10**6, dynamic="{not json")),
    }
    answers = {}
    for name, (kind, service, request) in calls.items():
        reply = _call(c, kind, service, request)
        answers[name] = {"code": reply.error_code, "msg": reply.error_msg} if reply is not None else None
    listed = _call(c, ListModels, "/homiebot/executor/models", ListModels.Request())
    answers["models"] = {"code": listed.error_code, "models": {m.name: list(m.actions) for m in listed.models}}
    execute = ActionClient(c.node, ExecuteSubtask, "/homiebot/executor/execute")
    if not execute.wait_for_server(timeout_sec=30.0):
        raise SystemExit("no /homiebot/executor/execute action")
    sent = execute.send_goal_async(ExecuteSubtask.Goal(subtask=Subtask(action="Fly", target="x"), model="NoMaD"))
    _wait(c, sent)
    result = _wait(c, sent.result().get_result_async())
    answers["execute_bad_action"] = {"status": result.status, "code": result.result.error_code, "msg": result.result.error_msg}
    plan = ActionClient(c.node, PlanSubtask, "/homiebot/planner/plan")
    if not plan.wait_for_server(timeout_sec=30.0):
        raise SystemExit("no /homiebot/planner/plan action")
    sent = plan.send_goal_async(PlanSubtask.Goal(round=1, has_feedback=True, feedback=Feedback(success=False, code="Z9")))
    _wait(c, sent)
    result = _wait(c, sent.result().get_result_async())
    answers["plan_bad_feedback"] = {"status": result.status, "code": result.result.error_code, "msg": result.result.error_msg}
    return {"answers": answers}


def _wait(c: Client, future, seconds: float = 30.0):
    deadline = time.time() + seconds
    while not future.done() and time.time() < deadline:
        rclpy.spin_once(c.node, timeout_sec=0.05)
    return future.result()


def _call(c: Client, kind, service: str, request, seconds: float = 30.0):
    client = c.node.create_client(kind, service)
    if not client.wait_for_service(timeout_sec=30.0):
        raise SystemExit(f"no {service} service")
    return _wait(c, client.call_async(request), seconds)


def task(c: Client, args: dict) -> dict:
    result = c.finish(c.send(args["goal"]), args.get("timeout", 120.0))
    return {"result": result, "events": c.mine(result["id"])}


def watch(c: Client, args: dict) -> dict:
    """Run a task, printing each of its status events as a JSON line as it comes (until it ends)."""
    rid = goal_id(c.send(args["goal"]))
    shown = 0
    deadline = time.time() + args.get("timeout", 300.0)
    while time.time() < deadline:
        mine = c.mine(rid)
        for e in mine[shown:]:
            print(json.dumps(e), flush=True)
            if e["state"] in ("finished", "failed"):
                return {"done": e["state"]}
        shown = len(mine)
        rclpy.spin_once(c.node, timeout_sec=0.05)
    return {"done": None}


def cancel_motion(c: Client, args: dict) -> dict:
    """Send one ExecuteSubtask goal; once the base has been commanded to move for a while, cancel it (as the task
    manager does when an episode fails), then listen to the driver's cmd_vel: when the motion stopped and
    whether anything moved the robot after the goal ended."""
    twists: list[tuple[float, bool]] = []  # (arrival, non-zero)
    c.node.create_subscription(Twist, args["cmd_vel"], lambda m: twists.append(
        (time.monotonic(), any(abs(v) > 1e-9 for v in (m.linear.x, m.linear.y, m.linear.z, m.angular.x, m.angular.y, m.angular.z)))), 100)
    client = ActionClient(c.node, ExecuteSubtask, "/homiebot/executor/execute")
    if not client.wait_for_server(timeout_sec=120.0):
        raise SystemExit("no /homiebot/executor/execute action server")
    goal = ExecuteSubtask.Goal(episode=1, round=1, subtask=Subtask(action=Subtask.GO_TO, target=args["target"]), model=args["model"], seed=0)
    handle = _wait(c, client.send_goal_async(goal), 60.0)
    if handle is None or not handle.accepted:
        raise SystemExit("the goal was not accepted")
    deadline = time.monotonic() + 120.0
    while sum(moving for _, moving in twists) < args["moving"] and time.monotonic() < deadline:
        rclpy.spin_once(c.node, timeout_sec=0.05)
    cancelled_at = time.monotonic()
    _wait(c, handle.cancel_goal_async(), 30.0)
    result = _wait(c, handle.get_result_async(), 60.0)
    ended_at = time.monotonic()
    c.spin(args["listen"])
    stopped = next((t for t, moving in twists if t >= cancelled_at and not moving), None)
    return {"moving_before": sum(moving for t, moving in twists if t < cancelled_at),
            "status": result.status if result is not None else None,
            "error_code": result.result.error_code if result is not None else None,
            "stop_after": None if stopped is None else stopped - cancelled_at,
            "result_after": ended_at - cancelled_at,
            "moving_after_end": sum(moving for t, moving in twists if t > ended_at + args["in_flight"]),
            "heard_after_end": sum(1 for t, _ in twists if t > ended_at + args["in_flight"])}


def on_the_copy(c: Client, args: dict) -> dict:
    """Reset the world node in a scene, observe round 1 and send the executor one Go to goal of that round (its
    skill runs on the executor's copy of the simulator); then what the goal's result, the world's info and its
    round-2 observation say, and which services the world node serves. With the mapper running too: the
    beliefs it published per round (none published by the world node), and none for a forged state of
    another episode."""
    from homiebot_msgs.msg import Belief, SimState
    from homiebot_msgs.srv import Observe, ResetWorld, WorldInfo

    beliefs: dict[str, list] = {"belief": [], "world/belief": []}
    for name, got in beliefs.items():
        c.node.create_subscription(Belief, f"/homiebot/{name}", got.append, PUB_QOS)
    forger = c.pub("/homiebot/world/state", SimState)
    reset = _call(c, ResetWorld, "/homiebot/world/reset", ResetWorld.Request(scene=json.dumps(args["scene"]), owner="/plain_client"), 120.0)
    first = _call(c, Observe, "/homiebot/world/observe", Observe.Request(round=1)).observation
    if args.get("mapper"):
        c.wait(lambda: any(b.round == 1 for b in beliefs["belief"]), 60.0)
    client = ActionClient(c.node, ExecuteSubtask, "/homiebot/executor/execute")
    if not client.wait_for_server(timeout_sec=120.0):
        raise SystemExit("no /homiebot/executor/execute action server")
    goal = ExecuteSubtask.Goal(episode=reset.episode, round=1, subtask=Subtask(action=Subtask.GO_TO, target=args["target"]),
                               model=args["model"], seed=0)
    handle = _wait(c, client.send_goal_async(goal), 60.0)
    if handle is None or not handle.accepted:
        raise SystemExit("the goal was not accepted")
    result = _wait(c, handle.get_result_async(), 120.0).result
    info = _call(c, WorldInfo, "/homiebot/world/info", WorldInfo.Request())
    second = _call(c, Observe, "/homiebot/world/observe", Observe.Request(round=2)).observation
    if args.get("mapper"):
        c.wait(lambda: any(b.round == 2 for b in beliefs["belief"]), 60.0)
        forger.publish(SimState(episode=reset.episode + 7, round=3, dynamic="{}"))  # an episode the world is not in
        c.spin(3.0)
    services = {name for name, _ in c.node.get_service_names_and_types() if name.startswith("/homiebot/world/")}

    def snapshot(b) -> dict:
        return {"episode": b.episode, "round": b.round, "held": b.held, "resolves": b.resolves,
                "entities": {e.name: [e.kind, e.articulated, e.is_open, e.relation, e.distance, e.container] for e in b.entities}}

    return {"episode": reset.episode, "beliefs": {k: [snapshot(b) for b in v] for k, v in beliefs.items()},
            "code": result.error_code, "success": result.feedback.success, "skill": result.skill, "attempts": result.attempts,
            "travelled": result.path_length, "has_world_state": result.has_world_state, "result_path": result.world_path_length,
            "world_path": info.path_length, "before": [first.robot_pose.position.x, first.robot_pose.position.y], "after": [second.robot_pose.position.x, second.robot_pose.position.y], "observed_path": second.path_length,
            "world_services": sorted(services)}


def _result(c: Client, handle, seconds: float = 60.0) -> dict:
    got = _wait(c, handle.get_result_async(), seconds)
    return {"status": got.status, "code": got.result.error_code, "msg": got.result.error_msg, "record": got.result.record} if got else {}


def deactivate(c: Client, args: dict) -> dict:
    """Run a task; once round ``round`` has ended, deactivate the task manager: the time its goal's result took
    and that result. Then a goal sent while it is inactive, then activation and a goal run to its first round."""
    handle = c.send(args["goal"])
    rid = goal_id(handle)
    c.wait(lambda: any(e["state"] == "round" and e["round"] >= args["round"] for e in c.mine(rid)), 120.0)
    change = ChangeState.Request(transition=Transition(id=Transition.TRANSITION_DEACTIVATE))
    started = time.monotonic()
    deactivated = _call(c, ChangeState, "/homiebot/task_manager/change_state", change)
    first = _result(c, handle)
    out = {"deactivated": bool(deactivated and deactivated.success), "result_after": time.monotonic() - started, "first": first}
    sent = _wait(c, c.run_task.send_goal_async(RunTask.Goal(**args["goal"])), 60.0)
    out["inactive"] = _result(c, sent) if sent is not None and sent.accepted else {"accepted": False}
    change = ChangeState.Request(transition=Transition(id=Transition.TRANSITION_ACTIVATE))
    activated = _call(c, ChangeState, "/homiebot/task_manager/change_state", change)
    out["activated"] = bool(activated and activated.success)
    again = c.send(args["goal"])
    c.wait(lambda: any(e["state"] == "round" for e in c.mine(goal_id(again))), 120.0)
    out["rounds_after_activation"] = sum(e["state"] == "round" for e in c.mine(goal_id(again)))
    _wait(c, again.cancel_goal_async(), 30.0)
    out["last"] = _result(c, again)
    return out


def deactivate_recorder(c: Client, args: dict) -> dict:
    """Run a task; once round ``round`` has ended, deactivate the recorder; two rounds after its answer activate it again and
    cancel the task; then run a second task to its first round and cancel it: both results, the first one's events."""
    recorder = "/homiebot/recorder/change_state"
    first = c.send(args["goal"])
    rid = goal_id(first)
    c.wait(lambda: any(e["state"] == "round" and e["round"] >= args["round"] for e in c.mine(rid)), 120.0)
    off = _call(c, ChangeState, recorder, ChangeState.Request(transition=Transition(id=Transition.TRANSITION_DEACTIVATE)))
    # two rounds after the deactivation's answer (on a loaded machine, round + 2 may have passed while it was on its way)
    done = max((e["round"] for e in c.mine(rid) if e["state"] == "round"), default=0)
    c.wait(lambda: any(e["state"] == "round" and e["round"] >= done + 2 for e in c.mine(rid)), 120.0)
    on = _call(c, ChangeState, recorder, ChangeState.Request(transition=Transition(id=Transition.TRANSITION_ACTIVATE)))
    _wait(c, first.cancel_goal_async(), 30.0)
    out = {"deactivated": bool(off and off.success), "activated": bool(on and on.success), "first": c.finish(first)}
    out["first_events"] = c.mine(rid)
    second = c.send(args["goal"])
    c.wait(lambda: any(e["state"] == "round" and e["round"] >= 2 for e in c.mine(goal_id(second))), 120.0)
    _wait(c, second.cancel_goal_async(), 30.0)
    out["second"] = c.finish(second)
    return out


def send_burst(c: Client, goal: dict, count: int, timeout: float = 120.0) -> tuple[list, list]:
    """``count`` RunTask goals sent at once, none waiting for its reply, from an action client whose reply queues are as
    deep as the burst (rclpy's default of 10 drops the rest on this side): (the goals answered, those accepted)."""
    deep = QoSProfile(depth=count, reliability=ReliabilityPolicy.RELIABLE)
    client = ActionClient(c.node, RunTask, "/homiebot/run_task", goal_service_qos_profile=deep, result_service_qos_profile=deep,
                          cancel_service_qos_profile=deep)
    if not client.wait_for_server(timeout_sec=60):
        raise SystemExit("no RunTask server")
    sent = [client.send_goal_async(RunTask.Goal(**goal)) for _ in range(count)]
    c.wait(lambda: all(f.done() for f in sent), timeout)
    handles = [f.result() for f in sent if f.done()]
    return handles, [h for h in handles if h.accepted]


def burst(c: Client, args: dict) -> dict:
    """A burst (``send_burst``), then every accepted goal cancelled: how many were answered, accepted and ended, with
    the results' status and error codes."""
    handles, accepted = send_burst(c, args["goal"], args["count"])
    cancels = [h.cancel_goal_async() for h in accepted]
    results = [h.get_result_async() for h in accepted]
    c.wait(lambda: all(f.done() for f in (*cancels, *results)), 180.0)
    ended = [f.result() for f in results if f.done()]
    return {"answered": len(handles), "accepted": len(accepted), "ended": len(ended),
            "codes": sorted(r.result.error_code for r in ended), "statuses": sorted(r.status for r in ended)}


if __name__ == "__main__":
    mode, arguments = sys.argv[1], json.loads(sys.stdin.read())
    client = Client()
    try:
        print(json.dumps({"goals": goals, "session": session, "fuzz": fuzz, "services": services, "task": task,
                                "watch": watch, "cancel_motion": cancel_motion, "on_the_copy": on_the_copy,
                                "deactivate": deactivate, "deactivate_recorder": deactivate_recorder,
                                "burst": burst}[mode](client, arguments)))
    finally:
        client.node.destroy_node()
        rclpy.try_shutdown()
