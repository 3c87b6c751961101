"""Safety layer figures: e-stop latency and the layer's overhead per control step.

* e-stop latency: a thread engages the e-stop while a skill drives the embedded home's robot at its
  control rate; measured from the engage call to the first refused command (wall time) and as the
  simulated time the base kept moving after it (in control periods). 100 trials by default.
* overhead: the same expert Go to with and without ``SafeRobot`` (median per control step).

Targets: e-stop within one control period; overhead <= 0.5 ms per step.

    python benchmarks/bench_safety.py [--trials 100]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "osmesa")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from homiebot.core.contracts import Action, Subtask  # noqa: E402
from homiebot.core.robot import Stopped  # noqa: E402
from homiebot.safety import SafeRobot, SafetySettings, SafetyState  # noqa: E402
from homiebot.skills.base import SkillContext  # noqa: E402
from homiebot.skills.policy_skill import PolicySkill  # noqa: E402
from homiebot.worlds.home.scene import load_scene  # noqa: E402
from homiebot.worlds.home.world import EmbeddedHome  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GO = Subtask(action=Action.GO_TO, target="fridge")
CTX = SkillContext(0, 1, 1, 1)


def estop_trial(world: EmbeddedHome, delay: float) -> tuple[float, float]:
    """(wall seconds from engage to the first refused command, simulated seconds moved after engage)."""
    world.reset()
    state = SafetyState()
    world.install_guard(lambda r: SafeRobot(r, SafetySettings(), state))
    robot = world.robot
    assert isinstance(robot, SafeRobot)
    engaged: dict[str, float] = {}
    refused: dict[str, float] = {}
    original = robot._before_command

    def watched() -> None:
        try:
            original()
        except Stopped:
            refused.setdefault("t", time.perf_counter())
            refused.setdefault("sim", world.own_robot().sim_time)
            raise

    robot._before_command = watched  # type: ignore[method-assign]

    def engage() -> None:
        engaged["sim"] = world.own_robot().sim_time
        engaged["t"] = time.perf_counter()
        state.engage_estop("bench")

    timer = threading.Timer(delay, engage)
    timer.start()
    PolicySkill("NoMaD", policy="expert_waypoints", render=False, max_steps=2000).run(GO, world, CTX)
    timer.join()
    world.install_guard(None)
    if "t" not in refused:
        return float("nan"), float("nan")
    return refused["t"] - engaged["t"], max(0.0, refused["sim"] - engaged["sim"])


def step_cost(world: EmbeddedHome, guarded: bool, repeats: int) -> float:
    """Median wall seconds per control step of an expert Go to (no rendering)."""
    per_step = []
    for _ in range(repeats):
        world.reset()
        world.install_guard((lambda r: SafeRobot(r, SafetySettings(), SafetyState())) if guarded else None)
        skill = PolicySkill("NoMaD", policy="expert_waypoints", render=False, max_steps=2000)
        t0 = time.perf_counter()
        result = skill.run(GO, world, CTX)
        per_step.append((time.perf_counter() - t0) / max(1, result.stats["steps"]))
    world.install_guard(None)
    return statistics.median(per_step)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    world = EmbeddedHome(load_scene(ROOT / "config" / "scenes" / "demo.yaml"), width=64, height=64)
    try:
        period = 1.0 / 4.0  # NoMaD's control rate
        walls, sims = [], []
        for k in range(args.trials):
            wall, sim = estop_trial(world, 0.002 + 0.0003 * (k % 10))
            if wall == wall:  # the skill may have finished before the e-stop: not a trial
                walls.append(wall)
                sims.append(sim)
        plain = step_cost(world, False, args.repeats)
        safe = step_cost(world, True, args.repeats)
    finally:
        world.close()
    ms = 1000.0
    print(f"e-stop trials: {len(walls)} of {args.trials} (the rest finished before the e-stop)")
    print(f"e-stop to first refused command (wall): median {statistics.median(walls) * ms:.3f} ms, max {max(walls) * ms:.3f} ms")
    print(f"base motion after the e-stop (simulated): median {statistics.median(sims):.3f} s, max {max(sims):.3f} s "
          f"(control period {period:.3f} s; target <= 1 period)")
    print(f"control step without / with the safety layer: {plain * ms:.3f} / {safe * ms:.3f} ms "
          f"-> overhead {(safe - plain) * ms:.3f} ms per step (target <= 0.5 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
