"""``python -m homiebot.ros.nodes.sim_driver --ros-args -p robot:=spot -p scene:=0``."""

import sys

from homiebot.ros.nodes.sim_driver.node import main

if __name__ == "__main__":
    sys.exit(main())
