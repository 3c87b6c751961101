"""People in the loop: who answers a planner's clarifying questions (``[Ask, <question>]``).

``User`` is the interface; ``SimulatedUser`` answers from a task's hidden intent and the scene and
judges whether a question was relevant; ``TerminalUser`` asks a person at the terminal; personas
(``homiebot.people.persona``) word instructions and answers in character, optionally through a
language model (``homiebot.people.llm_persona``).
"""

from homiebot.people.base import NOBODY_ANSWERED, NoUser, User

__all__ = ["NOBODY_ANSWERED", "NoUser", "User"]
