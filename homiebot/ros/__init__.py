"""The ROS 2 graph: one node per component (world, mapper, planner, detector, executor, task manager).

Importing this package does not import rclpy; the core runtime (``homiebot run``/``eval``) never does.
"""
