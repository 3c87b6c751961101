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
