"""The fault campaign of ``bench_faults.py --campaign``: faults from outside the graph, each checked for
what it must never do (lose a round, leave a process running, leak a key, leave half a file, move the
robot after its episode failed). Every fault runs against real processes started here, with plain
clients; each returns one row: the fault, whether it was survived with nothing lost, and the figures.

Discovery stays on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST), on the domain given.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
KEY = "sk-bench-" + "7Qm2Xw9Lp4Rt8Vz1Kc6Hn3Bd5Fg0Js2Ya"  # the shape of a hosted API key; never a real one


STARTED: list[subprocess.Popen] = []  # every process a fault started, ended after it whatever happened


@dataclass
class Row:
    fault: str
    survived: bool | None  # None: could not be tried here (the detail says why)
    detail: str


class Up:
    """``homiebot up`` on a config, its output collected; node pids from its start-up line."""

    def __init__(self, env: dict[str, str], cfg: Path, out: Path, bag: bool = False) -> None:
        self.out = out
        argv = [sys.executable, "-m", "homiebot.cli", "up", "--config", str(cfg), "--out", str(out)] + ([] if bag else ["--no-bag"])
        self.proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        STARTED.append(self.proc)
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.proc.stdout or []), daemon=True).start()

    def text(self) -> str:
        return "".join(self.lines)

    def nodes(self, timeout: float = 120.0) -> dict[str, int]:
        deadline = time.monotonic() + timeout
        while not (line := next((x for x in self.lines if x.startswith("homiebot graph: ") and "(pid" in x), None)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the graph did not start:\n" + self.text()[-2000:])
            time.sleep(0.2)
        return {name: int(pid) for name, pid in re.findall(r"(\w+) \(pid (\d+)\)", line)}

    def ready(self, timeout: float = 300.0) -> dict[str, int]:
        """The node pids once the task manager said it is ready (a loaded machine takes a while; it waits
        for the other nodes itself when a task comes)."""
        nodes = self.nodes(timeout)
        deadline = time.monotonic() + timeout
        while "task_manager node ready" not in self.text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the task manager was not ready after {timeout:g} s:\n" + self.text()[-2000:])
            time.sleep(0.2)
        return nodes

    def pid(self, node: str) -> int:
        restarted = re.findall(rf"restarted node {node} \(pid (\d+)\)", self.text())
        return int(restarted[-1]) if restarted else self.nodes()[node]

    def stop(self) -> float:
        """SIGTERM, as a service manager stops it; the seconds it took."""
        if self.proc.poll() is not None:
            return 0.0
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return time.monotonic() - started


class Submit:
    """``homiebot submit`` of the demo task, its round lines counted as they come."""

    def __init__(self, env: dict[str, str], seed: int) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--seed", str(seed),
                                      "--timeout", "600"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        STARTED.append(self.proc)
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.proc.stdout or []), daemon=True).start()

    def rounds(self) -> int:
        return sum(line.startswith("round ") for line in self.lines)

    def until_round(self, n: int, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while self.rounds() < n:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the episode did not reach round {n}: " + (self.proc.stderr.read() if self.proc.poll() is not None else ""))
            time.sleep(0.05)

    def end(self, timeout: float) -> tuple[int | None, float]:
        started = time.monotonic()
        try:
            return self.proc.wait(timeout), time.monotonic() - started
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None, time.monotonic() - started


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def long_graph(work: Path, name: str) -> Path:
    """A graph config whose episodes last: a replayed planner that goes to the kitchen 400 times."""
    script = work / f"{name}.json"
    script.write_text(json.dumps(["Analysis: stay.\nSubtask: [Go to, kitchen]\nModel: NoMaD"] * 400))
    cfg = work / f"{name}.yaml"
    cfg.write_text(f"planner: {{name: replay, params: {{file: {script}}}}}\nmax_rounds: 1000\nskill_profile: perfect\n"
                   "world: {name: embedded_home, params: {width: 64, height: 64, depth: false, segmentation: false}}\n")
    return cfg


# ---- the faults -------------------------------------------------------------------------------------
def supervisor_killed(env: dict[str, str], work: Path) -> Row:
    up = Up(env, long_graph(work, "orphans"), work / "orphans")
    nodes = up.ready()
    submit = Submit(env, 1)
    try:
        submit.until_round(2)
        up.proc.kill()
        up.proc.wait()
        deadline = time.monotonic() + 30
        while (left := [n for n, pid in nodes.items() if running(pid)]) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        submit.end(1)
        for pid in nodes.values():
            if running(pid):
                os.kill(pid, signal.SIGKILL)
    return Row("SIGKILL of `homiebot up` mid-episode", not left,
               f"nodes still running 30 s later: {len(left)} of {len(nodes)}" + (f" ({', '.join(left)})" if left else ""))


def supervisor_terminated(env: dict[str, str], work: Path) -> Row:
    up = Up(env, long_graph(work, "sigterm"), work / "sigterm", bag=True)
    up.ready()
    submit = Submit(env, 1)
    try:
        submit.until_round(3)
        took = up.stop()
    finally:
        submit.end(30)
    folders = [p.parent for p in up.out.glob("*/episode.json")]
    bag = bool(folders) and (folders[0] / "bag" / "metadata.yaml").is_file()
    steps = len(json.loads((folders[0] / "episode.json").read_text())["steps"]) if folders else 0
    ok = up.proc.returncode == 0 and bag and steps >= 3 and took <= 2.0
    return Row("SIGTERM of `homiebot up` mid-episode", ok,
               f"exit {up.proc.returncode} after {took:.1f} s (target 2 s); record saved with {steps} rounds; bag closed: {bag}")


def task_manager_killed(env: dict[str, str], work: Path) -> Row:
    up = Up(env, long_graph(work, "tm"), work / "tm")
    up.ready()
    submit = Submit(env, 1)
    try:
        submit.until_round(3)
        os.kill(up.pid("task_manager"), signal.SIGKILL)
        seen = submit.rounds()
        code, after = submit.end(120)
        deadline = time.monotonic() + 60
        while not (cut := [p for p in up.out.glob("*/episode.json") if "task manager stopped" in p.read_text()]):
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        up.stop()
    steps = len(json.loads(cut[0].read_text())["steps"]) if cut else 0
    lost = max(0, seen - steps)
    return Row("SIGKILL of the task manager mid-episode", bool(cut) and lost == 0 and code == 3,
               f"rounds lost: {lost} ({seen} shown, {steps} in the saved record); `submit` exit {code} after {after:.1f} s")


def key_leak(env: dict[str, str], work: Path) -> Row:
    """The openai planner against a server that echoes the key back in every place it can, whole and in pieces (a
    tail, the key without its prefix, the key with a space inserted, a tail in a 429 body)."""
    elsewhere: list[dict[str, str]] = []
    target = _serve(lambda handler: elsewhere.append(dict(handler.headers)) or (404, b""))

    def said(text: str) -> tuple:
        content = json.dumps({"analysis": f"the key: {text}", "subtask": ["Go to", "fridge"], "model": "NoMaD"})
        return 200, json.dumps({"choices": [{"message": {"content": content}, "finish_reason": "stop"}]}).encode()

    replies = iter([
        (200, json.dumps({"choices": [{"message": {"content": ""}, "finish_reason": f"blocked {KEY}"}]}).encode()),
        (200, (f"<html>proxy error {'.' * 80} {KEY}</html>").encode()),
        (302, b"", {"Location": f"http://127.0.0.1:{target.server_address[1]}/v1/chat/completions"}),
        said(KEY[-20:]), said(KEY[3:]), said(KEY[:17] + " " + KEY[17:]),
        (429, json.dumps({"error": {"message": f"rate limited: key ending {KEY[-16:]}"}}).encode()),
    ] * 10)
    server = _serve(lambda handler: next(replies))
    cfg = work / "hostile.yaml"
    cfg.write_text(f"planner: {{name: openai, params: {{base_url: 'http://127.0.0.1:{server.server_address[1]}/v1', model: m, "
                   "api_key_env: BENCH_FAULTS_KEY, retries: 0}}\nmax_rounds: 6\n"
                   "world: {name: embedded_home, params: {width: 64, height: 64}}\n")
    out = work / "hostile"
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", str(DEMO), "--config", str(cfg), "--out", str(out)],
                          cwd=ROOT, env={**env, "BENCH_FAULTS_KEY": KEY}, capture_output=True, text=True, timeout=600)
    server.shutdown()
    target.shutdown()
    texts = [done.stdout, done.stderr] + [p.read_text(errors="replace") for p in out.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")]
    flat = ["".join(text.split()) for text in texts]  # a piece with whitespace inserted is still a piece
    pieces = sum(any(KEY[i:i + 8] in text for i in range(len(KEY) - 7)) for text in flat)
    forwarded = sum("Authorization" in h or "authorization" in h for h in elsewhere)
    return Row("API key vs a hostile chat server (echo whole and in pieces, cut body, redirect, 429 body)",
               pieces == 0 and forwarded == 0,
               f"texts with 8 characters of the key in a row: {pieces} of {len(texts)}; key sent across the redirect: {forwarded} times")


def disk_full(env: dict[str, str], work: Path) -> Row:
    mount = work / "full"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        return Row("disk full during `homiebot run --video`", None, "skipped: mounting a small tmpfs needs root")
    try:
        done = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", str(DEMO), "--seed", "0", "--out",
                               str(mount / "runs"), "--video"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        record = next((mount / "runs").glob("*/episode.json"), None)
        partial = list((mount / "runs").glob("*.partial"))
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)
    kept = record is not None or bool(partial)
    ok = done.returncode == 74 and "Traceback" not in done.stderr and kept
    return Row("disk full during `homiebot run --video`", ok,
               f"exit {done.returncode}; traceback: {'Traceback' in done.stderr}; record published: {record is not None}; "
               f"what recorded kept: {kept}")


def oversized_cancel(env: dict[str, str], work: Path) -> Row:
    """200 cancels of 2 MB each on /homiebot/cancel, from a plain rclpy client: the log must stay bounded."""
    up = Up(env, long_graph(work, "cancel"), work / "cancel")
    up.ready()
    client = ("import rclpy, time\nfrom std_msgs.msg import String\nrclpy.init()\nn = rclpy.create_node('flood')\n"
              "p = n.create_publisher(String, '/homiebot/cancel', 10)\nend = time.monotonic() + 30\n"
              "while p.get_subscription_count() == 0 and time.monotonic() < end: time.sleep(0.1)\n"
              "for _ in range(200):\n    p.publish(String(data='x' * 2_000_000)); time.sleep(0.01)\ntime.sleep(3)\n")
    try:
        before = len(up.text())
        subprocess.run([sys.executable, "-c", client], env=env, capture_output=True, timeout=300)
        time.sleep(2)
        grown = len(up.text()) - before
        alive = up.proc.poll() is None
    finally:
        up.stop()
    return Row("200 cancels of 2 MB on /homiebot/cancel", alive and grown < 100_000,
               f"`up` log grew by {grown / 1e3:.0f} kB; graph still running: {alive}")


def robot_after_failure(env: dict[str, str], work: Path) -> Row:
    """Spot through its sim driver: the driver hangs (SIGSTOP) for 3.6 s mid-episode, then goes on
    (SIGCONT). The episode may fail; after it has, nothing may move the robot: velocities on /spot/cmd_vel
    from a plain subscriber, judged from the moment the failure was printed."""
    up = Up(env, ROOT / "config" / "robots" / "spot_sim.yaml", work / "spot")
    nodes = up.ready(600)
    listener = subprocess.Popen([sys.executable, "-u", "-c", (
        "import rclpy, time\nfrom geometry_msgs.msg import Twist\nrclpy.init()\nn = rclpy.create_node('cmd_vel_listener')\n"
        "def seen(m):\n    print(f'{time.time():.3f} {abs(m.linear.x) + abs(m.linear.y) + abs(m.angular.z):.4f}', flush=True)\n"
        "n.create_subscription(Twist, '/spot/cmd_vel', seen, 100)\ntry:\n    rclpy.spin(n)\nexcept Exception:\n    pass\n")],
        env=env, stdout=subprocess.PIPE, text=True)
    STARTED.append(listener)
    samples: list[tuple[float, float]] = []
    threading.Thread(target=lambda: samples.extend(tuple(map(float, line.split())) for line in listener.stdout or []), daemon=True).start()
    submit = Submit(env, 0)
    failed_at = None
    try:
        submit.until_round(1, timeout=600)
        deadline = time.monotonic() + 120
        while not any(v > 0 for _, v in samples[-20:]) and time.monotonic() < deadline:  # the robot is driving
            time.sleep(0.05)
        driver = nodes["sim_driver"]
        os.kill(driver, signal.SIGSTOP)
        time.sleep(3.6)
        os.kill(driver, signal.SIGCONT)
        code, _ = submit.end(600)
        errors = [line for line in (submit.proc.stderr.read() if submit.proc.stderr else "").splitlines() if "error" in line]
        failed_at = time.time() if code not in (0, 1) else None
        time.sleep(15)  # whatever still drives after the failure shows within this
    finally:
        _end([listener], grace=10)
        up.stop()
    if failed_at is None:
        return Row("the robot's driver hangs 3.6 s mid-episode", True, f"the episode did not fail (`submit` exit {code}): nothing to stop")
    moving = [t for t, v in samples if t > failed_at + 0.5 and v > 0]
    before = sum(1 for t, v in samples if t <= failed_at and v > 0)
    return Row("the robot's driver hangs 3.6 s mid-episode", not moving and before > 0,
               f"episode failed ({(errors or ['?'])[-1][:90]}); non-zero cmd_vel before the failure: {before}, after it: "
               f"{len(moving)} messages over {(moving[-1] - moving[0]) if moving else 0:.1f} s")


def _serve(answer: Callable[[BaseHTTPRequestHandler], tuple]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            status, body, *headers = answer(self)
            self.send_response(status)
            for name, value in (headers[0] if headers else {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _reply  # noqa: N815 (http.server's naming)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


FAULTS = (supervisor_killed, supervisor_terminated, task_manager_killed, key_leak, disk_full, oversized_cancel,
          robot_after_failure)


def campaign(env: dict[str, str], work: Path) -> list[Row]:
    """Every fault in turn; one that could not be set up is a row that says so."""
    rows = []
    for fault in FAULTS:
        started = time.monotonic()
        try:
            row = fault(env, work)
        except Exception as err:  # a fault whose set-up failed is reported, the campaign goes on
            row = Row(fault.__name__.replace("_", " "), False, f"could not be run: {type(err).__name__}: {err}"[:300])
        _end_started()
        print(f"  {row.fault}: {'survived' if row.survived else 'skipped' if row.survived is None else 'DEFECT'} "
              f"({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
        rows.append(row)
    return rows


def _end(procs: list[subprocess.Popen], grace: float = 30.0) -> None:
    """SIGTERM (a graph then stops its nodes), SIGKILL of what still runs after ``grace`` seconds."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _end_started() -> None:
    """End what a fault left running (a fault that failed half way)."""
    _end(STARTED)
    STARTED.clear()


def table(rows: list[Row]) -> str:
    tried = [r for r in rows if r.survived is not None]
    lines = ["| fault | survived, nothing lost | figures |", "|---|:---:|---|"]
    lines += [f"| {r.fault} | {'yes' if r.survived else 'skipped' if r.survived is None else '**no**'} | {r.detail} |" for r in rows]
    lines.append(f"\nfaults tried: {len(tried)}; survived with nothing lost: {sum(bool(r.survived) for r in tried)}")
    return "\n".join(lines)
