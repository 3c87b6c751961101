"""``DriverStatus`` and the sim driver's ``SimStatus`` alone: spot_ros2's status/estop, status/power_states and
status/behavior_faults (spot_msgs) say what stopped the robot; the sim driver publishes them and serves the
simulated operator's E-Stop."""

from __future__ import annotations

import pytest

pytest.importorskip("spot_msgs", reason="spot_msgs is built by `make setup` (tools/build_interfaces.py)")

from nav_msgs.msg import Odometry  # noqa: E402
from spot_msgs.msg import BehaviorFault, BehaviorFaultState, EStopState, EStopStateArray, PowerState  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402

from homiebot.core.robot import RobotUnavailable  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.health import DriverHealth  # noqa: E402
from homiebot.ros.clients.robot.lockstep import LockStep  # noqa: E402
from homiebot.ros.clients.robot.status import DriverStatus  # noqa: E402
from homiebot.ros.nodes.sim_driver.base import SimBase  # noqa: E402
from homiebot.ros.nodes.sim_driver.power import Power  # noqa: E402
from homiebot.ros.nodes.sim_driver.status import OPERATOR_ESTOP, SimStatus  # noqa: E402
from homiebot.ros.nodes.sim_driver.triggers import DriverTriggers  # noqa: E402
from test.ros.robot.fakes import FakeNode, stamp  # noqa: E402
from test.worlds.sim_driver import fakes as sim_fakes  # noqa: E402

PROFILE = load_profile("spot")
ESTOP, POWER, FAULTS = (PROFILE.topic(PROFILE.status[r].name) for r in ("estop", "power", "faults"))


def test_spots_profile_reads_spot_ros2s_status_topics() -> None:
    # spot_ros2 bdee4a4, spot_driver/src/robot_state/state_middleware_handle.cpp: kEStopTopic, kPowerStatesTopic,
    # kBehaviorFaultsTopic
    assert (ESTOP, POWER, FAULTS) == ("/spot/status/estop", "/spot/status/power_states", "/spot/status/behavior_faults")
    wrong = PROFILE.model_dump()
    wrong["status"]["estop"]["type"] = "spot_msgs/msg/EStopState"
    with pytest.raises(ValueError, match="status.estop: the bridge reads spot_msgs/msg/EStopStateArray"):
        type(PROFILE).model_validate(wrong)


def estops(*states: int) -> EStopStateArray:
    return EStopStateArray(estop_states=[EStopState(name=f"stop{i}", type=EStopState.TYPE_SOFTWARE, state=s)
                                         for i, s in enumerate(states)])


def power(state: int, ns: int) -> PowerState:
    msg = PowerState(motor_power_state=state)
    msg.header.stamp = stamp(ns)
    return msg


def test_an_engaged_estop_a_fault_or_lost_power_is_said_as_such() -> None:
    node = FakeNode()
    status = DriverStatus(node, PROFILE)
    assert set(node.subscriptions) == {ESTOP, POWER, FAULTS} and node.subscriptions[ESTOP][2].depth == 1
    status.check()  # nothing heard: nothing stops it
    node.deliver(ESTOP, estops(EStopState.STATE_NOT_ESTOPPED, EStopState.STATE_NOT_ESTOPPED))
    node.deliver(POWER, power(PowerState.STATE_OFF, 5))
    status.check()  # powered off before this bridge powered it: start-up's business, not a loss
    status.powered_ns = 10
    status.check()  # the power message is older than the power-on
    node.deliver(POWER, power(PowerState.STATE_OFF, 20))
    with pytest.raises(RobotUnavailable, match="spot: motor power is off"):
        status.check()
    node.deliver(FAULTS, BehaviorFaultState(faults=[BehaviorFault(behavior_fault_id=7, cause=BehaviorFault.CAUSE_FALL,
                                                                  status=BehaviorFault.STATUS_CLEARABLE)]))
    with pytest.raises(RobotUnavailable, match=r"behavior fault 7 \(a fall, clearable\)"):
        status.check()
    node.deliver(ESTOP, estops(EStopState.STATE_NOT_ESTOPPED, EStopState.STATE_ESTOPPED))
    with pytest.raises(RobotUnavailable, match="stopped by the operator's software E-Stop 'stop1'"):
        status.check()


def test_every_command_of_a_robot_whose_odometry_flows_says_it_is_estopped() -> None:
    node = FakeNode()
    health = DriverHealth(node, PROFILE, LockStep(None), 1.0, 0.05, lambda: None)
    odom = Odometry()
    odom.header.stamp, odom.pose.pose.orientation.w = stamp(1), 1.0
    node.deliver(PROFILE.topic(PROFILE.odometry.name), odom)
    assert health.alive().x == 0.0
    node.deliver(ESTOP, estops(EStopState.STATE_ESTOPPED))
    with pytest.raises(RobotUnavailable, match="operator's software E-Stop"):
        health.alive()


def test_the_sim_driver_publishes_the_status_and_its_operator_estop_cuts_power() -> None:
    node, services = sim_fakes.FakeNode(), sim_fakes.FakeNode()
    lock, counters = sim_fakes.shared()
    power = Power(needs_power=True)
    base = SimBase(node, PROFILE, sim_fakes.FakeWorld(), power, lambda: 0.0, lock, counters)
    status = SimStatus(node, services, PROFILE, power, base, lock)
    triggers = DriverTriggers(services, PROFILE, power, base, None, None, lock, counters)  # type: ignore[arg-type]  (no arm, no gripper called)
    assert triggers.run("power_on") == (True, "powered on") and triggers.run("stand")[0]
    status.publish(2_000_000_000)
    sent = {topic: node.publishers[topic].sent[-1] for topic in (ESTOP, POWER, FAULTS)}
    assert [e.state for e in sent[ESTOP].estop_states] == [EStopState.STATE_NOT_ESTOPPED]
    assert sent[POWER].motor_power_state == PowerState.STATE_ON and sent[POWER].header.stamp.sec == 2
    assert list(sent[FAULTS].faults) == []
    srv_type, press = services.services[OPERATOR_ESTOP]
    assert srv_type is SetBool and press(SetBool.Request(data=True), SetBool.Response()).success
    status.publish(3_000_000_000)
    estop, motors = node.publishers[ESTOP].sent[-1], node.publishers[POWER].sent[-1]
    assert estop.estop_states[0].state == EStopState.STATE_ESTOPPED and motors.motor_power_state == PowerState.STATE_OFF
    assert not power.can_move
    ok, why = triggers.run("power_on")
    assert not ok and "E-Stopped" in why
    press(SetBool.Request(data=False), SetBool.Response())
    assert triggers.run("power_on")[0] and not power.standing  # released: power on and stand again, as on Spot
