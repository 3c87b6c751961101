"""Skills: one per low-level model, each able to execute some high-level actions."""

from homiebot.skills.base import Skill, SkillContext, SkillResult

__all__ = ["Skill", "SkillContext", "SkillResult"]
