"""Robot profiles: homiebot's own procedures never call a driver's e-stop services, which belong to the
operator's E-Stop (spot_ros2's estop/gentle can replace the operator's E-Stop configuration)."""

from __future__ import annotations

import pytest

from homiebot.robots.profile import ROBOTS_DIR, ProfileError, is_operator_estop, load_profile


@pytest.mark.parametrize("robot", ["spot", "fetch"])
def test_the_shipped_profiles_stop_without_the_drivers_estop(robot: str) -> None:
    profile = load_profile(robot)
    for group in (profile.startup, profile.shutdown, profile.estop, profile.estop_release):
        assert not [role for role in group if is_operator_estop(profile.services[role].name)]


def test_spot_stops_with_its_stop_service_and_keeps_the_operators_services_listed() -> None:
    spot = load_profile("spot")
    assert spot.estop == ["stop"] and spot.estop_release == []
    assert spot.services["estop_gentle"].name == "estop/gentle"  # the driver's, served, never called


@pytest.mark.parametrize("group", ["estop", "estop_release", "startup", "shutdown"])
def test_a_procedure_calling_the_drivers_estop_is_a_profile_error(tmp_path, group: str) -> None:
    text = (ROBOTS_DIR / "spot.yaml").read_text()
    lines = [f"{group}: [estop_gentle]" if line.startswith(f"{group}:") else line for line in text.splitlines()]
    (tmp_path / "spot.yaml").write_text("\n".join(lines) + "\n")
    with pytest.raises(ProfileError, match=rf"{group} calls the driver's e-stop services \['estop_gentle'\].*operator"):
        load_profile(tmp_path / "spot.yaml")


@pytest.mark.parametrize("name, owned", [("estop/gentle", True), ("/estop/hard", True), ("estop", True), ("stop", False),
                                         ("estop_something_else/x", False)])
def test_which_services_are_the_operators(name: str, owned: bool) -> None:
    assert is_operator_estop(name) is owned


def test_services_that_wait_for_the_robot_have_their_own_timeouts(tmp_path) -> None:
    spot = load_profile("spot")
    assert spot.services["power_on"].timeout == 30 and spot.services["arm_unstow"].timeout == 20
    assert spot.services["claim"].timeout is None  # the bridge's call_timeout
    text = (ROBOTS_DIR / "spot.yaml").read_text().replace("type: std_srvs/srv/Trigger, timeout: 30", "type: std_srvs/srv/Trigger, timeout: 0")
    (tmp_path / "spot.yaml").write_text(text)
    with pytest.raises(ProfileError, match="timeout"):
        load_profile(tmp_path / "spot.yaml")


def test_spots_gripper_state_is_the_drivers_manipulation_state() -> None:
    spot = load_profile("spot")
    assert spot.gripper_state is not None
    assert (spot.topic(spot.gripper_state.name), spot.gripper_state.type) == ("/spot/manipulation_state",
                                                                              "bosdyn_api_msgs/msg/ManipulatorState")


def test_a_gripper_state_of_a_type_the_bridge_cannot_read_is_a_profile_error(tmp_path) -> None:
    text = (ROBOTS_DIR / "spot.yaml").read_text().replace("type: bosdyn_api_msgs/msg/ManipulatorState",
                                                          "type: sensor_msgs/msg/JointState")
    (tmp_path / "spot.yaml").write_text(text)
    with pytest.raises(ProfileError, match=r"gripper_state: the bridge reads bosdyn_api_msgs/msg/ManipulatorState, "
                                           r"not 'sensor_msgs/msg/JointState'"):
        load_profile(tmp_path / "spot.yaml")


def test_spots_driver_serves_once_an_estop_is_registered_and_fetchs_at_once() -> None:
    spot, fetch = load_profile("spot"), load_profile("fetch")
    assert spot.estop_registration is not None and spot.estop_registration.wait == 10
    assert spot.driver_node() == "/spot/spot_ros2"  # spot_driver.launch.py: the node spot_ros2 under the robot's name
    assert fetch.estop_registration is None and fetch.driver_node() is None


@pytest.mark.parametrize("node", ["spot/spot_ros2", "", "2fast", "spot ros2"])
def test_the_node_a_driver_serves_from_is_a_plain_node_name(tmp_path, node: str) -> None:
    text = (ROBOTS_DIR / "spot.yaml").read_text().replace("estop_registration: {node: spot_ros2", f"estop_registration: {{node: '{node}'")
    (tmp_path / "spot.yaml").write_text(text)
    with pytest.raises(ProfileError, match="estop_registration.node .* must be a plain node name"):
        load_profile(tmp_path / "spot.yaml")


def test_a_fetch_profile_for_a_ros2_port_of_its_controllers_names_the_base_command_topic(tmp_path) -> None:
    """robot_controllers' ros2 branch has no cmd_vel mux: its base listens on base_controller/command only
    (docs/robots.md, Reaching a Fetch from ROS 2). A copy of fetch.yaml with that one line changed is the profile."""
    text = (ROBOTS_DIR / "fetch.yaml").read_text()
    line = "cmd_vel: {name: cmd_vel, type: geometry_msgs/msg/Twist}"
    assert text.count(line) == 1
    (tmp_path / "fetch_ros2.yaml").write_text(text.replace(line, "cmd_vel: {name: base_controller/command, type: geometry_msgs/msg/Twist}"))
    port = load_profile(tmp_path / "fetch_ros2.yaml")
    assert port.topic(port.cmd_vel.name) == "/base_controller/command"
    assert load_profile("fetch").topic("cmd_vel") == "/cmd_vel"  # the ROS 1 robot: into fetch_bringup's cmd_vel mux
    pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")
    from homiebot.ros.clients.driver_check import driver_interfaces

    assert driver_interfaces(port)["subscribers"] == ["/base_controller/command"]  # what the driver check looks for
