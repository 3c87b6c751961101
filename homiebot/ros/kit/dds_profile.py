"""The Fast DDS profile of homiebot's processes (``fastdds.xml`` beside this module).

Besides sizing the transports for camera frames, the profile gives every writer a ``max_blocking_time``
of ``RESPONSE_WAIT`` seconds. rmw_fastrtps waits that long, before it sends a service response (an
action's goal, cancel and result answers included), for the server's response writer to match the
client's response reader; at Fast DDS's default of 0.1 s a response to a client whose reader had not been
discovered yet was dropped ("failed to send response (timeout): client will not receive response") and
the client waited for it until its own timeout. Discovery of a new endpoint took up to 3 s on a
2-core machine, quiet or beside busy processes (``benchmarks/bench_ros_races.py`` prints it), so the wait
is 10 s: it costs nothing when the client is known (matched, or gone: rmw_fastrtps forgets a client whose
request writer left), and only a response to a client still being discovered waits.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path

PROFILE = Path(__file__).with_name("fastdds.xml")
RESPONSE_WAIT = 10.0  # s; the <max_blocking_time> of the profile's default writer
VARIABLES = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")  # Fast DDS 2.x reads either


def use_profile(env: MutableMapping[str, str]) -> None:
    """Point Fast DDS at homiebot's profile in ``env`` (``os.environ`` before the first node of a process, or a
    child's environment), unless a profile was chosen already: the user's own wins, and should then set a
    writer ``max_blocking_time`` of its own (docs/ros.md, "Clients of the graph")."""
    chosen = next((env[name] for name in VARIABLES if env.get(name)), str(PROFILE))
    for name in VARIABLES:
        env.setdefault(name, chosen)
