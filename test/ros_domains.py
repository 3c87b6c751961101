"""The ROS_DOMAIN_IDs of the test modules that start ROS 2 processes.

Each module has its own, so a process that one module left behind (a node still stopping, an orphan a
test provoked) never joins the next module's graph. The block of ids moves with the pytest process, so
two sessions on one machine (a developer's and CI's) most likely use different ones. Fast DDS takes
ids 0-232 only. Sessions that run side by side on purpose set HOMIEBOT_TEST_DOMAIN_BLOCK to different blocks.
"""

from __future__ import annotations

import os

# module (file name without "test_") -> how many domains it uses
MODULES = {
    "ask_graph": 1, "bridged_world": 3, "control_msgs": 1, "driver_check": 1, "executor_node": 1, "executors": 1,
    "foxglove": 1, "graph": 1, "graph_console": 1, "graph_doc": 1, "hostile_input": 1, "lifecycle": 1, "lifecycle_manager": 1,
    "map_server": 1, "mapped_graph": 2, "memory_graph": 1, "namespaces": 1, "node_parameters": 1, "planner_swap": 1, "policy_server": 1, "robot_bridge": 1,
    "safety_graph": 1, "safety_link": 1, "safety_messages": 1, "sim_copy": 2, "supervision": 1, "up_orphans": 1, "viewer_node": 1,
    "world_node": 1, "observations": 1, "dds_profile": 1, "sim_driver": 1, "sim_driver_estop": 1, "sim_driver_fetch": 1, "ros_user": 2,
    "graph_faults": 1, "node_watch": 1, "service_caller": 1,
}
BLOCK = 44  # ids per session: at least sum(MODULES.values())
SESSIONS = 5  # blocks that fit in 1-232


def domain_of(module: str, nth: int = 0) -> int:
    """The ``nth`` ROS_DOMAIN_ID of a test module (its ``__name__``)."""
    stem = module.rsplit(".", 1)[-1].removeprefix("test_")
    if stem not in MODULES:
        raise KeyError(f"{module} has no ROS domain: add '{stem}' to MODULES in {__file__}")
    if not 0 <= nth < MODULES[stem]:
        raise IndexError(f"{module} has {MODULES[stem]} ROS domain(s), not a domain {nth}")
    ordered = list(MODULES)
    offset = sum(MODULES[name] for name in ordered[:ordered.index(stem)])
    return 1 + session_block() * BLOCK + offset + nth


def session_block() -> int:
    """Which block of ids this session uses: HOMIEBOT_TEST_DOMAIN_BLOCK (0-5) when set, else one drawn from the pid."""
    chosen = os.environ.get("HOMIEBOT_TEST_DOMAIN_BLOCK", "")
    if chosen:
        if not chosen.isdigit() or int(chosen) >= SESSIONS:
            raise ValueError(f"HOMIEBOT_TEST_DOMAIN_BLOCK={chosen!r}: give a block from 0 to {SESSIONS - 1}")
        return int(chosen)
    return os.getpid() % SESSIONS
