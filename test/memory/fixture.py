"""A hand-built demonstration (no rendering): the demonstrator clears a mug from the desk to the sink.

Thirteen frames one second apart. Subtasks start at 0 ([Go to, white_mug]), 4 ([Pick, white_mug]),
7 ([Go to, kitchen_sink]) and 10 ([Put, white_mug, kitchen_sink]). The gaze glances at the desk,
settles on the mug, is unknown while walking (frame 7) and settles on the sink. The images are flat
grey: one level in the bedroom, a flash at frame 2 (a lamp), another while walking, one in the kitchen.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from homiebot.memory.demonstration import Demonstration, Detection, Frame, TrueSubtask, Utterance, save_demonstration

GAZE = [None, "white_desk", "white_mug", "white_mug", "white_mug", "white_mug", "white_mug", None,
        "kitchen_sink", "kitchen_sink", "kitchen_sink", "kitchen_sink", "kitchen_sink"]
HOLDING = [None] * 5 + ["white_mug"] * 6 + [None] * 2
ROOM = ["bedroom"] * 7 + [None] + ["kitchen"] * 5
GREY = [80, 80, 140, 80, 80, 80, 80, 200, 150, 150, 150, 150, 150]
DESK = [Detection(name="white_desk", category="desk", area=0.3), Detection(name="white_mug", category="mug", area=0.05),
        Detection(name="red_book", category="book", area=0.04)]
SINK = [Detection(name="kitchen_sink", category="sink", area=0.4), Detection(name="white_mug", category="mug", area=0.03),
        Detection(name="yellow_sponge", category="sponge", area=0.02)]
UTTERANCES = [Utterance(start=0.2, end=1.5, text="after work I clear my desk"),
              Utterance(start=3.8, end=5.5, text="I pick up the mug by its handle"),
              Utterance(start=9.9, end=11.5, text="dirty mugs go in the kitchen sink")]
SUBTASKS = [TrueSubtask(start=0.0, subtask="[Go to, white_mug]"), TrueSubtask(start=4.0, subtask="[Pick, white_mug]"),
            TrueSubtask(start=7.0, subtask="[Go to, kitchen_sink]"), TrueSubtask(start=10.0, subtask="[Put, white_mug, kitchen_sink]")]


def mug_demonstration(folder: Path) -> Demonstration:
    """Write the fixture's images and record in ``folder`` and return the record."""
    (folder / "frames").mkdir(parents=True, exist_ok=True)
    frames = []
    for i, grey in enumerate(GREY):
        name = f"frames/{i:04d}.png"
        Image.fromarray(np.full((8, 8, 3), grey, dtype=np.uint8)).save(folder / name)
        detections = [] if ROOM[i] is None else DESK if ROOM[i] == "bedroom" else SINK
        frames.append(Frame(time=float(i), image=name, gaze=GAZE[i], detections=detections, holding=HOLDING[i], room=ROOM[i]))
    demo = Demonstration(id="mug_by_hand", home="demo", user="alex", task="clear the mug", frames=frames,
                         utterances=UTTERANCES, subtasks=SUBTASKS)
    save_demonstration(demo, folder)
    return demo
