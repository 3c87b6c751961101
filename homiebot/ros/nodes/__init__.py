"""One module per node of the ROS 2 graph; each has a main() for ros2 run and python -m."""
