"""Colour names for image regions, on the palette of the homiebot vocabulary ("red", "white"...).

Rendered or photographed surfaces are darker than their paint (shading), so the palette is
compared after a brightness fit: the median colour of a region's brightest pixels matches a palette colour scaled by a
shading factor, and factors far from the typical one cost extra (this is what separates white,
silver, gray and black, which differ only in brightness).
"""

from __future__ import annotations

import numpy as np

from homiebot.core.vocabulary import COLORS

NAMES: tuple[str, ...] = tuple(COLORS)
_PALETTE = np.array([COLORS[n][:3] for n in NAMES], dtype=np.float64) * 255.0
TYPICAL_SHADING = 0.55  # rendered/painted brightness ratio of lit faces, measured in the embedded home
_SHADING_COST = 30.0  # distance units per unit of log shading away from the typical factor


def colour_name(pixels: np.ndarray, shading: float = TYPICAL_SHADING) -> str | None:
    """Best palette name for RGB pixels (N x 3, uint8 or float 0..255); None when there are none."""
    px = np.asarray(pixels, dtype=np.float64).reshape(-1, 3)
    if px.size == 0:
        return None
    # the brightest quarter of the pixels: lit faces show the paint best, shadowed ones all look gray
    brightness = px.sum(axis=1)
    rgb = np.median(px[brightness >= np.percentile(brightness, 75)], axis=0)
    # best shading factor per palette colour (least squares), kept within a plausible range
    k = np.clip(_PALETTE @ rgb / np.maximum((_PALETTE * _PALETTE).sum(1), 1e-9), 0.15, 1.6)
    residual = np.linalg.norm(rgb[None] - k[:, None] * _PALETTE, axis=1)
    cost = residual + _SHADING_COST * np.abs(np.log(k / shading))
    return NAMES[int(np.argmin(cost))]
