"""The deploy graph against simulation: ``homiebot up`` with ``config/robots/spot_sim.yaml`` (the
``ros2_robot`` world over Spot's driver names, the sim driver serving the embedded home, learned-policy
skills fed by the simulator's expert sources) runs a task to its goal; so does ``fetch_sim.yaml``.
Both run in lock-step (the shipped configs plus ``lockstep: true``), so that the episodes do not depend
on the machine's load; ``benchmarks/bench_robot.py --episode`` runs the shipped configs in real time.

Then one process does what the node running skills does (world and skills built from the same config
by the runtime) against the graph's sim driver: it never imports the home either; every command goes
through the profile's topics and services (the driver's command counters); without simulator truth
(the robot's own config) the expert sources refuse at start-up; stopping the graph (its sim driver)
mid-skill fails the attempt with the reason ``unavailable``. The same expert navigation in-process
reaches the same goal.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.resources import robot_config  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = domain_of(__name__)  # and the next one (domain_of(__name__, 1))
FETCH_DOMAIN = domain_of(__name__, 2)  # the fetch_sim processes
# The demo episodes' planner: the rounds the heuristic (the shipped configs') plays once it has found the fridge.
# It searches the rooms first in these views, which costs minutes of lock-step simulation for nothing the graph
# checks here; `bench_robot.py --episode` runs the heuristic. (The oracle reads the embedded home's state: not here.)
DEMO_PLAN = [("the fridge is in the kitchen", "[Go to, fridge]", "NoMaD"), ("the can goes inside: open it first", "[Open, fridge]", "octo"),
             ("the can is on the brown table", "[Go to, green_can]", "PixNav"), ("take it", "[Pick, green_can]", "RT-1-X"),
             ("back to the fridge", "[Go to, fridge]", "NoMaD"), ("put it inside", "[Put, green_can, fridge]", "RT-1-X"),
             ("the can is in the fridge", "[End]", "")]


def replay(plan: list[tuple[str, str, str]]) -> str:
    """A config line: the replay planner with these (analysis, subtask, model) rounds."""
    outputs = json.dumps([json.dumps({"analysis": a, "subtask": s, "model": m}) for a, s, m in plan])
    return "planner: {name: replay, params: {outputs: " + outputs + "}}"

# What the node that runs skills does with the shipped config; prints one JSON line per phase.
SKILL_PROCESS = r'''
import json, sys
from homiebot.core.errors import ConfigError
from homiebot.config import load_config
from homiebot.core.contracts import Action, Subtask
from homiebot.executor import Executor
from homiebot.runtime import build_skills, build_world

def say(**kw):
    print(json.dumps(kw), flush=True)

cfg = load_config(sys.argv[1])
world = build_world(cfg, None)
# where the graph's episode left the can, and what the sim driver counted (before this process restarts the home)
truth = world.ground_truth()
say(phase="after_episode", can=truth.dynamic()["locations"]["green_can"], held=world.belief.held_object(), driver=truth.counters())
skills = build_skills(cfg, world)
world.reset()
obs = world.observe(0)
front = obs.views["front"].rgb
say(phase="built", skills=sorted(skills.skills), unavailable=skills.unavailable, views={v: list(i.rgb.shape) for v, i in obs.views.items()},
    grey=bool((front[..., 0] == front[..., 1]).all()), depth=obs.views["front"].depth is not None, labels=sorted(label.name for label in obs.labels.values()),
    names=world.belief.names(), bridge=world.own_robot().counters.counts)
# the robot's own config (no simulator truth): expert sources refuse at start-up, naming why
robot_cfg = cfg.model_copy(update={"world": cfg.world.model_copy(update={"params": {**cfg.world.params, "sim_truth": False, "segmentation": False,
                                                                                    "lockstep": False}})})
plain = build_world(robot_cfg, None)
plain.reset()
seen = plain.observe(0)
say(phase="plain", labels=len(seen.labels), segmentation=seen.views["front"].segmentation is not None)
try:
    build_skills(robot_cfg, plain)
    say(phase="robot", refused=None)
except ConfigError as err:
    say(phase="robot", refused=str(err))
plain.close()
say(phase="kill me")
run = Executor(skills.skills, max_attempts=2).execute(Subtask(action=Action.GO_TO, target="fridge"), "NoMaD", world, 0, 2)
say(phase="killed", code=run.feedback.code.value if run.feedback.code else None, reason=run.feedback.details.get("reason"),
    message=run.feedback.message)
say(phase="modules", home=sorted(m for m in sys.modules if m.startswith("homiebot.worlds.home")))
'''


def lockstep_config(robot: str, folder: Path, planner: str | None = None) -> Path:
    """The shipped ``<robot>_sim.yaml`` with the world and the sim driver in lock-step (and another planner)."""
    text = Path(robot_config(robot, sim_driver=True)).read_text()
    text = text.replace("segmentation: true,", "segmentation: true, lockstep: true,")
    text = text.replace("camera_size: 120x160}", "camera_size: 120x160, lockstep: true}")
    text = text.replace("../scenes/demo.yaml", str(ROOT / "config" / "scenes" / "demo.yaml"))
    assert text.count("lockstep: true") == 2, "the shipped config changed: update lockstep_config"
    if planner is not None:
        assert text.count("planner: {name: heuristic}") == 1
        text = text.replace("planner: {name: heuristic}", planner)
    config = folder / f"{robot}_lockstep.yaml"
    config.write_text(text)
    return config


SKILL_PROCESS_LIMIT = 420.0  # s for all of the skill process's phases: a hang, not a slow machine, passes it


def _lines_within(proc: subprocess.Popen, limit: float, phases: dict) -> Iterator[str]:
    """``proc``'s output lines, failing the test when it has not ended within ``limit`` s (rather than
    waiting for it forever: once a process hung after its peer died, inside Fast DDS's shared-memory port recovery)."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for text in proc.stdout:  # type: ignore[union-attr]
            lines.put(text)
        lines.put(None)  # the end of its output

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + limit
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            proc.kill()  # a process we started
            pytest.fail(f"the skill process did not end within {limit:.0f} s (phases seen: {sorted(phases)})", pytrace=False)
        if line is None:
            return
        yield line


def _interrupt(*procs: subprocess.Popen) -> None:
    """Stop processes we started with SIGINT (a graph then stops its nodes; killing it outright would
    orphan them), killing those still running after 60 s."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _simulator_loaded(parent: int) -> dict[str, bool]:
    """Module of each node process ``homiebot up`` started -> whether MuJoCo (the embedded home's
    simulator) is mapped into it (/proc/<pid>/maps)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            args = (entry / "cmdline").read_bytes().split(b"\0")
            maps = (entry / "maps").read_text()
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if ppid == parent and b"-m" in args:
            out[args[args.index(b"-m") + 1].decode()] = "mujoco" in maps
    return out


@pytest.fixture(scope="module")
def fetch_episode(tmp_path_factory):
    """``homiebot up`` with the shipped fetch_sim config in lock-step, and the demo task submitted to it: started
    before the spot_sim episode, on its own domain, so that the two episodes run at the same time."""
    tmp = tmp_path_factory.mktemp("fetch")
    env = ros_environment(FETCH_DOMAIN)
    config = lockstep_config("fetch", tmp, planner=replay(DEMO_PLAN))
    up = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(config), "--out",
                           str(tmp / "runs"), "--no-bag"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    submit = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(ROOT / "config" / "tasks" / "demo.yaml"),
                               "--timeout", "900"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        yield {"up": up, "submit": submit, "env": env, "runs": tmp / "runs", "config": config}
    finally:
        _interrupt(submit, up)


@pytest.fixture(scope="module")
def bridged(tmp_path_factory, fetch_episode):
    """``homiebot up`` with the shipped spot_sim config in lock-step (the heuristic's rounds, replayed) runs the demo task; then
    a process builds the world and skills from the same config against the graph's sim driver, and the
    graph is stopped (its sim driver with it) while that process runs a skill. (The fetch_sim episode runs
    meanwhile.)"""
    tmp = tmp_path_factory.mktemp("bridged")
    config = lockstep_config("spot", tmp, planner=replay(DEMO_PLAN))
    task = ROOT / "config" / "tasks" / "demo.yaml"
    env = ros_environment(DOMAIN)
    up_log = tmp / "up.log"
    with up_log.open("w") as log:
        up = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(config), "--out", str(tmp / "runs"), "--no-bag"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    proc = None
    phases: dict[str, dict] = {}
    try:
        submitted = subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(task), "--timeout", "600"], cwd=ROOT,
                                   env=env, capture_output=True, text=True, timeout=660)
        phases["episode"] = {"returncode": submitted.returncode, "stdout": submitted.stdout + submitted.stderr,
                             "record": json.loads(next((tmp / "runs").glob("*/episode.json")).read_text())}
        phases["nodes"] = {"simulator_loaded": _simulator_loaded(up.pid), "log": up_log.read_text()}
        proc = subprocess.Popen([sys.executable, "-c", SKILL_PROCESS, str(config)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        for line in _lines_within(proc, SKILL_PROCESS_LIMIT, phases):
            data = json.loads(line)
            phases[data["phase"]] = data
            if data["phase"] == "kill me":
                up.send_signal(signal.SIGINT)  # the graph we started stops, its sim driver with it, mid-skill
                up.wait(timeout=60)
        proc.wait(timeout=120)
        assert "modules" in phases, f"the skill process ended early ({proc.returncode}): {proc.stderr.read()[-2000:]}"  # type: ignore[union-attr]
        yield phases
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()  # a process we started
            proc.wait()
        _interrupt(up)


def test_homiebot_up_with_spot_sim_reaches_the_tasks_goal_through_the_bridge(bridged) -> None:
    episode = bridged["episode"]
    assert episode["returncode"] == 0 and "goal reached" in episode["stdout"], episode["stdout"]
    record = episode["record"]
    assert record["goal_satisfied"] is True and record["termination"] == "end"
    steps = [s for s in record["steps"] if s["skill"] is not None]  # rounds that ran a skill (not End, nor a refused subtask)
    assert {s["skill"] for s in steps} == {"policy:sim_expert"}  # learned-policy skills fed by the simulator's experts
    actions = [s["output"]["subtask"]["action"] for s in steps]
    assert actions.count("Put") == 1 and "Open" in actions and "Pick" in actions, actions
    assert record["path_length"] > 1.0  # odometry: the robot drove between the rooms


def test_the_bridged_world_sees_through_spots_cameras_with_truth_only_in_simulation(bridged) -> None:
    built = bridged["built"]
    assert built["skills"] == ["NoMaD", "PixNav", "RT-1-X", "octo"] and built["unavailable"] == {}
    assert built["views"] == {v: [128, 128, 3] for v in ("front", "left", "back", "right")}
    assert not built["grey"] and built["depth"]  # spot_ros2's default (rgb_cameras: true): colour body cameras (bgr8), with registered depth
    assert {"kitchen", "bathroom", "blue_bowl"} <= set(built["labels"]), built["labels"]  # oracle perception in simulation: the sim driver's segmentation and labels
    assert bridged["plain"] == {"phase": "plain", "labels": 0, "segmentation": False}  # the robot's own config: what a robot sees
    assert "brown_table" in built["names"] and "fridge" in built["names"]  # the belief: the sim driver's truth topic


def test_every_command_of_the_episode_went_through_the_profiles_topics_and_services(bridged) -> None:
    after = bridged["after_episode"]
    assert after["can"][0] == "fridge" and after["held"] is None  # the sim driver's truth: the can is in the fridge
    driver = after["driver"]
    assert driver["cmd_vel"] > 0 and driver["applied"] > 0 and driver["expert_acts"] > 0  # /spot/cmd_vel, the expert service
    assert driver["arm_goals"] > 0  # /spot/arm_pose_commands
    # claim, power_on, stand (Spot refuses to move without them), arm_unstow, open_gripper, close_gripper, arm_stow
    assert driver["services"] >= 3 + 4
    bridge = bridged["built"]["bridge"]  # the skill process's own bridge ran the same start-up procedure
    assert all(bridge[f"service:{s}"] == 1 for s in ("claim", "power_on", "stand"))


def test_the_process_running_skills_never_imports_the_embedded_home(bridged) -> None:
    loaded = bridged["nodes"]["simulator_loaded"]
    assert loaded["homiebot.ros.nodes.sim_driver"] is True  # the one node that serves the home (the check can tell)
    # the deployed graph (world bridge, executor running the skills, planner, detector ...) never loads the simulator
    assert {m: v for m, v in loaded.items() if m != "homiebot.ros.nodes.sim_driver"} == \
        {f"homiebot.ros.nodes.{n}": False for n in ("world", "mapper", "planner", "detector", "executor", "task_manager")}
    assert "skills run here, through this node's own bridge to the robot" in bridged["nodes"]["log"]  # the executor node
    assert bridged["modules"]["home"] == []  # a process building world and skills from the config does not import it either


def test_on_the_robot_expert_sources_refuse_at_start_up_with_the_reason(bridged) -> None:
    refused = bridged["robot"]["refused"]
    assert refused is not None and "no configured skill can run here" in refused
    assert "NoMaD" in refused and "truth" in refused


def test_killing_the_sim_driver_mid_skill_fails_the_attempt_as_unavailable(bridged) -> None:
    killed = bridged["killed"]
    assert killed["code"] == "E1" and killed["reason"] == "unavailable", killed["message"]


def test_the_same_expert_episode_in_process_reaches_the_same_goal(bridged, tmp_path: Path) -> None:
    """The demo task in the embedded home, in-process (config/sim_expert.yaml: the same planner and experts
    driving the home's own robot), reaches the same goal with the same manipulation subtasks."""
    out = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", "config/tasks/demo.yaml", "--config",
                          "config/sim_expert.yaml", "--seed", "0", "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    in_process = json.loads(next(tmp_path.glob("*/episode.json")).read_text())
    bridged_record = bridged["episode"]["record"]
    assert in_process["goal_satisfied"] is True and bridged_record["goal_satisfied"] is True
    def done(record: dict) -> set[tuple[str, str | None, str | None]]:
        # what the hand did (in real time the route may differ: what the robot sees on its way depends on timing)
        return {(s["output"]["subtask"]["action"], s["output"]["subtask"]["target"], s["output"]["subtask"]["place"])
                for s in record["steps"] if s["output"] and s["feedback"]["status"] == "success" and s["output"]["subtask"]["action"] != "Go to"}

    assert done(in_process) == done(bridged_record)
    assert bridged["after_episode"]["can"][0] == "fridge"  # where the bridged episode left the can




# After the fetch_sim episode: the sim driver's truth and counters, read through a bridged world of the same config.
FETCH_AFTER = r'''
import json, sys
from homiebot.config import load_config
from homiebot.runtime import build_world

world = build_world(load_config(sys.argv[1]), None)
truth = world.ground_truth()
out = {"can": truth.dynamic()["locations"]["green_can"], "driver": truth.counters()}
robot = world.own_robot()
looks = robot.counters.counts.get("point_head", 0)  # the start-up one: ahead
obs = world.observe(0)  # the views: the head turned left and right, then ahead again
arm = robot.arm_state()
out.update(blank={v: int(i.rgb.max()) == 0 for v, i in obs.views.items()}, joints=list(arm.joint_names),
           pan=dict(zip(arm.joint_names, arm.joint_positions))["head_pan_joint"],
           distinct=[not (obs.views[a].rgb == obs.views[b].rgb).all() for a, b in (("front", "left"), ("front", "right"), ("left", "right"))],
           head_camera_z=robot.camera_info("head_camera").base_from_camera[:3, 2].round(3).tolist(),
           looks=robot.counters.counts.get("point_head", 0) - looks,
           heads_after=world.ground_truth().counters()["head_goals"])
print(json.dumps(out), flush=True)
world.close()
'''


def test_homiebot_up_with_fetch_sim_reaches_the_demo_goal_through_fetchs_arm_and_gripper_actions(fetch_episode) -> None:
    """fetch_sim (the heuristic's rounds replayed, the simulator's experts): the demo task through Fetch's
    names. The base through /cmd_vel; the fridge opened, the can picked and put through FollowJointTrajectory
    (the bridge solves Fetch's seven joints for every end-effector step) and GripperCommand (a stall is
    the robot saying it holds the can); in lock-step, each trajectory and head goal runs in simulated time
    until the driver ended it."""
    config = str(fetch_episode["config"])
    out, _ = fetch_episode["submit"].communicate(timeout=960)
    submitted = subprocess.CompletedProcess(fetch_episode["submit"].args, fetch_episode["submit"].returncode, out, "")
    after = subprocess.run([sys.executable, "-c", FETCH_AFTER, config], cwd=ROOT, env=fetch_episode["env"], capture_output=True,
                           text=True, timeout=120)
    fetch_episode["up"].send_signal(signal.SIGINT)  # the graph is no longer needed: it stops its nodes (and loads nothing after)
    fetch_episode["up"].wait(timeout=60)
    assert submitted.returncode == 0 and "goal reached" in submitted.stdout, submitted.stdout + submitted.stderr
    record = json.loads(next(fetch_episode["runs"].glob("*/episode.json")).read_text())
    steps = [s for s in record["steps"] if s["skill"] is not None]
    assert {s["skill"] for s in steps} == {"policy:sim_expert"}
    done = {s["output"]["subtask"]["action"] for s in steps if s["feedback"]["status"] == "success"}
    assert {"Go to", "Open", "Pick", "Put"} <= done, done
    assert after.returncode == 0, after.stderr[-2000:]
    r = json.loads(after.stdout.strip().splitlines()[-1])
    assert r["can"][0] == "fridge"  # the sim driver's truth
    # one head camera: the left and right views come from turning the head (PointHead), then it looks ahead again
    assert r["blank"] == {"front": False, "left": False, "back": True, "right": False} and r["distinct"] == [True, True, True]
    assert r["pan"] == pytest.approx(0.0, abs=1e-6) and r["head_camera_z"][0] > 0.95  # looking ahead, a little down
    assert r["looks"] == r["heads_after"] - r["driver"]["head_goals"] == 3  # PointHead goals: left, right, ahead
    assert r["driver"]["head_goals"] >= 3 * len(record["steps"])  # every round of the episode turned the head too
    assert r["joints"][-7:] == ["shoulder_pan_joint", "shoulder_lift_joint", "upperarm_roll_joint", "elbow_flex_joint",
                                "forearm_roll_joint", "wrist_flex_joint", "wrist_roll_joint"]  # Fetch's names on /joint_states
    driver = r["driver"]
    assert driver["cmd_vel"] > 0 and driver["applied"] > 0  # through /cmd_vel
    assert driver["arm_goals"] > 10  # every arm motion a FollowJointTrajectory goal
    assert driver["gripper_goals"] >= 3  # open and close around the door handle, close on the can, open to put it down
    assert driver["services"] == 0  # Fetch has no Trigger services


def test_a_profile_naming_a_topic_nobody_publishes_stops_homiebot_run_with_the_name(tmp_path: Path) -> None:
    profile = tmp_path / "spot_typo.yaml"
    profile.write_text((ROOT / "config" / "robots" / "spot.yaml").read_text().replace("{name: odometry,", "{name: odometry_typo,"))
    config = tmp_path / "robot.yaml"
    config.write_text(f"version: 1\nworld: {{name: ros2_robot, params: {{profile: {profile}, connect_timeout: 3}}}}\n"
                      "skills: [{name: policy_skill, model: NoMaD, params: {policy: nomad}}]\n")
    out = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "go to the brown table", "--config", str(config), "--out",
                          str(tmp_path / "runs")], cwd=ROOT, env=ros_environment(DOMAIN), capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    error = out.stderr.strip().splitlines()[-1]
    assert error.startswith("homiebot: error: world 'ros2_robot' (Ros2RobotWorld): robot 'spot' cannot start") and "/spot/odometry_typo" in error
    assert "within 3 s" in error


LOCKSTEP_PLAN = [("the table is in the living room", "[Go to, brown_table]", "NoMaD"),
                 ("the can is on it", "[Go to, green_can]", "PixNav"), ("take it", "[Pick, green_can]", "RT-1-X")]


def test_in_lock_step_the_bridged_fetch_episode_repeats_exactly(tmp_path: Path) -> None:
    """fetch_sim with the sim driver in lock-step (simulated time advances only through the bridge's steps;
    trajectory and head goals run until the driver ended them): two episodes of the same plan from the
    same seed leave identical records, whatever the load. The two run at the same time, in two graphs on
    two domains: each loads the other's machine."""
    config = lockstep_config("fetch", tmp_path, planner=replay(LOCKSTEP_PLAN))
    task = tmp_path / "task.yaml"
    task.write_text("id: take_the_can\ninstruction: take the green can\ngoal:\n  - {kind: robot_in, room: living_room}\n")
    graphs = []
    try:
        for i, domain in enumerate((DOMAIN, domain_of(__name__, 1))):  # processes we started, stopped below
            env = ros_environment(domain)
            graphs.append((env, subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(config), "--out",
                                                  str(tmp_path / f"runs{i}"), "--no-bag"], cwd=ROOT, env=env,
                                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
        submits = [subprocess.Popen([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(task), "--seed", "0", "--timeout", "600"],
                                    cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for env, _ in graphs]
        for submit in submits:
            out, _ = submit.communicate(timeout=660)
            assert submit.returncode == 0 and "goal reached" in out, out
    finally:
        _interrupt(*(up for _, up in graphs))
    records = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("runs*/*/episode.json"))]
    assert len(records) == 2

    def trace(record: dict) -> list:
        return [(s["raw_output"], s["feedback"], s["attempts"], s["path_length"], s["inventory_after"]) for s in record["steps"]]

    first, second = records
    assert trace(first) == trace(second) and first["path_length"] == second["path_length"]
    assert [e["kind"] for e in first["safety_events"]] == [e["kind"] for e in second["safety_events"]]
    assert all(s["feedback"]["status"] == "success" for s in first["steps"])
