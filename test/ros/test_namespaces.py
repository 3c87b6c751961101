"""Two graphs in two namespaces on one ROS domain: each finishes its own task and writes its own records,
and a plain client (rclpy only, no homiebot import) sees every homiebot name under one of the two
namespaces, none at the root or under the default one. One graph runs a process per node (``-r __ns:=``),
the other composed in one process (the namespace given to each node).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot import cli  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from homiebot.ros.kit.names import NamespaceError, namespace  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
DOMAIN = domain_of(__name__)
GRAPHS = {"robot1": [], "lab/robot2": ["--compose"]}
NODES = ("world", "mapper", "planner", "detector", "executor", "task_manager", "recorder")


def test_a_namespace_is_written_as_ros_writes_it_and_a_bad_one_is_refused_with_the_rule():
    assert namespace("robot1") == namespace("/robot1/") == "/robot1"
    assert namespace("") == namespace(None) == "/homiebot"
    assert namespace("lab/robot2") == "/lab/robot2"
    for bad in ("2robot", "robot one", "/", "a//b"):
        with pytest.raises(NamespaceError, match="namespace"):
            namespace(bad)


def test_up_refuses_a_bad_namespace_in_one_line(capsys):
    assert cli.main(["up", "--namespace", "9lives"]) == 2
    err = capsys.readouterr().err
    assert "--namespace" in err and "9lives" in err and "Traceback" not in err


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    """Both graphs, each with its own out folder; stopped (SIGINT) after the module."""
    folder = tmp_path_factory.mktemp("namespaces")
    env = ros_environment(DOMAIN)
    procs, outs = [], {}
    try:
        for ns, extra in GRAPHS.items():
            outs[ns] = folder / ns.replace("/", "_")
            log = (folder / f"{ns.replace('/', '_')}.log").open("w")
            procs.append(subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--namespace", ns, "--out", str(outs[ns]), *extra],
                                          cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True))
        yield {"env": env, "out": outs, "folder": folder}
    finally:
        for proc in procs:
            proc.send_signal(2)  # SIGINT: each graph stops its nodes
        for proc in procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()  # a process this test started
                proc.wait()


def submit(env: dict, ns: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", "--namespace", ns, "--task", str(DEMO), "--timeout", "300"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=420)


def test_two_graphs_in_two_namespaces_each_finish_their_task_with_their_own_records(graphs):
    from rosbags.rosbag2 import Reader

    with ThreadPoolExecutor(2) as pool:
        done = dict(zip(GRAPHS, pool.map(lambda ns: submit(graphs["env"], ns), GRAPHS), strict=True))
    for ns, out in done.items():
        assert out.returncode == 0, f"{ns}: {out.stdout}\n{out.stderr}"
        record = Path(out.stdout.splitlines()[-1].removeprefix("episode record: "))
        assert record.is_file() and graphs["out"][ns] in record.parents, (ns, record)
        episode = json.loads(record.read_text())
        assert episode["goal_satisfied"] is True
        with Reader(record.parent / "bag") as reader:
            topics = {c.topic for c in reader.connections if c.msgcount}
        assert topics and all(t.startswith(f"/{ns}/") for t in topics), (ns, sorted(topics)[:5])
        assert f"/{ns}/observation" in topics and f"/{ns}/subtask" in topics


PLAIN_LISTING = textwrap.dedent("""
    import json, time
    import rclpy
    rclpy.init()
    node = rclpy.create_node("plain_name_lister")
    wanted = {f"{ns}/{n}" for ns in ("/robot1", "/lab/robot2")
              for n in ("world", "mapper", "planner", "detector", "executor", "task_manager", "recorder")}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        names = {f"{ns.rstrip('/')}/{n}" for n, ns in node.get_node_names_and_namespaces()}
        if wanted <= names:
            break
        time.sleep(0.5)
    time.sleep(2.0)  # the rest of both graphs' entities (discovery under load lags)
    topics = [t for t, _ in node.get_topic_names_and_types()]
    services = [s for s, _ in node.get_service_names_and_types()]
    nodes = sorted(f"{ns.rstrip('/')}/{n}" for n, ns in node.get_node_names_and_namespaces())
    print(json.dumps({"topics": topics, "services": services, "nodes": nodes}))
""")


def test_a_plain_client_sees_every_homiebot_name_under_one_of_the_two_namespaces(graphs):
    out = subprocess.run([sys.executable, "-c", PLAIN_LISTING], env=graphs["env"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    mine = [n for n in seen["nodes"] if n != "/plain_name_lister"]
    for ns in GRAPHS:
        assert {f"/{ns}/{n}" for n in NODES} <= set(mine), (ns, mine)
    assert all(n.startswith(("/robot1/", "/lab/robot2/")) for n in mine), mine
    ros_own = ("/rosout", "/parameter_events", "/plain_name_lister/")
    names = [n for n in seen["topics"] + seen["services"] if not n.startswith(ros_own)]
    assert names and all(n.startswith(("/robot1/", "/lab/robot2/")) for n in names), [n for n in names if "robot" not in n][:10]
    for ns in GRAPHS:
        assert {f"/{ns}/planner/plan/_action/send_goal", f"/{ns}/run_task/_action/send_goal", f"/{ns}/estop/engage"} <= set(seen["services"])
        assert {f"/{ns}/heartbeat", f"/{ns}/task/status", f"/{ns}/world/state", f"/{ns}/tf"} <= set(seen["topics"])
