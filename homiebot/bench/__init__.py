"""Benchmarking: task suites with keypaths, EMMOE metrics, parallel resumable evaluation, reports."""
