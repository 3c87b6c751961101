"""The task manager node: takes instructions, runs episodes through the graph, writes their records.

Listens on /homiebot/task/submit (JSON: ``{"id", "instruction", "scene"}`` or ``{"id", "task": {...}}``
or ``{"id", "task_file"}``, optional ``"seed"``), runs one episode at a time with the same agent loop
as ``homiebot run`` (its components being the other nodes), publishes events on /homiebot/task/status
(accepted, running, round, warning, finished, failed), every subtask and feedback on /homiebot/subtask and
/homiebot/feedback, and writes the episode folder exactly as ``homiebot run`` does, plus ``bag/``:
an MCAP recording of every /homiebot topic during the episode, written by the recorder node. A bag
that cannot be recorded (no recorder running) is reported in the status events and the log; the
episode runs and its record is written all the same.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from typing import Any

from rclpy.node import Node
from std_msgs.msg import String

from homiebot.agent import Agent, AgentSettings
from homiebot.contracts import StepRecord
from homiebot.records import EpisodeWriter
from homiebot.ros.common import NodeDef, Param, positive, run_config, run_node
from homiebot.ros.observations import ObservationCache
from homiebot.ros.remote import RemoteChecker, RemoteExecutor, RemotePlanner, RemoteWorld
from homiebot.ros.rpc import RELIABLE, RpcClient, RpcError, RpcTimeout
from homiebot.runtime import SceneCache, check_scene_names, make_task, scene_json
from homiebot.tasks import Task, load_task

SERVICES = ("world", "planner", "detector", "executor")


class TaskManagerNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.node = node
        self.cfg = run_config(params["config"])
        self.params = params
        self.clients = {s: RpcClient(node, s) for s in SERVICES}
        self.cache = ObservationCache(node, kinds=("image",), json_topics=("world/belief",))  # PNGs are colour
        self.scenes = SceneCache(self.cfg.world.name)
        self.recorder = RpcClient(node, "recorder") if params["record_bag"] else None
        self.pubs = {t: node.create_publisher(String, f"/homiebot/{t}", RELIABLE) for t in ("task/status", "subtask", "feedback")}
        self.queue: queue.Queue[dict] = queue.Queue()
        self._seen: dict[str, None] = {}  # ids of recent submissions, oldest first
        node.create_subscription(String, "/homiebot/task/submit", self._on_submit, RELIABLE)
        threading.Thread(target=self._worker, daemon=True).start()

    def _status(self, **event: Any) -> None:
        self.pubs["task/status"].publish(String(data=json.dumps({"time": time.time(), **event})))

    def _on_submit(self, msg: String) -> None:
        try:
            request = json.loads(msg.data)
            if not isinstance(request, dict):
                raise ValueError("a submission is a JSON object")
        except ValueError as err:
            self._status(id=None, state="failed", reason=f"unreadable submission: {err}")
            return
        request.setdefault("id", f"task-{int(time.time() * 1000)}")
        if request["id"] in self._seen:
            return  # a client repeats its submission until it hears of it
        self._seen[request["id"]] = None
        while len(self._seen) > 1000:
            self._seen.pop(next(iter(self._seen)))
        self._status(id=request["id"], state="accepted", queued=self.queue.qsize())
        self.queue.put(request)

    def _worker(self) -> None:
        while True:
            request = self.queue.get()
            try:
                self._run(request)
            except Exception as err:  # report and serve the next task
                self._status(id=request["id"], state="failed", reason=f"{type(err).__name__}: {err}")

    def _task(self, request: dict) -> Task:
        if "task" in request:
            return Task.model_validate(request["task"])
        if "task_file" in request:
            return load_task(request["task_file"])
        return make_task(request.get("instruction"), request.get("scene"), self.scenes.world)

    def _wait_for_nodes(self) -> None:
        """Until every node answers a ping, before each episode: a node restarted since the last one
        is reached for sure (and the pings stay out of the episode's bag)."""
        deadline = time.monotonic() + self.params["connect_timeout"]
        missing = []
        for service, client in self.clients.items():
            try:
                client.verify(max(0.5, deadline - time.monotonic()), force=True)
            except RpcTimeout:
                missing.append(service)
        if missing:
            raise RuntimeError(f"the {', '.join(missing)} node(s) are not running (waited {self.params['connect_timeout']:g} s)")

    def _start_bag(self, rid: str, writer: EpisodeWriter) -> bool:
        """Ask the recorder node to record this episode; False (and a warning) if it cannot."""
        if self.recorder is None:
            return False
        if not self.recorder.connected:
            self._bag_problem(rid, "this episode is not recorded into a bag: no recorder node is running "
                                   "(start the graph with its recorder, or set record_bag: false)")
            return False
        try:
            self.recorder.call("start", {"path": str((writer.work_dir / "bag").resolve())}, timeout=self.params["timeout"])
            return True
        except (RpcError, RpcTimeout) as err:
            self._bag_problem(rid, f"this episode is not recorded into a bag: {err}")
            return False

    def _stop_bag(self, rid: str) -> None:
        try:
            self.recorder.call("stop", timeout=self.params["timeout"])
        except (RpcError, RpcTimeout) as err:  # the record itself must still be written
            self._bag_problem(rid, f"the bag may be incomplete: {err}")

    def _bag_problem(self, rid: str, message: str) -> None:
        self.node.get_logger().warning(message)
        self._status(id=rid, state="warning", reason=message)

    def _run(self, request: dict) -> None:
        rid = request["id"]
        started = time.perf_counter()
        task = self._task(request)
        scene = self.scenes.get(task)
        check_scene_names(task, scene, self.scenes.world)
        self._wait_for_nodes()
        seed = int(request.get("seed", self.cfg.seed))
        timeout = self.params["timeout"]
        world = RemoteWorld(self.clients["world"], self.cache, scene_json(scene, self.scenes.world), timeout)
        world.reset()  # loads the scene, so that the skills can be listed
        executor = RemoteExecutor(self.clients["executor"], timeout, self.params["execute_timeout"])
        planner = RemotePlanner(self.clients["planner"], self.params["plan_timeout"], world)
        planner_name = self.clients["planner"].call("info", timeout=timeout, resend=1.0)["planner"]
        c = self.cfg
        settings = AgentSettings(max_rounds=c.max_rounds, history_window=c.history_window, far=c.detector.far, near=c.detector.near,
                                 suggest_names=c.detector.suggest_names)
        agent = Agent(world, planner, executor, executor.models, settings, planner_name=planner_name,
                      make_checker=lambda t: RemoteChecker(self.clients["detector"], executor.capabilities(), t.aliases, timeout, world,
                                                                   executor.unavailable))
        writer = EpisodeWriter(self.params["out_dir"], f"{task.id}_seed{seed}", images=c.output.images, video=c.output.video)
        if self._start_bag(rid, writer):
            writer.before_finish.append(lambda: self._stop_bag(rid))
        goal_check = (lambda: world.goal_satisfied(task.goal)) if task.goal is not None else None
        setup = round(time.perf_counter() - started, 4)  # scene, world reset, capabilities: before the episode's clock starts
        self._status(id=rid, state="running", instruction=task.instruction, seed=seed, setup_s=setup)
        config = c.model_dump(mode="json")
        config["planner"] = {**config["planner"], "name": planner_name}

        def on_step(step: StepRecord) -> None:
            if step.output is not None:
                self.pubs["subtask"].publish(String(data=step.output.model_dump_json()))
            self.pubs["feedback"].publish(String(data=step.feedback.model_dump_json()))
            self._status(id=rid, state="round", round=step.round, subtask=step.subtask.text() if step.subtask else None,
                         code=step.feedback.code.value if step.feedback.code else None)

        folder = writer.final_dir
        try:
            record = agent.run(task, seed, writer=writer, config=config, on_step=on_step, goal_check=goal_check)
        except Exception as err:
            self._status(id=rid, state="failed", reason=f"{err}", record=str(folder / "episode.json"))
            return
        self._status(id=rid, state="finished", record=str(folder / "episode.json"), ended=record.ended,
                     goal_satisfied=record.goal_satisfied, rounds=len(record.steps), termination=record.termination,
                     setup_s=setup, wall_time_s=round(record.wall_time, 4))


PARAMS = (
    Param("out_dir", "runs", "where episode folders are written"),
    Param("timeout", 30.0, "seconds any node may take to answer a call", positive),
    Param("plan_timeout", 120.0, "seconds the planner may take per round", positive),
    Param("execute_timeout", 120.0, "seconds the executor may take per subtask", positive),
    Param("connect_timeout", 30.0, "seconds to wait for the other nodes before a task fails", positive),
    Param("record_bag", True, "have the recorder node write every /homiebot topic of each episode into <episode>/bag (MCAP)"),
)


NODE = NodeDef("task_manager", TaskManagerNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
