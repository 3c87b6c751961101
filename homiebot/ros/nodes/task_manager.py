"""The task manager node: takes instructions, runs episodes through the graph, writes their records.

Serves the ``RunTask`` action on /homiebot/run_task (``homiebot_msgs``; homiebot/ros/clients/run_task.py turns its
goals into submissions and their events into feedback, results and status messages); runs one episode
at a time with the same agent loop as ``homiebot run`` (its components being the other nodes),
publishes ``TaskStatus`` on /homiebot/task/status (accepted, running, round, warning, finished, failed;
a failed event's ``cause`` is ``invalid`` for a submission that cannot be run as given, ``error`` for a
failure of the graph, ``interrupted`` when the task manager stopped, ``cancelled`` for a goal cancelled
while queued), every subtask and feedback on /homiebot/subtask and
/homiebot/feedback, and writes the episode folder exactly as ``homiebot run`` does, plus ``bag/``:
an MCAP recording of every /homiebot topic during the episode, written by the recorder node. A bag
that cannot be recorded (no recorder running) is reported in the status events and the log; the
episode runs and its record is written all the same.

Its standard output (the log of ``homiebot up``) has a line per task as it starts (instruction and
episode id), ``homiebot run``'s line per round, and a line per episode as it ends (the result and the
record's path, or why it could not run).
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from homiebot_msgs import msg as hb
from homiebot_msgs.action import ExecuteSubtask, PlanSubtask
from homiebot_msgs.srv import Check, ListModels, ResetPlanner, StartBag, StopBag
from pydantic import ValidationError
from rclpy.node import Node
from std_msgs.msg import String, UInt32

from homiebot.core.console import end_reason, round_line, task_line, verdict_line
from homiebot.core.contracts import STAND_IN, StepRecord
from homiebot.core.errors import ConfigError
from homiebot.core.records import EpisodeWriter, finalise_leftovers
from homiebot.core.scenes import SceneError
from homiebot.core.tasks import MAX_INSTRUCTION_CHARS, Task, TaskError, instruction_too_long, task_from_data
from homiebot.episode import EpisodeParts, play_episode
from homiebot.people.base import User
from homiebot.people.factory import make_user
from homiebot.planners.base import PlannerConfigError
from homiebot.ros.clients.goal_checks import GoalError, task_file_data
from homiebot.ros.clients.remote import PlannerBackend, RemoteChecker, RemoteExecutor, RemotePlanner, RemoteWorld
from homiebot.ros.clients.ros_user import RosUser
from homiebot.ros.clients.run_task import STATUS_QOS, STATUS_TOPIC, RunTaskServer, event_to_status
from homiebot.ros.clients.world_link import EPISODE_CALLS, world_callers
from homiebot.ros.kit import services
from homiebot.ros.kit.common import RUN_CONFIG, NodeDef, Param, positive
from homiebot.ros.kit.process import run_node
from homiebot.ros.kit.safety import CANCEL_TOPIC, CANCELLED_TOPIC, SafetyLink, TopicApprover
from homiebot.ros.kit.services import ActionCaller, ServiceCaller, ServiceError, ServiceInterrupted, ServiceTimeout
from homiebot.ros.kit.watch import NodeWatch, endpoints
from homiebot.ros.messages.common import RELIABLE, feedback_msg, planner_output_msg
from homiebot.ros.messages.observations import ObservationCache
from homiebot.ros.messages.wire import Submission, describe, safe_callback
from homiebot.runtime import SceneCache, agent_settings, check_scene_names, make_task, scene_json
from homiebot.safety.gate import SafetyGate
from homiebot.safety.state import SafetyState

BAG_STOP_TIMEOUT = 5.0  # seconds the recorder may take to close a bag (it waits at most settle_limit, 2 s, for quiet)
DISCOVERY_SETTLE = 1.0  # seconds for a restarted node's topics to be matched both ways before an episode uses them
BAG_CLOSE_WAIT = 1.5  # seconds a stopping task manager waits for the stopping recorder to close the episode's bag
BAG_LATE_CLOSE = 15.0  # seconds more for a recorder that did not answer StopBag in time (loaded) to close it
DEACTIVATED = "the task manager node was deactivated"
MAX_ID_CHARS = 256  # longer text on /homiebot/cancel is no submission id (ids are 12 hex characters)


# the nodes the graph starts besides this one (homiebot.ros.bringup.graph: GRAPH_NODES, sim_driver, policy_<model>)
GRAPH_NODES = ("world", "mapper", "planner", "detector", "executor", "recorder", "sim_driver")


def graph_node(name: str) -> bool:
    """Whether a node of this name is one the graph starts (its heartbeats are watched; others' are not waited for)."""
    return name in GRAPH_NODES or name.startswith("policy_")


class TaskManagerNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.node = node
        self.cfg = params[RUN_CONFIG]
        self.params = params
        self.owner = node.get_fully_qualified_name()  # holds the world's episode session (see ResetWorld)
        self.world_calls = world_callers(node, EPISODE_CALLS)
        self.reset_planner = ServiceCaller(node, ResetPlanner, "planner/reset", "planner")
        self.plan = ActionCaller(node, PlanSubtask, "planner/plan", "planner")
        self.check = ServiceCaller(node, Check, "detector/check", "detector")
        self.list_models = ServiceCaller(node, ListModels, "executor/models", "executor")
        self.execute = ActionCaller(node, ExecuteSubtask, "executor/execute", "executor")
        self.typed: list[ServiceCaller | ActionCaller] = [*self.world_calls.values(), self.reset_planner, self.plan, self.check,
                                                          self.list_models, self.execute]
        self.planner_backend = PlannerBackend(node)
        self.cache = ObservationCache(node, kinds=("image",), round_topics=("belief",))  # PNGs are colour
        self.scenes = SceneCache(self.cfg.world.name)
        self.recorder = (ServiceCaller(node, StartBag, "recorder/start", "recorder"),
                         ServiceCaller(node, StopBag, "recorder/stop", "recorder")) if params["record_bag"] else None
        self.pubs = {"task/status": node.create_publisher(hb.TaskStatus, STATUS_TOPIC, STATUS_QOS),
                     "subtask": node.create_publisher(hb.PlannerOutput, "subtask", RELIABLE),
                     "feedback": node.create_publisher(hb.Feedback, "feedback", RELIABLE)}
        self.queue: queue.Queue[dict] = queue.Queue()
        self._seen: dict[str, None] = {}  # ids of recent submissions, oldest first
        self._reporters: dict[str, Callable[[dict[str, Any]], None]] = {}  # id -> who hears its events (RunTask goals)
        self._cancelled: set[str] = set()  # ids cancelled while queued: skipped when their turn comes
        self._stopping = threading.Event()
        self.watch = NodeWatch(node, params["heartbeat_timeout"], self._node_lost, optional=frozenset({"recorder"}), belongs=graph_node,
                               hang_timeout=params["hang_timeout"])
        self._current: str | None = None  # id of the task being run
        self._instances: dict[str, str] = {}  # node processes at the start of the last episode
        self._endpoints: set[tuple[str, str, str]] = set()  # their /homiebot endpoints then
        # the deciding half of the safety layer: pauses while the e-stop holds, keep-out rules, approval, cancel
        self.running: tuple[str, RemoteWorld] | None = None  # (submission id, world) of the episode in flight
        self.safety = SafetyState()
        self.safety_link = SafetyLink(node, self.safety, authority=True, episode=lambda: self.running[0] if self.running else None,
                                      heartbeat=self.cfg.safety.estop_heartbeat)
        self.safety_link.hear_others(self.safety.add)
        self.approver = TopicApprover(node) if self.cfg.safety.approve != "never" else None
        # questions go out on /homiebot/ask from this node (``user: ros``); made once, answers are matched by round
        self.ros_user = RosUser(timeout=float(params["ask_timeout"]), node=node) if self.cfg.user == "ros" else None
        self.pub_cancelled = node.create_publisher(UInt32, CANCELLED_TOPIC, RELIABLE)
        self.run_task = RunTaskServer(node, self.accept, self.reject, self.cancel)
        node.create_subscription(String, CANCEL_TOPIC, safe_callback(node, CANCEL_TOPIC, self._on_cancel), RELIABLE)
        self._worker_thread = threading.Thread(target=self._worker, daemon=True)
        self._worker_thread.start()

    @staticmethod
    def _say(text: str) -> None:
        """A line of the graph's log (``homiebot up`` shows the nodes' standard output)."""
        try:
            print(text, flush=True)
        except (OSError, ValueError):  # nobody reads the log any more (a closed pipe): the episode goes on
            pass

    def _status(self, **event: Any) -> None:
        """Publish a status event, and hand it to the RunTask goal it belongs to (feedback or result)."""
        report = self._reporters.get(str(event.get("id")))
        if report is not None and event.get("state") in ("finished", "failed"):
            self._reporters.pop(str(event["id"]), None)
        try:
            self.pubs["task/status"].publish(event_to_status({"time": time.time(), **event}))
            if report is not None:
                report(event)
        except Exception:  # the node is being destroyed under a worker that outlived close(): nobody hears it
            if not self._stopping.is_set():
                raise

    def accept(self, value: dict[str, Any], report: Callable[[dict[str, Any]], None]) -> None:
        """Check a submission (a RunTask goal's request, with its id) and queue it; its status events go
        out on /homiebot/task/status and to ``report``."""
        rid = str(value["id"])
        self._reporters[rid] = report
        try:
            submission = Submission.model_validate(value)
        except ValidationError as err:
            self._status(id=rid, state="failed", cause="invalid", reason=f"invalid submission: {describe(err)}")
            return
        too_long = self._too_long(submission)
        self._remember(rid)
        if too_long:
            self._status(id=rid, state="failed", cause="invalid", reason=f"invalid submission: {too_long}")
            return
        self._status(id=rid, state="accepted", queued=self.queue.qsize())
        self.queue.put({**submission.model_dump(exclude_none=True), "id": rid})

    def reject(self, rid: str, reason: str, report: Callable[[dict[str, Any]], None]) -> None:
        """Fail a goal that cannot be read as a submission, as an invalid submission fails."""
        self._reporters[rid] = report
        self._status(id=rid, state="failed", cause="invalid", reason=reason)

    def _too_long(self, submission: Submission) -> str | None:
        text = submission.instruction if submission.instruction is not None else (submission.task or {}).get("instruction")
        return instruction_too_long(text, self.params["max_instruction_chars"], "max_instruction_chars") if isinstance(text, str) else None

    def _remember(self, rid: str) -> None:
        self._seen[rid] = None
        while len(self._seen) > 10000:
            self._seen.pop(next(iter(self._seen)))

    def _finalise_leftovers(self) -> None:
        """Publish the episode folders a task manager that died left behind. The recorder may still be
        writing a bag into one of them: it is told to stop first, so that the bag is closed (with its
        metadata) before the folder moves."""
        open_bags = [bag for bag in Path(self.params["out_dir"]).glob("*.partial/bag") if not (bag / "metadata.yaml").is_file()]
        if open_bags and self.recorder is not None:
            try:
                self.recorder[1].call(StopBag.Request(), BAG_STOP_TIMEOUT)
            except (ServiceError, ServiceTimeout) as err:
                self.node.get_logger().warning(f"the bag of an episode cut off by a task manager that stopped may be incomplete: {err}")
        for folder in finalise_leftovers(self.params["out_dir"], "the task manager stopped before this episode ended"):
            self.node.get_logger().warning(f"finalised the record of an episode cut off by a task manager that stopped: {folder}")

    def _worker(self) -> None:
        self._finalise_leftovers()  # before the first task (tasks queue meanwhile)
        while not self._stopping.is_set():
            try:
                request = self.queue.get(timeout=0.2)
            except queue.Empty:
                continue
            if not services.serving(self.node):  # deactivated while it was queued
                self._status(id=request["id"], state="failed", cause="interrupted", termination="interrupted",
                             reason=f"{DEACTIVATED} before it started; activate it and send the task again")
                self._say(f"submission {request['id']} dropped: {DEACTIVATED}")
                continue
            if request["id"] in self._cancelled:
                self._cancelled.discard(request["id"])
                self._status(id=request["id"], state="failed", cause="cancelled", termination="cancelled",
                             reason="cancelled before it started")
                self._say(f"submission {request['id']} cancelled before it started")
                continue
            try:
                self._run(request)
            except ServiceInterrupted as err:  # deactivated as it started
                self._status(id=request["id"], state="failed", cause="interrupted", termination="interrupted", reason=str(err))
                self._say(f"submission {request['id']} interrupted: {err}")
            except (TaskError, SceneError, ConfigError) as err:  # what was asked cannot be run: the submitter's to fix
                self._status(id=request["id"], state="failed", cause="invalid", reason=str(err))
                self._say(f"submission {request['id']} refused: {err}")
            except Exception as err:  # report and serve the next task
                self._status(id=request["id"], state="failed", cause="error", reason=f"{type(err).__name__}: {err}")
                self._say(f"submission {request['id']} could not run: {type(err).__name__}: {err}")

    def _node_lost(self, node: str, reason: str) -> None:
        """A node of the graph died or was replaced mid-episode: fail the calls in flight at once. The
        recorder is the exception: the episode goes on, with a warning that its bag is incomplete."""
        if node == "recorder":  # the episode goes on without its bag, as when no recorder runs at all
            for caller in self.recorder or ():
                caller.abort(reason)
            self._bag_problem(self._current or "", f"the bag of this episode is incomplete: {reason}")
            return
        self.node.get_logger().error(reason)
        for client in self.typed:
            client.abort(reason)

    def _all_clients(self) -> list[ServiceCaller | ActionCaller]:
        return [*self.typed, *(self.recorder or ())]

    def deactivate(self) -> None:
        """The node was deactivated (lifecycle): the episode in flight ends as ``interrupted``, its record
        written, and queued submissions fail without starting; their RunTask clients get these results
        while the node still spins, before a cleanup removes the action server."""
        for client in self.typed:  # not the recorder: the episode's bag is still to be closed
            client.abort(DEACTIVATED, interrupted=True)

    def interrupt(self) -> None:
        """The process is stopping: what follows (the bag, the record) must not wait long."""
        self._stopping.set()

    def close(self) -> None:
        """Stop: the episode in flight ends as ``interrupted`` and its record is written (within ~3 s)."""
        self._stopping.set()
        self.watch.stop()
        for client in self.typed:  # not the recorder: the episode's bag is still to be closed
            client.abort("the task manager is stopping", interrupted=True)
        self._worker_thread.join(2.5)

    def _on_cancel(self, msg: String) -> None:
        """``/homiebot/cancel``: a submission's id (running or queued), or empty for whatever runs."""
        wanted = str(msg.data).strip()
        if len(wanted) > MAX_ID_CHARS:  # no submission has such an id; logged in bounded form
            self.node.get_logger().warning(f"cancel: ignored an id of {len(wanted)} characters ({wanted[:24]!r}...); "
                                           "send a submission id, or an empty message for the running episode")
            return
        self.cancel(wanted)

    def cancel(self, wanted: str) -> None:
        """Cancel a submission: the running episode ends as ``cancelled`` (its record written); a queued one
        is dropped when its turn comes; empty: whatever runs."""
        running = self.running
        if running is not None and wanted in ("", running[0]):
            self.safety.cancel(f"cancel of '{running[0]}'")
            self.pub_cancelled.publish(UInt32(data=running[1].episode))
            self.plan.abort(f"cancel of '{running[0]}'", cancelled=True)  # a model generating for minutes is not waited for
        elif wanted and wanted in self._seen:
            self._cancelled.add(wanted)
        else:
            self.node.get_logger().warning(f"cancel '{wanted}': no such episode is running or queued")

    def _user(self, task: Task, world: RemoteWorld, seed: int) -> User | None:
        """Who answers the planner's questions: the config's ``user`` (none, ros, simulated or a persona)."""
        if self.cfg.user == "none":
            return None
        if self.ros_user is not None:
            return self.ros_user
        return make_user(self.cfg.user, task, world.scene_description(), seed)

    def _task(self, request: dict) -> Task:
        if "task" in request:
            try:
                task = Task.model_validate(request["task"])
            except ValidationError as err:
                raise TaskError(f"invalid task: {describe(err)}") from None
        elif "task_file" in request:  # read again under the limits: the file may have changed since the goal came
            try:
                task = task_from_data(task_file_data(request["task_file"]), request["task_file"])
            except GoalError as err:
                raise TaskError(str(err)) from None
        else:
            scene = request.get("scene")
            task = make_task(request.get("instruction"), None if scene is None else str(scene), self.scenes.world)
        too_long = instruction_too_long(task.instruction, self.params["max_instruction_chars"], "max_instruction_chars")
        if too_long:
            raise TaskError(too_long)
        if not task.instruction.strip():
            raise TaskError("the instruction is empty; say what the robot should do")
        return task

    def _wait_for_nodes(self) -> None:
        """Until every node's services are discovered, before each episode. Nodes without services (the
        mapper) are waited for by their heartbeats; after a restart the new process is given a moment
        to be discovered on its data topics too: until this node sees all the endpoints it saw before
        the restart, and a moment more for the other nodes."""
        deadline = time.monotonic() + self.params["connect_timeout"]
        while (silent := self.watch.missing()) and time.monotonic() < deadline:
            time.sleep(0.1)
        if silent:
            raise RuntimeError(f"the {', '.join(silent)} node(s) are not running (waited {self.params['connect_timeout']:g} s)")
        names = set(self.watch.instances())
        if self._instances and self.watch.instances() != self._instances:  # a node was restarted since the last episode
            while not self._endpoints <= endpoints(self.node, names) and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(DISCOVERY_SETTLE)  # we see its topics; give the other nodes the same moment
        self._instances = self.watch.instances()
        missing = []
        for caller in self.typed:
            try:
                caller.verify(max(0.5, deadline - time.monotonic()))
            except ServiceTimeout:
                missing.append(caller.who)
        if missing:
            missing = sorted(set(missing))
            raise RuntimeError(f"the {', '.join(missing)} node(s) are not running (waited {self.params['connect_timeout']:g} s)")
        doubled = {c.resolved: servers for c in self.typed if len(servers := c.servers()) > 1}
        if doubled:  # answers would come from either, round by round
            raise RuntimeError("; ".join(f"{len(who)} nodes serve {name} ({', '.join(who)})" for name, who in doubled.items())
                               + ": the graph takes one server per call; shut the node you replace down (`ros2 lifecycle set "
                               "<node> shutdown`) or stop it, then send the task again")
        self._endpoints = endpoints(self.node, names)  # what a restarted node must be back on
        # the world sends frames only to readers it has matched: the record's images must not miss the first round
        self.cache.wait_for_cameras(max(0.5, deadline - time.monotonic()))

    def _start_bag(self, rid: str, writer: EpisodeWriter) -> bool:
        """Ask the recorder node to record this episode; False (and a warning) if it cannot."""
        if self.recorder is None:
            return False
        start, _ = self.recorder
        if not start.connected:
            self._bag_problem(rid, "this episode is not recorded into a bag: no recorder node is running "
                                   "(start the graph with its recorder, or set record_bag: false)")
            return False
        try:
            start.call(StartBag.Request(path=str((writer.work_dir / "bag").resolve())), self.params["timeout"])
            return True
        except (ServiceError, ServiceTimeout) as err:
            self._bag_problem(rid, f"this episode is not recorded into a bag: {err}")
            return False

    def _stop_bag(self, rid: str, bag: Path) -> None:
        assert self.recorder is not None  # only after _start_bag succeeded
        if self._stopping.is_set():
            # nothing spins this node any more, so no answer could arrive; the recorder, stopped with the
            # graph, closes the bag itself: the folder is moved only once it has (or after BAG_CLOSE_WAIT)
            self._await_closed(rid, bag, "the graph is stopping and the recorder", BAG_CLOSE_WAIT)
            return
        try:
            # the recorder settles for at most a few seconds: the record is not held up longer by its bag
            self.recorder[1].call(StopBag.Request(), min(self.params["timeout"], BAG_STOP_TIMEOUT))
        except ServiceTimeout:
            # a loaded recorder still closes the bag: moved before that, the bag would lose its metadata (written by path)
            self._await_closed(rid, bag, "the recorder", BAG_LATE_CLOSE)
        except ServiceError as err:  # the record itself must still be written
            self._bag_problem(rid, f"the bag may be incomplete: {err}")

    def _await_closed(self, rid: str, bag: Path, who: str, limit: float) -> None:
        """Wait up to ``limit`` s for the recorder to close ``bag`` (its metadata written), else say so."""
        deadline = time.monotonic() + limit
        while not (bag / "metadata.yaml").is_file():
            if time.monotonic() > deadline:
                self._bag_problem(rid, f"{who} did not close the bag within {limit:g} s: it may lack its metadata "
                                       "(the recorded messages are in its .mcap file)")
                return
            time.sleep(0.02)

    def _bag_problem(self, rid: str, message: str) -> None:
        self.node.get_logger().warning(message)
        self._status(id=rid, state="warning", reason=message)

    def _run(self, request: dict) -> None:
        rid = self._current = request["id"]
        started = time.perf_counter()
        for client in self._all_clients():
            client.resume()
        if not services.serving(self.node):  # deactivated since it was taken from the queue: its abort came first
            self.deactivate()
        task = self._task(request)
        scene = self.scenes.get(task)
        check_scene_names(task, scene, self.scenes.world)
        self._wait_for_nodes()
        seed = int(request.get("seed", self.cfg.seed))
        timeout = self.params["timeout"]
        world = RemoteWorld(self.world_calls, self.cache, scene_json(scene, self.scenes.world), timeout, owner=self.owner,
                            reset_timeout=self.params["reset_timeout"])
        world.reset()  # loads the scene, so that the skills can be listed
        executor = RemoteExecutor(self.list_models, self.execute, timeout, self.params["execute_timeout"])
        planner = RemotePlanner(self.reset_planner, self.plan, timeout, self.params["plan_timeout"], world)
        planner_name = self.planner_backend.name(timeout)  # a planner node of another make may not say: its reset does
        c = self.cfg
        settings = agent_settings(c)
        gate = SafetyGate(c.safety, self.safety, self.approver)
        self.running = (rid, world)
        parts = EpisodeParts(world, planner, executor, executor.models, settings, planner_name, gate=gate, user=self._user(task, world, seed),
                             make_checker=lambda t: RemoteChecker(self.check, executor.capabilities(), t.aliases, timeout, world,
                                                                  executor.unavailable))
        writer = EpisodeWriter(self.params["out_dir"], f"{task.id}_seed{seed}", images=c.output.images, video=c.output.video)
        writer.write_start({"instruction": task.instruction, "task_id": task.id, "planner": planner_name, "seed": seed,
                            "max_rounds": c.max_rounds, "scene": world.scene_description()})
        if self._start_bag(rid, writer):
            writer.before_finish.append(lambda: self._stop_bag(rid, writer.work_dir / "bag"))
        setup = round(time.perf_counter() - started, 4)  # scene, world reset, capabilities: before the episode's clock starts
        profile = c.skill_profile if isinstance(c.skill_profile, str) else "custom"
        self._status(id=rid, state="running", instruction=task.instruction, seed=seed, setup_s=setup, planner=planner_name,
                     profile=profile, episode=writer.episode_id)
        self._say(f"submission {rid}, episode {writer.episode_id}: {task_line(task.instruction, planner_name, seed, profile)}")
        config = c.model_dump(mode="json")
        config["planner"] = {**config["planner"], "name": planner_name}

        def on_step(step: StepRecord) -> None:
            if step.output is not None:
                self.pubs["subtask"].publish(planner_output_msg(step.output))
            self.pubs["feedback"].publish(feedback_msg(step.feedback))
            fb = step.feedback
            subtask, model = (step.output.subtask.text(), step.output.model) if step.output else (None, None)
            code, seconds = fb.code.value if fb.code else None, round(step.timings.total, 4)
            stand_in = fb.details.get(STAND_IN)
            self._status(id=rid, state="round", round=step.round, subtask=subtask, model=model, code=code, success=fb.success,
                         message=fb.message, seconds=seconds, stand_in=stand_in)
            self._say(round_line(step.round, subtask, model, code, seconds, fb.success, fb.message, stand_in))

        folder = writer.final_dir
        self.watch.begin()
        try:
            # an episode that failed before its first round (the planner refused the instruction, a node
            # did not answer) leaves nothing to keep: its folder goes, its bag closed first; one with rounds
            # written stays (a full disk at the end: its .partial folder, as the failure says)
            record = play_episode(parts, task, seed, writer=writer, config=config, on_step=on_step, discard_on=(Exception,))
        except Exception as err:
            reason = self.watch.lost or str(err)
            termination = getattr(err, "termination", "error")
            cause = "interrupted" if termination == "interrupted" else "invalid" if isinstance(err, PlannerConfigError) else "error"
            recorded = (folder / "episode.json").is_file()
            self._status(id=rid, state="failed", reason=reason, termination=termination, cause=cause,
                         **({"record": str(folder / "episode.json")} if recorded else {}))
            what = {"invalid": "refused", "interrupted": "interrupted"}.get(cause, "could not run")
            self._say(f"episode {writer.episode_id} {what}: {reason}" + (f"; what was recorded: {folder / 'episode.json'}" if recorded else ""))
            return
        finally:
            self.running = None
            self.watch.end()
            world.release()
        failed = sum(1 for s in record.steps if not s.feedback.success)
        self._status(id=rid, state="finished", record=str(folder / "episode.json"), ended=record.ended,
                     goal_satisfied=record.goal_satisfied, rounds=len(record.steps), termination=record.termination,
                     setup_s=setup, wall_time_s=round(record.wall_time, 4), failed=failed, path_length=record.path_length,
                     error=record.error, why=end_reason(record))
        verdict = verdict_line(record.goal_satisfied, record.ended, record.termination, len(record.steps), failed, record.path_length,
                               setup + record.wall_time)
        why = f"; why it ended: {end_reason(record)}" if end_reason(record) else ""
        self._say(f"episode {writer.episode_id}: {verdict}{why}; episode record: {folder / 'episode.json'}")


PARAMS = (
    Param("out_dir", "runs", "where episode folders are written"),
    Param("timeout", 30.0, "seconds any node may take to answer a call", positive),
    Param("reset_timeout", 120.0, "seconds the world may take to start an episode (a new scene's world; a mapped task's exploration phase)",
          positive),
    Param("plan_timeout", 120.0, "seconds the planner may take per round", positive),
    Param("execute_timeout", 120.0, "seconds the executor may take per subtask", positive),
    Param("connect_timeout", 30.0, "seconds to wait for the other nodes before a task fails", positive),
    Param("record_bag", True, "have the recorder node write every /homiebot topic of each episode into <episode>/bag (MCAP)"),
    Param("max_instruction_chars", MAX_INSTRUCTION_CHARS, "longest instruction accepted in a submission", positive),
    Param("ask_timeout", 60.0, "seconds to wait on /homiebot/answer for the answer to a question (user: ros)", positive),
    Param("heartbeat_timeout", 3.0, "seconds without a node's heartbeat after which its death fails the episode", positive),
    Param("hang_timeout", 10.0, "seconds a node on this machine whose process still runs may go without a heartbeat before it "
          "counts as hung (a busy machine silences live nodes for seconds; one whose process ended is named at once)", positive),
)


# the run configuration's sections this node reads: their settings are its parameters too
CONFIG = ("seed", "max_rounds", "history_window", "detector", "skill_profile", "output", "safety", "user", "world")
NODE = NodeDef("task_manager", TaskManagerNode, PARAMS, config=CONFIG)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
