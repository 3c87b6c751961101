"""Builders of the benchmark suites shipped in ``homiebot/bench/suites``."""
