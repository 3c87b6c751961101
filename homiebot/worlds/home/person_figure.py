"""MJCF of the person: a simple articulated figure (legs and arms on hinges) about 1.7 m tall.

The root body is named after the person and carries, in order, slides ``<name>__x``, ``<name>__y``,
``<name>__z`` and hinge ``<name>__yaw``, so its qpos is ``(x, y, z, yaw)``; z parks the figure below the
floor when there is nobody to draw. Hips ``<name>__hip_l/_r`` and shoulders ``<name>__shoulder_l/_r``
turn about the body's lateral axis (positive swings a limb backwards; see ``person.figure_joints``). Every
part is a body ``<name>/...`` so segmentation gives the whole figure the person's instance id.
"""

from __future__ import annotations

from homiebot.worlds.home.catalog import COLORS

SKIN = "0.87 0.72 0.6 1"
HAIR = "0.2 0.14 0.1 1"
TROUSERS = "0.2 0.22 0.3 1"
SHOES = "0.12 0.1 0.1 1"
HIP_HEIGHT = 0.92
SHOULDER_HEIGHT = 1.38
ARM_LENGTH = 0.6


def root_joints(name: str) -> tuple[str, str, str, str]:
    return (f"{name}__x", f"{name}__y", f"{name}__z", f"{name}__yaw")


def limb_joints(name: str) -> tuple[str, str, str, str]:
    return (f"{name}__hip_l", f"{name}__hip_r", f"{name}__shoulder_l", f"{name}__shoulder_r")


def person_mjcf(name: str, shirt: str) -> str:
    """The figure's body tree; ``shirt`` is a colour name of the vocabulary."""
    r, g, b, a = COLORS[shirt]
    cloth = f"{r:.3g} {g:.3g} {b:.3g} {a:.3g}"
    jx, jy, jz, jyaw = root_joints(name)
    hl, hr, sl, sr = limb_joints(name)

    def leg(side: str, y: float, joint: str) -> str:
        return (f'<body name="{name}/leg_{side}" pos="0 {y} {HIP_HEIGHT}">'
                f'<joint name="{joint}" type="hinge" axis="0 1 0" range="-1.2 1.2"/>'
                f'<geom type="capsule" fromto="0 0 0 0 0 -0.8" size="0.065" rgba="{TROUSERS}"/>'
                f'<geom type="box" pos="0.05 0 -0.87" size="0.11 0.05 0.035" rgba="{SHOES}"/></body>')

    def arm(side: str, y: float, joint: str) -> str:
        return (f'<body name="{name}/arm_{side}" pos="0 {y} {SHOULDER_HEIGHT}">'
                f'<joint name="{joint}" type="hinge" axis="0 1 0" range="-2.5 1.5"/>'
                f'<geom type="capsule" fromto="0 0 0 0 0 -{ARM_LENGTH - 0.06}" size="0.045" rgba="{cloth}"/>'
                f'<geom type="sphere" pos="0 0 -{ARM_LENGTH}" size="0.05" rgba="{SKIN}"/></body>')

    return (f'<body name="{name}">'
            f'<joint name="{jx}" type="slide" axis="1 0 0"/><joint name="{jy}" type="slide" axis="0 1 0"/>'
            f'<joint name="{jz}" type="slide" axis="0 0 1"/><joint name="{jyaw}" type="hinge" axis="0 0 1"/>'
            f'<geom type="capsule" fromto="0 0 {HIP_HEIGHT + 0.08} 0 0 {SHOULDER_HEIGHT - 0.04}" size="0.17" rgba="{cloth}"/>'
            f'<geom type="box" pos="0 0 {HIP_HEIGHT}" size="0.1 0.17 0.06" rgba="{TROUSERS}"/>'
            f'<geom type="capsule" fromto="0 0 1.45 0 0 1.52" size="0.05" rgba="{SKIN}"/>'
            f'<geom type="sphere" pos="0.01 0 1.62" size="0.11" rgba="{SKIN}"/>'
            f'<geom type="ellipsoid" pos="-0.02 0 1.67" size="0.11 0.115 0.08" rgba="{HAIR}"/>'
            + leg("l", 0.1, hl) + leg("r", -0.1, hr) + arm("l", 0.23, sl) + arm("r", -0.23, sr)
            + "</body>")
