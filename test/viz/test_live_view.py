"""The live view as a user meets it: `homiebot run --view --save-rrd --video` on the demo task, the
web viewer opened in headless Chromium, the .rrd read back with rerun's own reader, replays,
and the one-line errors without the extra or with bad input."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from homiebot.core.contracts import VIEW_NAMES
from homiebot.viz.queue import DropQueue
from test.viz.browser import CHROMIUM
from test.viz.conftest import DEMO, ENV, cli

rr_chunk = pytest.importorskip("rerun.chunk")  # the viz extra (make installs it)


def rrd_rows(path: Path) -> dict[str, list]:
    """Entity path -> its rows as (timeline values, record-batch row) read by rerun's RrdReader."""
    rows: dict[str, list] = {}
    for chunk in rr_chunk.RrdReader(str(path)).store().stream():
        batch = chunk.to_record_batch().to_pylist()
        rows.setdefault(chunk.entity_path, []).extend(batch)
    return rows


def test_web_viewer_served_on_loopback_draws_the_episode(live_run):
    assert live_run["url"].startswith("http://127.0.0.1:")
    assert live_run["listening"]
    if not CHROMIUM:
        pytest.skip("Debian's chromium is not installed (make setup installs it)")
    # a blank page or rerun's loading screen has a few dozen colours; the views, depth and map thousands
    assert live_run["colours"] >= 400, f"the viewer page looks blank ({live_run['colours']} colours)"


def test_ctrl_c_after_the_episode_exits_with_its_outcome_and_stops_the_viewer(live_run):
    assert live_run["code"] == 0, live_run["stderr"]
    port = int(live_run["url"].split(":")[2].split("/")[0])
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_saved_recording_has_views_depth_map_and_one_timeline_entry_per_round(live_run):
    record = json.loads((live_run["folder"] / "episode.json").read_text())
    rows = rrd_rows(live_run["rrd"])
    out = "".join(live_run["lines"])
    skipped = int(out.split(" frames skipped")[0].rsplit(" ", 1)[1]) if " frames skipped" in out else 0
    for view in VIEW_NAMES:  # one observation a round, less those skipped to keep up (said on stdout)
        assert len(rows[f"/views/{view}"]) == len(record["steps"]) - skipped > 0
        assert len(rows[f"/depth/{view}"]) == len(record["steps"]) - skipped
        assert f"/segmentation/{view}" in rows
    for part in ("occupancy", "rooms", "things", "robot", "path"):
        assert f"/map/{part}" in rows, part
    entries = rows["/timeline/rounds"]
    assert sorted(e["round"] for e in entries) == [s["round"] for s in record["steps"]]
    texts = [e["TextLog:text"] for e in sorted(entries, key=lambda e: e["round"])]
    texts = [t[0] if isinstance(t, list) else t for t in texts]
    for step, text in zip(record["steps"], texts):
        assert text.startswith(f"round {step['round']}: ")
        assert (step["feedback"]["code"] or "ok") in text


def test_view_replays_an_episode_folder_to_rrd(live_run, tmp_path):
    out = tmp_path / "replay.rrd"
    done = cli("view", str(live_run["folder"]), "--save-rrd", str(out))
    assert done.returncode == 0, done.stderr
    rows = rrd_rows(out)
    steps = json.loads((live_run["folder"] / "episode.json").read_text())["steps"]
    assert len(rows["/timeline/rounds"]) == len(steps)
    assert len(rows["/views/front"]) == len(steps)


@pytest.mark.parametrize("make", ["missing", "not_a_folder", "bad_json"])
def test_view_refuses_bad_input_in_one_line(tmp_path, make):
    src = tmp_path / "thing"
    if make == "not_a_folder":
        src.mkdir()
    elif make == "bad_json":
        src.mkdir()
        (src / "episode.json").write_text("{not json")
    done = cli("view", str(src), "--save-rrd", str(tmp_path / "x.rrd"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("homiebot: error: ") and "Traceback" not in done.stderr


def test_without_the_extra_the_flags_name_it(tmp_path):
    code = ("import sys; sys.modules['rerun'] = None; from homiebot.cli import main; "
            f"sys.exit(main(['run', '--task', {str(DEMO)!r}, '--out', {str(tmp_path)!r}, '--view']))")
    done = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "homiebot[viz]" in done.stderr
    assert not list(tmp_path.iterdir())  # nothing ran


def test_drop_queue_never_blocks_and_keeps_timeline_entries():
    gate = threading.Event()
    seen: list[str] = []
    q = DropQueue(limit=2)
    q.put(gate.wait)  # the viewer is stuck
    time.sleep(0.05)
    t0 = time.perf_counter()
    results = [q.put(lambda i=i: seen.append(f"img{i}")) for i in range(50)]
    for i in range(5):
        q.put(lambda i=i: seen.append(f"round{i}"), droppable=False)
    assert time.perf_counter() - t0 < 5.0  # generous: the point is that put never waits on the viewer
    gate.set()
    q.close()
    assert results.count(True) == 2 and q.dropped == 48
    assert [s for s in seen if s.startswith("round")] == [f"round{i}" for i in range(5)]


def test_a_failing_viewer_never_reaches_the_loop():
    q = DropQueue()
    q.put(lambda: 1 / 0)
    ok: list[int] = []
    q.put(lambda: ok.append(1), droppable=False)
    q.close()
    assert ok == [1] and q.errors and "ZeroDivisionError" in q.errors[0]
