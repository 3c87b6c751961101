"""Bring-up: the graph definition (which nodes, executables and parameters) and the processes that start it."""
