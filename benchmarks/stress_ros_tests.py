"""The flake hunt: the test modules that start ROS 2 processes, run again and again, quiet or beside busy processes.

    python benchmarks/stress_ros_tests.py [--rounds 20] [--busy 2] [--minutes 600] [MODULE ...]

Each round runs the modules (default: test/ros/ and the other modules that start ROS processes, test/conftest.py's
ROS_MODULES) in one pytest process, one module after the other, as ``make test`` runs them on its ROS worker.
``--busy N`` keeps N busy processes running beside them (a loaded machine: CI shares its two cores). Prints every
round's outcome and the machine's load as it goes, then each test that failed with how often and its first
error line; exits 1 when anything failed. It stops by itself after ``--rounds`` rounds or ``--minutes``
minutes, whichever comes first (``make test-stress`` runs it; ``STRESS_ARGS`` passes options).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def ros_modules() -> list[str]:
    """Every test module that starts ROS 2 processes, as test/conftest.py groups them."""
    from test.conftest import ROS_MODULES

    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "test" / "ros").glob("test_*.py")) + sorted(ROS_MODULES)


def counts(report: Path) -> str:
    """'N passed, N failed, N skipped' of a JUnit XML report."""
    if not report.exists():
        return "no report"
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    total, failed, errors, skipped = (int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
    return f"{total - failed - errors - skipped} passed, {failed + errors} failed, {skipped} skipped"


def failures(report: Path) -> dict[str, str]:
    """The tests that failed or errored in a JUnit XML report: node id -> the first line of the error."""
    found: dict[str, str] = {}
    if not report.exists():
        return found
    for case in ET.parse(report).getroot().iter("testcase"):
        for bad in (*case.findall("failure"), *case.findall("error")):
            name = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
            text = (bad.get("message") or bad.text or "").strip().splitlines()
            found[name] = text[0][:200] if text else ""
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("modules", nargs="*", help="test modules (default: every module that starts ROS 2 processes)")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--busy", type=int, default=0, help="busy processes beside the tests")
    ap.add_argument("--minutes", type=float, default=600.0, help="stop starting rounds after this long")
    ap.add_argument("--reports", type=Path, help="keep each round's JUnit XML report (with every test's time) in this folder")
    args = ap.parse_args()

    modules = args.modules or ros_modules()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]  # ours, killed below
    failed: Counter[str] = Counter()
    first_error: dict[str, str] = {}
    rounds_run = red = 0
    began = time.monotonic()
    print(f"{len(modules)} modules, up to {args.rounds} rounds, {args.busy} busy process(es) beside them", flush=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if args.reports:
                args.reports.mkdir(parents=True, exist_ok=True)
            for n in range(1, args.rounds + 1):
                if time.monotonic() - began > 60 * args.minutes:
                    print(f"stopping after {args.minutes:g} minutes", flush=True)
                    break
                report = (args.reports or Path(tmp)).resolve() / f"round{n}.xml"
                start = time.monotonic()
                run = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *modules], cwd=ROOT, capture_output=True, text=True)
                rounds_run += 1
                bad = failures(report)
                if run.returncode != 0 and not bad:
                    bad = {"(pytest)": (run.stdout.strip().splitlines() or ["exit status " + str(run.returncode)])[-1]}
                red += bool(bad)
                failed.update(bad)
                for name, error in bad.items():
                    first_error.setdefault(name, error)
                print(f"round {n}: {counts(report)} ({time.monotonic() - start:.0f} s, load {os.getloadavg()[0]:.1f})"
                      + "".join(f"\n  FAILED {name}: {error}" for name, error in bad.items()), flush=True)
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    print(f"{rounds_run} rounds in {(time.monotonic() - began) / 60:.1f} min: {rounds_run - red} green, {red} red")
    for name, times in failed.most_common():
        print(f"  {times}x {name}: {first_error[name]}")
    return 1 if red else 0


if __name__ == "__main__":
    sys.exit(main())
