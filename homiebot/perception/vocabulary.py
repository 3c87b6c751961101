"""The homiebot vocabulary seen by perception: object classes, receptacle types and label groups.

Detectors report these names as labels; the mapper uses the groups to tolerate label confusion
(a detector that calls a lemon an orange still says "fruit") and the receptacle facts to decide
"on" versus "in" and whether something can be opened.
"""

from __future__ import annotations

from homiebot.core.vocabulary import COLORS, OBJECT_CLASSES, RECEPTACLE_TYPES

OBJECT_LABELS: tuple[str, ...] = tuple(OBJECT_CLASSES)
RECEPTACLE_LABELS: tuple[str, ...] = tuple(RECEPTACLE_TYPES)
ALL_LABELS: tuple[str, ...] = OBJECT_LABELS + RECEPTACLE_LABELS
COLOUR_NAMES: tuple[str, ...] = tuple(COLORS)

# Receptacles have no category in the catalog; these groups say which ones a detector may mix up.
_RECEPTACLE_GROUPS = {
    "table": "surface", "desk": "surface", "kitchen_counter": "surface", "tv_stand": "surface",
    "shelf": "storage", "cabinet": "storage", "drawer": "storage",
    "sofa": "seat", "chair": "seat", "bed": "seat",
    "sink": "sink", "fridge": "appliance",
}

LABEL_GROUP: dict[str, str] = {**{n: c.category for n, c in OBJECT_CLASSES.items()}, **_RECEPTACLE_GROUPS}


def is_receptacle(label: str) -> bool:
    """True for furniture types (things objects rest on or in)."""
    return label in RECEPTACLE_TYPES


def is_known_label(label: str) -> bool:
    """True for every object class and receptacle type of the vocabulary."""
    return label in LABEL_GROUP


def same_group(a: str, b: str) -> bool:
    """True if two labels may be confused with each other (same label or same group)."""
    return a == b or (LABEL_GROUP.get(a) is not None and LABEL_GROUP.get(a) == LABEL_GROUP.get(b))


def group_members(label: str) -> list[str]:
    """Other labels of ``label``'s group, in vocabulary order."""
    group = LABEL_GROUP.get(label)
    return [n for n, g in LABEL_GROUP.items() if g == group and n != label]


def articulated(label: str) -> bool:
    """True if receptacles of this type have a door or drawer."""
    rtype = RECEPTACLE_TYPES.get(label)
    return bool(rtype and rtype.articulated)


def relation_of(label: str) -> str | None:
    """How objects relate to a receptacle type ("on" a table, "in" a fridge); None for objects."""
    rtype = RECEPTACLE_TYPES.get(label)
    return rtype.relation if rtype else None


def typical_size(label: str) -> tuple[float, float, float]:
    """Full extents (x, y, z) of the class in metres; receptacles are (depth, width, height)."""
    if label in OBJECT_CLASSES:
        return OBJECT_CLASSES[label].size
    if label in RECEPTACLE_TYPES:
        return RECEPTACLE_TYPES[label].size
    raise KeyError(label)
