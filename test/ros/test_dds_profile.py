"""The graph's Fast DDS profile: its writers wait for a new client's reply reader before a service reply
(rmw_fastrtps drops the reply after the writer's max_blocking_time, 0.1 s by default), and every node
process loads it, however it was started, unless the user chose a profile of their own."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from homiebot.ros.kit.dds_profile import PROFILE, RESPONSE_WAIT, VARIABLES, use_profile
from test.ros_domains import domain_of

NS = {"dds": "http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles"}
UDP_ONLY = Path(__file__).with_name("fastdds_udp_only.xml")
DOMAIN = domain_of(__name__)


@pytest.mark.parametrize("profile", [PROFILE, UDP_ONLY], ids=["graph", "udp_only"])
def test_the_default_writer_waits_for_the_reply_reader(profile: Path) -> None:
    writers = ET.parse(profile).getroot().findall(".//dds:data_writer[@is_default_profile='true']", NS)
    assert len(writers) == 1
    wait = writers[0].find("dds:qos/dds:reliability/dds:max_blocking_time", NS)
    assert wait is not None, f"{profile.name}: no max_blocking_time on the default writer"
    seconds = int(wait.findtext("dds:sec", "0", NS)) + int(wait.findtext("dds:nanosec", "0", NS)) / 1e9
    assert seconds == RESPONSE_WAIT


def test_use_profile_sets_both_variables_and_keeps_a_profile_the_user_chose() -> None:
    env: dict[str, str] = {}
    use_profile(env)
    assert env == {name: str(PROFILE) for name in VARIABLES}
    mine = {"FASTDDS_DEFAULT_PROFILES_FILE": "/etc/my_profile.xml"}
    use_profile(mine)
    assert mine == {name: "/etc/my_profile.xml" for name in VARIABLES}  # both name the user's, for Fast DDS 2.x and 3.x


def test_a_node_process_started_without_the_variables_loads_the_graphs_profile() -> None:
    pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")
    # as ros2 launch or a shell starts a node: its environment names no profile; init runs before the first participant
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    script = ("import os\nfrom homiebot.ros.kit.common import init\nimport rclpy\ninit([])\n"
              "print(os.environ.get('FASTRTPS_DEFAULT_PROFILES_FILE'), os.environ.get('FASTDDS_DEFAULT_PROFILES_FILE'))\n"
              "rclpy.try_shutdown()\n")
    run = subprocess.run([sys.executable, "-c", script], env=env | {"ROS_DOMAIN_ID": str(DOMAIN), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"},
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == [str(PROFILE), str(PROFILE)]
