"""Clients of the graph and of robot drivers: the robot bridge (``Ros2Robot``) and its world, proxies the agent
loop drives nodes through, remote policies, the operator's and submitter's commands, recorders and viewers."""
