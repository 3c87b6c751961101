"""Perception: detectors, the semantic mapper and name grounding (plugins under homiebot.detectors)."""
