"""The learned low-level policies by configuration name (merged into the policy factory)."""

from __future__ import annotations

from homiebot.policies.base import Policy
from homiebot.policies.nomad import NoMaDPolicy
from homiebot.policies.octo import OctoPolicy
from homiebot.policies.pixnav import PixNavPolicy
from homiebot.policies.rt1x import RT1XPolicy

LEARNED_POLICIES: dict[str, type[Policy]] = {
    "nomad": NoMaDPolicy,
    "pixnav": PixNavPolicy,
    "octo": OctoPolicy,
    "rt1x": RT1XPolicy,
}

__all__ = ["LEARNED_POLICIES", "NoMaDPolicy", "OctoPolicy", "PixNavPolicy", "RT1XPolicy"]
