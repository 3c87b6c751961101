"""Recording demonstrations (scripted in the simulator, or read from a robot's ROS 2 bag) for the memory."""
