"""``homiebot up`` keeps the graph running: kill any node mid-episode and the task manager reports a
failed event naming it within seconds, the record is saved, the node comes back and the graph serves
the next task; SIGTERM of ``homiebot up`` mid-episode saves the record and exits cleanly and quickly.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.records import load_episode  # noqa: E402
from homiebot.ros.bringup.graph import GRAPH_NODES  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
CLIENT = Path(__file__).with_name("plain_client.py")
DOMAIN = domain_of(__name__)
ROUNDS = 400  # long episodes: a node can be killed mid-episode for sure


class Graph:
    """A `homiebot up` process; its output is collected as it comes."""

    def __init__(self, env: dict, cfg: Path, out: Path) -> None:
        self.out = out
        self.proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(cfg), "--out", str(out)],
                                     cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    def pid(self, node: str) -> int:
        """The node's current process: the last restart, else the start-up line."""
        text = "".join(self.lines)
        restarted = re.findall(rf"restarted node {node} \(pid (\d+)\)", text)
        return int(restarted[-1]) if restarted else int(re.search(rf"\b{node} \(pid (\d+)\)", text).group(1))

    def wait_for(self, pattern: str, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while not re.search(pattern, "".join(self.lines)):
            assert time.monotonic() < deadline, f"no '{pattern}' in:\n" + "".join(self.lines[-30:])
            time.sleep(0.1)


class Watch:
    """A plain rclpy client running the demo task as a RunTask goal and following its status events;
    ``label`` names the scenario in failures."""

    def __init__(self, env: dict, label: str) -> None:
        self.label = label
        self.errors = tempfile.TemporaryFile(mode="w+")  # the client's own complaints, for a failure's message
        self.proc = subprocess.Popen([sys.executable, str(CLIENT), "watch"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.errors, text=True)
        self.proc.stdin.write(json.dumps({"goal": {"task_file": str(DEMO), "use_seed": True, "seed": 1}}))
        self.proc.stdin.close()

    def until(self, test, timeout: float = 120.0) -> dict:
        result: list[dict] = []
        seen: list[dict] = []

        stray: list[str] = []  # the middleware may print to stdout too (Fast DDS warns there after a kill)

        def read() -> None:
            for line in self.proc.stdout:
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    stray.append(line.rstrip())
                    continue
                seen.append(event)
                if "state" in event and test(event):
                    result.append(event)
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if not result:
            self.errors.seek(0)
            raise AssertionError(f"{self.label}: the awaited status event did not come; the last seen: {seen[-3:]}; "
                                 f"other lines: {stray[-5:]}; the client said: {self.errors.read()[-1500:]}")
        return result[0]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    folder = tmp_path_factory.mktemp("up")
    script = folder / "script.json"
    script.write_text(json.dumps(["Analysis: stay.\nSubtask: [Go to, kitchen]\nModel: NoMaD"] * ROUNDS))
    cfg = folder / "graph.yaml"
    cfg.write_text(f"planner: {{name: replay, params: {{file: {script}}}}}\nmax_rounds: 1000\nskill_profile: perfect\n"
                   "world: {name: embedded_home, params: {width: 64, height: 64, depth: false, segmentation: false}}\n")
    graph = Graph(ros_environment(DOMAIN), cfg, folder / "runs")
    graph.wait_for(r"homiebot graph: world \(pid")
    try:
        yield graph
    finally:
        if graph.proc.poll() is None:
            graph.proc.send_signal(signal.SIGTERM)
            graph.proc.wait(30)


@pytest.mark.parametrize("node", [n for n in GRAPH_NODES if n not in ("task_manager", "recorder")])
def test_a_node_killed_mid_episode_is_reported_its_record_saved_and_it_comes_back(up, node):
    watch = Watch(ros_environment(DOMAIN), f"kill-{node}")
    try:
        watch.until(lambda e: e["state"] == "round" and e["round"] >= 2)
        os.kill(up.pid(node), signal.SIGKILL)
        killed = time.monotonic()
        failed = watch.until(lambda e: e["state"] in ("failed", "finished"), timeout=60)
        detected = time.monotonic() - killed
    finally:
        watch.close()
    assert failed["state"] == "failed" and f"the {node} node" in failed["reason"], (failed, "".join(line for line in up.lines if "INFO" not in line)[-6000:])
    assert detected < 10.0, f"reported after {detected:.1f} s"
    record = load_episode(failed["record"])
    assert record.termination == "error" and node in record.error and len(record.steps) >= 2
    up.wait_for(rf"restarted node {node} \(pid")


def test_a_killed_recorder_is_reported_and_the_episode_goes_on_without_its_bag(up):
    watch = Watch(ros_environment(DOMAIN), "kill-recorder")
    try:
        watch.until(lambda e: e["state"] == "round" and e["round"] >= 2)
        os.kill(up.pid("recorder"), signal.SIGKILL)
        killed = time.monotonic()
        warning = watch.until(lambda e: e["state"] in ("warning", "failed", "finished"), timeout=60)
        detected = time.monotonic() - killed
        # silent for the heartbeat timeout, or (when its restart is quicker) back as a new process
        assert warning["state"] == "warning" and "the recorder node" in warning["reason"], warning
        assert detected < 10.0, f"reported after {detected:.1f} s"
        after = watch.until(lambda e: e["state"] in ("round", "failed", "finished"), timeout=60)
        assert after["state"] == "round", after  # the episode goes on
    finally:
        watch.close()
    up.wait_for(r"restarted node recorder \(pid")


def test_a_killed_task_manager_comes_back_and_finalises_the_cut_off_record(up):
    watch = Watch(ros_environment(DOMAIN), "kill-task-manager")
    try:
        watch.until(lambda e: e["state"] == "round" and e["round"] >= 2)
        os.kill(up.pid("task_manager"), signal.SIGKILL)
        up.wait_for(r"restarted node task_manager \(pid")
    finally:
        watch.close()
    deadline = time.monotonic() + 60
    while True:
        folders = [p.parent for p in up.out.glob("*/episode.json")]
        cut = [(f, r) for f, r in ((f, load_episode(f)) for f in folders) if r.error and "task manager stopped" in r.error]
        if cut or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert cut and cut[0][1].termination == "error" and cut[0][1].instruction.startswith("put the green can")
    assert len(cut[0][1].steps) >= 2  # the rounds that finished before the kill were on disk
    # the recorder was still writing the episode's bag: the successor had it closed before moving the folder
    assert (cut[0][0] / "bag" / "metadata.yaml").is_file()
    assert not list(up.out.glob("*.partial"))


def test_submit_says_so_when_the_task_manager_dies_under_it(up):
    """Before, `submit` waited for its own timeout: a killed task manager sends no result."""
    proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--seed", "3", "--timeout", "600"],
                            cwd=ROOT, env=ros_environment(DOMAIN), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
        deadline = time.monotonic() + 120
        while not any(line.startswith("round  2") for line in lines):
            assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)[-2000:]
            time.sleep(0.1)
        restarts = "".join(up.lines).count("restarted node task_manager (pid")
        os.kill(up.pid("task_manager"), signal.SIGKILL)
        proc.wait(120)  # its successor shows within seconds; without one, discovery forgets the dead one in 20 s
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read()
    assert proc.returncode == 3 and "the task manager stopped while it ran submission" in err, err
    deadline = time.monotonic() + 60
    while "".join(up.lines).count("restarted node task_manager (pid") <= restarts:  # the next test needs it back
        assert time.monotonic() < deadline, "".join(up.lines[-30:])
        time.sleep(0.1)


def test_after_the_kills_the_next_task_finishes(up):
    watch = Watch(ros_environment(DOMAIN), "after-kills")
    try:
        final = watch.until(lambda e: e["state"] in ("failed", "finished"), timeout=240)
    finally:
        watch.close()
    assert final["state"] == "finished" and final["rounds"] == ROUNDS + 1, final
    assert "keeps dying" not in "".join(up.lines)


def test_ctrl_c_of_submit_cancels_its_episode_saves_the_record_and_exits_130_as_run_does(up):
    proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--seed", "2", "--timeout", "240"],
                            cwd=ROOT, env=ros_environment(DOMAIN), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if line.startswith("round  2"):
                break
        proc.send_signal(signal.SIGINT)
        rest, errors = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()  # a process we started
            proc.wait()
    output = "".join(lines) + rest
    assert proc.returncode == 130, output + errors
    assert "homiebot: interrupted; cancelling episode demo_seed2" in errors and "Traceback" not in errors, errors
    assert re.search(r"^goal NOT reached; ended by cancelled after \d+ rounds", output, re.M), output[-2000:]
    record = load_episode(output.strip().splitlines()[-1].removeprefix("episode record: "))
    assert record.termination == "cancelled" and len(record.steps) >= 2


CANCEL_CLIENT = f"""
import json, time, rclpy
from rclpy.action import ActionClient
from rclpy.node import Node
from homiebot_msgs.action import RunTask
rclpy.init()
node = Node("plain_cancel_client")
client = ActionClient(node, RunTask, "/homiebot/run_task")
assert client.wait_for_server(timeout_sec=60)
states = {{"first": [], "second": []}}

def send(key):
    sent = client.send_goal_async(RunTask.Goal(task_file="{DEMO}"), feedback_callback=lambda m: states[key].append(m.feedback))
    rclpy.spin_until_future_complete(node, sent, timeout_sec=60)
    return sent.result()

first = send("first")
second = send("second")
deadline = time.time() + 120
while time.time() < deadline and not any(f.state == "round" and f.round >= 2 for f in states["first"]):
    rclpy.spin_once(node, timeout_sec=0.05)
for handle in (second, first):  # the queued one first, then the running one
    cancel = handle.cancel_goal_async()
    rclpy.spin_until_future_complete(node, cancel, timeout_sec=30)
out = {{}}
for key, handle in (("first", first), ("second", second)):
    got = handle.get_result_async()
    rclpy.spin_until_future_complete(node, got, timeout_sec=60)
    r = got.result()
    out[key] = {{"status": r.status, "code": r.result.error_code, "record": r.result.record, "termination": r.result.termination,
                "msg": r.result.error_msg, "states": sorted({{f.state for f in states[key]}})}}
print(json.dumps(out))
"""


def test_a_cancelled_goal_that_waits_in_the_queue_never_starts_and_the_running_one_keeps_its_record(up, tmp_path):
    script = tmp_path / "cancel_client.py"
    script.write_text(CANCEL_CLIENT)
    run = subprocess.run([sys.executable, str(script)], env=ros_environment(DOMAIN), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    first, second = out["first"], out["second"]
    assert (first["status"], first["code"], first["termination"]) == (5, 5, "cancelled"), first  # 5: CANCELED, CANCELLED
    assert load_episode(first["record"]).termination == "cancelled"
    assert (second["status"], second["code"], second["record"]) == (5, 5, ""), second
    assert second["msg"] == "cancelled before it started" and not {"running", "round"} & set(second["states"])


def test_a_deactivated_task_manager_ends_its_episode_with_a_result_and_serves_again_once_activated(up):
    run = subprocess.run([sys.executable, str(CLIENT), "deactivate"], env=ros_environment(DOMAIN), capture_output=True, text=True,
                         input=json.dumps({"goal": {"task_file": str(DEMO), "use_seed": True, "seed": 1}, "round": 2}), timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["deactivated"] and seen["activated"], seen
    first = seen["first"]  # the running episode: interrupted, its record kept, the result sent before any cleanup
    assert first["code"] == 4 and "deactivated" in first["msg"], seen  # RunTask.Result.INTERRUPTED
    assert seen["result_after"] < 30.0, seen
    assert len(load_episode(first["record"]).steps) >= 2
    assert seen["inactive"]["code"] == 6, seen  # INACTIVE: refused while the node is not active
    assert seen["rounds_after_activation"] >= 1 and seen["last"]["code"] == 5, seen  # CANCELLED


def test_a_deactivated_recorder_closes_the_episodes_bag_at_once_and_records_none_into_it_after(up):
    """Deactivated at round 2, the recorder closes that episode's bag (metadata written, the rounds after it not in
    it) and the episode goes on, saying its bag is incomplete; the next episode, once it is active again, has a bag
    of its own."""
    from rosbags.rosbag2 import Reader

    run = subprocess.run([sys.executable, str(CLIENT), "deactivate_recorder"], env=ros_environment(DOMAIN), capture_output=True,
                         text=True, input=json.dumps({"goal": {"task_file": str(DEMO), "use_seed": True, "seed": 1}, "round": 2}),
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["deactivated"] and seen["activated"], seen

    def feedback_in_bag(record: str) -> int:
        bag = Path(record).parent / "bag"
        deadline = time.monotonic() + 30.0  # the recorder closes an episode's bag after its result went out
        while not (bag / "metadata.yaml").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        with Reader(bag) as reader:  # a bag without its metadata.yaml (never closed) fails here
            return sum(c.msgcount for c in reader.connections if c.topic == "/homiebot/feedback")

    first, second = seen["first"], seen["second"]
    rounds = len(load_episode(first["record"]).steps)
    assert rounds >= 4 and feedback_in_bag(first["record"]) < rounds, (rounds, seen)
    assert any(e["state"] == "warning" and "bag" in e["reason"] for e in seen["first_events"]), seen["first_events"]
    assert second["record"] and feedback_in_bag(second["record"]) >= 2, second


def test_sigterm_of_up_mid_episode_saves_the_record_and_exits_cleanly_within_5_s(up):
    watch = Watch(ros_environment(DOMAIN), "sigterm")
    try:
        watch.until(lambda e: e["state"] == "round" and e["round"] >= 2)
        before = len(up.lines)
        earlier = set(up.out.glob("*/episode.json"))  # the deactivation test's episode is interrupted too
        up.proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        up.proc.wait(30)
        took = time.monotonic() - started
    finally:
        watch.close()
    output = "".join(up.lines[before:])  # the shutdown's own output
    assert up.proc.returncode == 0, output[-3000:]
    assert took < 5.0, f"shutdown took {took:.1f} s"
    for bad in ("Traceback", "InvalidHandle", "context is invalid", "RCLError"):
        assert bad not in output, output[-3000:]
    interrupted = [p.parent for p in set(up.out.glob("*/episode.json")) - earlier if load_episode(p).termination == "interrupted"]
    assert len(interrupted) == 1 and len(load_episode(interrupted[0] / "episode.json").steps) >= 2
    assert not list(up.out.glob("*.partial"))
    # the recorder stops first: its bag is closed before the episode's folder is moved into place
    assert (interrupted[0] / "bag" / "metadata.yaml").is_file(), output[-3000:]
