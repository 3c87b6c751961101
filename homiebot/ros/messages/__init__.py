"""The ROS wing's messages: homiebot data to and from ROS 2 messages, topic and service names, and what may
arrive on the wire. Imports nothing else of ``homiebot.ros``."""
