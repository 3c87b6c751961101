"""THE graph definition: which nodes, their executables and parameters. ``homiebot up`` and the
launch files in ``launch/`` both build the graph from here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

GRAPH_NODES = ("world", "mapper", "planner", "detector", "executor", "task_manager")


@dataclass(frozen=True)
class NodeSpec:
    name: str  # node name
    module: str  # python -m entry (what `homiebot up` runs)
    executable: str  # console script (what `ros2 run homiebot ...` / launch_ros run)
    parameters: dict[str, Any] = field(default_factory=dict)
    remappings: dict[str, str] = field(default_factory=dict)


def graph(config: str = "", planner: str = "", out_dir: str = "runs", overrides: dict[str, dict[str, Any]] | None = None) -> list[NodeSpec]:
    """The nodes of the homiebot graph for a run configuration file.

    ``planner`` overrides the config's planner; ``overrides`` adds parameters per node name.
    """
    common = {"config": config} if config else {}
    extra = {
        "planner": {"planner": planner} if planner else {},
        "task_manager": {"out_dir": out_dir},
    }
    specs = []
    for name in GRAPH_NODES:
        params = {**common, **extra.get(name, {}), **(overrides or {}).get(name, {})}
        specs.append(NodeSpec(name, f"homiebot.ros.nodes.{name}", f"homiebot_{name}", params))
    return specs


def ros_args(spec: NodeSpec) -> list[str]:
    """Command-line ROS arguments that give a process its node name and parameters."""
    args = ["--ros-args", "-r", f"__node:={spec.name}"]
    for key, value in spec.parameters.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        args += ["-p", f"{key}:={text}"]
    for src, dst in spec.remappings.items():
        args += ["-r", f"{src}:={dst}"]
    return args
