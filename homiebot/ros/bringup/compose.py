"""Run the whole graph in one process (like a ROS 2 component container): ``homiebot up --compose``.

    python -m homiebot.ros.bringup.compose '<JSON list of node specs>'
"""

from __future__ import annotations

import importlib
import json
import sys

from homiebot.ros.bringup.graph import NodeSpec
from homiebot.ros.kit.process import run_composed


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    specs = [NodeSpec(**s) for s in json.loads(argv[0])]
    members = [(importlib.import_module(s.module).NODE, s.name, s.parameters, s.namespace) for s in specs]
    files = sorted({s.params_file for s in specs if s.params_file})
    return run_composed(members, [arg for f in files for arg in ("--params-file", f)])


if __name__ == "__main__":
    sys.exit(main())
