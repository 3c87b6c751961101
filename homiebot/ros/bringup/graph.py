"""THE graph definition: which nodes, their executables and parameters. ``homiebot up`` and the
launch files in ``launch/`` both build the graph from here."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from homiebot.core import resources
from homiebot.ros.kit.names import DEFAULT_NAMESPACE

GRAPH_NODES = ("world", "mapper", "planner", "detector", "executor", "task_manager", "recorder")
REPLACEABLE = tuple(n for n in GRAPH_NODES if n != "task_manager")  # the task manager is the graph's client of them all


@dataclass(frozen=True)
class NodeSpec:
    name: str  # node name
    module: str  # python -m entry (what `homiebot up` runs)
    executable: str  # console script (what `ros2 run homiebot ...` / launch_ros run)
    parameters: dict[str, Any] = field(default_factory=dict)
    remappings: dict[str, str] = field(default_factory=dict)
    python: str | None = None  # interpreter to run the node with (a policy server's own environment); None: this one
    namespace: str = DEFAULT_NAMESPACE  # where the node and its names live (homiebot.ros.kit.names)
    params_file: str = ""  # a ROS 2 parameters file (``--params-file``): its values override ``parameters``


def graph(config: str = "", planner: str = "", out_dir: str = "runs", overrides: dict[str, dict[str, Any]] | None = None,
          record_bag: bool = True, namespace: str = DEFAULT_NAMESPACE, external: tuple[str, ...] = (),
          params_file: str = "", lifecycle_manager: bool = False) -> list[NodeSpec]:
    """The nodes of the homiebot graph for a run configuration file.

    ``planner`` overrides the config's planner; ``overrides`` adds parameters per node name;
    ``record_bag`` adds the recorder node, which writes each episode's MCAP bag; ``namespace``: where every
    node and name of the graph lives (the robot driver's names stay the robot profile's); ``external``: nodes
    another program provides (your own planner node serving the planner's interfaces), not started here;
    ``params_file``: a ROS 2 parameters file given to every node (``check_params_file``); ``lifecycle_manager``:
    the nodes start unconfigured and a lifecycle manager node brings them up in order, as Nav2's does.
    """
    unknown = [n for n in external if n not in REPLACEABLE]
    if unknown:
        raise ValueError(f"--external {', '.join(unknown)}: not a node another program can stand in for; "
                         f"choose from {', '.join(REPLACEABLE)}")
    common = {"config": config} if config else {}
    extra: dict[str, dict[str, Any]] = {
        "planner": {"backend": planner} if planner else {},
        "task_manager": {"out_dir": out_dir, "record_bag": record_bag},
    }
    specs = sim_driver(config)
    attempts = _robot_attempts(config)
    if attempts:  # a robot moves in real time: an attempt is bounded by its skill's own step budget
        extra["executor"] = {"attempt_timeout": ROBOT_ATTEMPT_TIMEOUT}
        # the task manager waits for every attempt of a subtask, and a little more
        extra["task_manager"]["execute_timeout"] = ROBOT_ATTEMPT_TIMEOUT * attempts + 30.0
    for name in GRAPH_NODES:
        if name == "recorder" and not record_bag or name in external:
            continue
        params = {**common, **extra.get(name, {}), **(overrides or {}).get(name, {})}
        specs.append(NodeSpec(name, f"homiebot.ros.nodes.{name}", f"homiebot_{name}", params))
    specs += policy_servers(config)
    if lifecycle_manager:
        specs = managed(specs)
    return [in_namespace(s, namespace, params_file) for s in specs]


UNMANAGED = ("sim_driver",)  # stands in for a robot's driver, which has no lifecycle


def managed(specs: list[NodeSpec]) -> list[NodeSpec]:
    """The specs with every lifecycle node started unconfigured (``autostart: false``) and a lifecycle manager that
    brings them up: policy servers first, the task manager last; down in reverse."""
    nodes = [s for s in specs if s.name not in UNMANAGED]
    order = sorted(nodes, key=lambda s: (s.name == "task_manager", not s.name.startswith("policy_")))
    out = [replace(s, parameters={**s.parameters, "autostart": False}) if s in nodes else s for s in specs]
    return out + [NodeSpec("lifecycle_manager", "homiebot.ros.nodes.lifecycle_manager", "homiebot_lifecycle_manager",
                           {"node_names": [s.name for s in order]})]


def in_namespace(spec: NodeSpec, namespace: str, params_file: str = "") -> NodeSpec:
    """The node spec under ``namespace`` (with the graph's parameters file)."""
    return replace(spec, namespace=namespace, params_file=params_file)


def check_params_file(path: str) -> str:
    """The absolute path of a ROS 2 parameters file (``/homiebot/planner: {ros__parameters: {backend: oracle}}``;
    ``/**`` for every node), or ValueError saying what is wrong with it: rcl would stop every node on it."""
    import yaml

    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text())
    except OSError as err:
        raise ValueError(f"--params-file {path}: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        raise ValueError(f"--params-file {path}: not YAML ({str(err).splitlines()[0]})") from None
    example = "e.g. '/homiebot/planner: {ros__parameters: {backend: oracle}}'"
    if not isinstance(data, dict) or not data:
        raise ValueError(f"--params-file {path}: a mapping of node names to their ros__parameters, {example}")
    for node, section in data.items():
        if not isinstance(section, dict) or not isinstance(section.get("ros__parameters"), dict):
            raise ValueError(f"--params-file {path}: '{node}' needs a 'ros__parameters' mapping, {example}")
    return str(file.resolve())


def node_parameters(specs: list[NodeSpec], config: str = "") -> dict[str, Any]:
    """What each node of ``specs`` gets, as a ROS 2 parameters file (a mapping, settings nested by their path): its
    parameters from the graph, and for a node of the graph the settings of the sections of the run configuration
    ``config`` it reads (``NodeDef.config``)."""
    import importlib

    from homiebot.config import load_config
    from homiebot.ros.kit.config_params import settings

    cfg = load_config(config or None)
    out: dict[str, Any] = {}
    for spec in specs:
        values: dict[str, Any] = dict(spec.parameters)
        if spec.name in GRAPH_NODES:
            for setting in settings(cfg, importlib.import_module(spec.module).NODE.config):
                place = values
                for part in setting.path[:-1]:
                    place = place.setdefault(part, {})
                place[setting.path[-1]] = setting.value
        out[f"{spec.namespace.rstrip('/')}/{spec.name}"] = {"ros__parameters": values}
    return out


def check_parameter_names(path: str, specs: list[NodeSpec], config: str = "") -> None:
    """ValueError naming a parameter of the parameters file ``path`` (already checked) that no node it is given to
    declares, with the nearest name: rcl ignores such a value silently. Only the graph's own nodes and ``/**`` are
    checked (a node of yours may take anything)."""
    import difflib

    import yaml

    from homiebot.config import load_config

    cfg = load_config(config or None)
    known = {f"{s.namespace.rstrip('/')}/{s.name}": _declared(s, cfg) for s in specs if s.name in GRAPH_NODES}
    for node, section in yaml.safe_load(Path(path).read_text()).items():
        targets = list(known.values()) if node == "/**" else [known[node]] if node in known else []
        elsewhere = [n for n in known if n.rsplit("/", 1)[-1] == str(node).rsplit("/", 1)[-1]]
        if not targets and "*" not in str(node) and elsewhere:
            raise ValueError(f"--params-file {path}: {node} is not a node of this graph; its {str(node).rsplit('/', 1)[-1]} "
                             f"node is {elsewhere[0]} (the graph's namespace)")
        if not targets:
            continue
        every = set().union(*targets)
        for name in _dotted(section["ros__parameters"]):
            if not any(name in names for names in targets):
                close = difflib.get_close_matches(name, every, n=1, cutoff=0.6)
                whole = next((n for n in every if name.startswith(n + ".")), None)
                hint = (f"; '{whole}' takes YAML text (e.g. {whole}: '{{...}}')" if whole else
                        f"; did you mean '{close[0]}'?" if close else "")
                raise ValueError(f"--params-file {path}: {node} has no parameter '{name}'{hint}")


def _declared(spec: NodeSpec, cfg: Any) -> set[str]:
    """The names of the parameters a node of the graph declares under the run configuration ``cfg``."""
    import importlib

    from homiebot.ros.kit.common import COMMON
    from homiebot.ros.kit.config_params import settings

    definition = importlib.import_module(spec.module).NODE
    own = {p.name for p in COMMON + definition.params} | {"autostart", "use_sim_time"}
    return own | {s.name for s in settings(cfg, definition.config)}


def _dotted(values: dict[str, Any], prefix: str = "") -> list[str]:
    """The names of a parameters file's nested ``ros__parameters`` as rcl flattens them (``a: {b: 1}`` is ``a.b``)."""
    names = []
    for key, value in values.items():
        name = f"{prefix}{key}"
        names += _dotted(value, name + ".") if isinstance(value, dict) else [name]
    return names


CONFIG_DIR = resources.config_dir()


ROBOT_ATTEMPT_TIMEOUT = 300.0  # s the executor waits for one skill attempt on a robot (the default, 30 s, suits the simulator)


def _robot_attempts(config: str) -> int:
    """Attempts per subtask when the config's world is the ROS 2 robot bridge (its skills act in real
    time); 0 for a simulated world."""
    from homiebot.config import load_config

    cfg = load_config(config or None)
    return cfg.attempts if cfg.world.name == "ros2_robot" else 0


def sim_driver(config: str = "") -> list[NodeSpec]:
    """The sim driver node when the config has a ``sim_driver`` section: the embedded home served under
    the world's robot profile (the graph a user deploys on the robot, run against simulation)."""
    from homiebot.config import load_config

    cfg = load_config(config or None)
    if cfg.sim_driver is None:
        return []
    scene = cfg.sim_driver.scene
    if not scene.lstrip("-").isdigit() and config and not Path(scene).is_absolute():
        scene = str((Path(config).resolve().parent / scene).resolve())  # a scene file is relative to its config, as a task's
    profile = str(cfg.world.params["profile"])
    if profile.endswith((".yaml", ".yml")) and config and not Path(profile).is_absolute():
        profile = str((Path(config).resolve().parent / profile).resolve())
    params = {"robot": profile, "scene": scene, "camera_size": cfg.sim_driver.camera_size, "lockstep": cfg.sim_driver.lockstep}
    return [NodeSpec("sim_driver", "homiebot.ros.nodes.sim_driver", "homiebot_sim_driver", params)]


def policy_servers(config: str = "") -> list[NodeSpec]:
    """One ``policy_server`` node per skill whose params configure ``process`` (its model runs in its own
    process, with that skill's ``python_executable``); the skill's ``RemotePolicy`` calls it."""
    import json

    from homiebot.config import load_config
    from homiebot.ros.messages.policy_names import default_service, service_slug

    specs = []
    for skill in load_config(config or None).skills:
        process = skill.params.get("process")
        if process is None:
            continue
        if not isinstance(process, dict):
            raise ValueError(f"skill '{skill.model}': process must be a mapping (python_executable, timeout, ...)")
        service = process.get("service") or default_service(skill.model)
        params = {"policy": str(skill.params.get("policy", "")), "policy_params": json.dumps(skill.params.get("policy_params") or {}),
                  "service": service}
        specs.append(NodeSpec(f"policy_{service_slug(skill.model)}", "homiebot.ros.nodes.policy_server", "homiebot_policy_server",
                              params, python=process.get("python_executable")))
    return specs


def ros_args(spec: NodeSpec) -> list[str]:
    """Command-line ROS arguments that give a process its node name and parameters."""
    args = ["--ros-args", "-r", f"__node:={spec.name}", "-r", f"__ns:={spec.namespace}"]
    for key, value in spec.parameters.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if isinstance(value, str) and value[:1] in "{[":  # JSON text: quoted, so ROS keeps it a string
            text = "'" + value.replace("'", "''") + "'"
        args += ["-p", f"{key}:={text}"]
    for src, dst in spec.remappings.items():
        args += ["-r", f"{src}:={dst}"]
    if spec.params_file:  # after the -p: rcl lets the last value of a parameter win, so the file's win over the graph's
        args += ["--params-file", spec.params_file]
    return args
