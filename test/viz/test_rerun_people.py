"""The persons in view are drawn on the live view's map, labelled with what they hold, and cleared when
nobody is in view (read back with rerun's own reader)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from homiebot.core.contracts import PersonSeen
from homiebot.core.world import TopDown

rr = pytest.importorskip("rerun")
rr_chunk = pytest.importorskip("rerun.chunk")


def test_people_are_points_on_the_map_labelled_with_what_they_hold(tmp_path: Path) -> None:
    from homiebot.viz.rerun_log import APP_ID, RerunLog

    path = tmp_path / "people.rrd"
    stream = rr.RecordingStream(APP_ID)
    stream.set_sinks(rr.FileSink(str(path)))
    log = RerunLog(stream)
    log.people([PersonSeen(name="person", x=1.0, y=1.0, distance=0.4)])  # no map yet: nothing to draw on
    log.map_static(TopDown(np.zeros((40, 40), dtype=bool), (0.0, 0.0), 0.1))
    log.people([PersonSeen(name="person", x=1.0, y=2.0, distance=0.5, holding="green_can")])
    log.people([])
    stream.flush(timeout_sec=10.0)
    stream.disconnect()
    rows = [row for chunk in rr_chunk.RrdReader(str(path)).store().stream() if chunk.entity_path == "/map/people"
            for row in chunk.to_record_batch().to_pylist()]
    assert len(rows) == 2
    labels = [row.get("Points2D:labels") for row in rows]
    assert labels[0] == ["person (green_can)"] and not labels[1]
