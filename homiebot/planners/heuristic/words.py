"""The words the heuristic planner reads phrases by: articles, the words that say a room, where furniture usually
stands, the group each object class belongs to, and the object class a phrase names."""

from __future__ import annotations

from homiebot.core.vocabulary import OBJECT_CLASSES
from homiebot.perception.grounding import singular, words_of

GROUPS = {name: cls.category for name, cls in OBJECT_CLASSES.items()}  # apple -> fruit, can -> drink ...
GROUPS |= {"can": "drink", "bottle": "drink", "cup": "drink", "mug": "drink"}
USUALLY_ONE = {"fridge", "kitchen counter", "tv stand"}  # a home rarely has two: not worth a question
ROOM_WORDS = {"kitchen", "bedroom", "bathroom", "living", "dining", "office", "hallway"}  # words that say a room
# where a piece of furniture usually stands (common sense; orders the search for a place not seen yet)
USUAL_ROOMS = {"fridge": ("kitchen",), "kitchen_counter": ("kitchen",), "sink": ("kitchen", "bathroom"),
               "sofa": ("living",), "tv_stand": ("living",), "bed": ("bedroom",), "desk": ("office", "bedroom"),
               "table": ("dining", "kitchen", "living"), "chair": ("dining", "office", "bedroom", "living"),
               "cabinet": ("kitchen", "bathroom", "dining", "living", "office"), "drawer": ("kitchen", "bedroom", "office"),
               "shelf": ("living", "office", "bathroom", "dining", "bedroom")}
ARTICLES = ("the", "a", "an", "my", "one", "some")


def class_of(phrase: str) -> str | None:
    """The object class a phrase names ('yellow lemon' -> lemon), if any."""
    ws = {singular(w) for w in words_of(phrase)}
    named = sorted((c for c in OBJECT_CLASSES if set(c.split("_")) <= ws), key=lambda c: -len(c.split("_")))
    return named[0] if named else None
