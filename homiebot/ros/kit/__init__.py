"""The node kit: start-up with declared parameters, lifecycle, typed services, executors, the Fast DDS profile,
heartbeats and the safety layer's topics, shared by every node and client."""
