"""High-level planners: each turns the task, history, feedback and four views into the next subtask."""

from homiebot.planners.base import EpisodeContext, Planner, PlannerError, PlannerReply, PlannerRequest

__all__ = ["EpisodeContext", "Planner", "PlannerError", "PlannerReply", "PlannerRequest"]
