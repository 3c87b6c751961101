"""Fixtures of the ROS 2 tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def context(request: pytest.FixtureRequest) -> Iterator[object]:
    """An rclpy context of its own on the test module's ROS_DOMAIN_ID (its ``DOMAIN``)."""
    rclpy = pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")
    from rclpy.context import Context

    ctx = Context()
    rclpy.init(context=ctx, domain_id=request.module.DOMAIN)
    yield ctx
    rclpy.shutdown(context=ctx)
