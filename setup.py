"""homiebot: pip-installable Python package that is also a ROS 2 ament_python package.

The plugin folders at the repository root (planners/, skills/, perception/) are installed as
``homiebot.planners``, ``homiebot.skills`` and ``homiebot.perception`` so that their import names
cannot collide with other distributions.
"""

from glob import glob

from setuptools import setup

PACKAGE = "homiebot"
PLUGIN_DIRS = {"planners": "planners", "skills": "skills", "perception": "perception"}

packages = ["homiebot", "homiebot.worlds", "homiebot.worlds.home"]
packages += [f"homiebot.{name}" for name in PLUGIN_DIRS]
package_dir = {f"homiebot.{name}": path for name, path in PLUGIN_DIRS.items()}

setup(
    name=PACKAGE,
    version="0.1.0",
    description="Modular, hierarchical LLM-planned mobile manipulation runtime with an embedded MuJoCo home",
    long_description=open("README.md").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=packages,
    package_dir=package_dir,
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/homiebot"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/config/scenes", glob("config/scenes/*.yaml")),
        (f"share/{PACKAGE}/config/tasks", glob("config/tasks/*.yaml")),
    ],
    install_requires=["numpy>=1.24", "pydantic>=2.5", "pyyaml>=6", "pillow>=9"],
    extras_require={
        "sim": ["mujoco>=3.1", "imageio>=2.31", "imageio-ffmpeg>=0.4.9"],
        "ros": ["ros-jazzy-rclpy[fastrtps]", "ros-jazzy-std-msgs", "ros-jazzy-sensor-msgs", "ros-jazzy-geometry-msgs",
                "ros-jazzy-nav-msgs", "ros-jazzy-std-srvs", "rosbags>=0.10"],
        "ml": ["torch==2.13.0", "transformers>=4.45"],
        "dev": ["pytest>=7", "ruff>=0.4"],
    },
    entry_points={
        "console_scripts": ["homiebot = homiebot.cli:main"],
        "homiebot.planners": [
            "oracle = homiebot.planners.oracle:OraclePlanner",
            "replay = homiebot.planners.replay:ReplayPlanner",
        ],
        "homiebot.skills": [
            "privileged_navigation = homiebot.skills.privileged:PrivilegedNavigation",
            "privileged_manipulation = homiebot.skills.privileged:PrivilegedManipulation",
        ],
        "homiebot.worlds": ["embedded_home = homiebot.worlds.home.world:EmbeddedHome"],
    },
    zip_safe=True,
)
