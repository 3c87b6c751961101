"""MJCF (MuJoCo XML) of a home ``Layout``: floors, walls, furniture, objects and the robot.

Nothing is simulated: the renderer writes poses into ``qpos`` and runs kinematics only, so every
geom has ``contype = conaffinity = 0``. Naming conventions (see the helpers below):

* receptacle body ``<rec>``; hinged door body ``<rec>/door`` with hinge joint ``<rec>__door``
  (0 = closed, pi/2 = open, swinging outward about the front +y edge); drawer body
  ``<rec>/drawer`` with slide joint ``<rec>__drawer`` along local +x (0 .. DRAWER_TRAVEL);
* object body ``<obj>`` with free joint ``<obj>__free`` (qpos = x y z qw qx qy qz);
* robot root body ``robot`` with joints ``robot__x``, ``robot__y``, ``robot__yaw`` (see robot.py),
  cameras ``front``, ``left``, ``back``, ``right``;
* geoms ``floor/<room>`` and ``wall/<i>`` in the world body.

``entity_of`` maps a geom's body/geom names back to the scene entity it belongs to.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from homiebot.worlds.home.catalog import (
    DOOR_THICKNESS,
    DRAWER_BOX_BOTTOM,
    DRAWER_TRAVEL,
    RGBA,
    WALL_HEIGHT,
)
from homiebot.worlds.home.layout import Layout, ObjectInfo, Receptacle
from homiebot.worlds.home.person_figure import person_mjcf
from homiebot.worlds.home.robot import ROBOT_BODY, robot_mjcf

ROBOT_ENTITY = ROBOT_BODY
WALL_ENTITY = "wall"
RESERVED_NAMES = (ROBOT_ENTITY, WALL_ENTITY)
WALL_RGBA: RGBA = (0.93, 0.91, 0.87, 1.0)
HIDDEN_Z = -50.0  # where objects without a pose are parked, far below the floor
NEAR_CLIP = 0.05  # metres
PANEL = 0.03  # thickness of furniture side panels (less than layout.CONTAINER_WALL)


def door_joint(receptacle: str) -> str:
    return f"{receptacle}__door"


def drawer_joint(receptacle: str) -> str:
    return f"{receptacle}__drawer"


def object_joint(obj: str) -> str:
    return f"{obj}__free"


def entity_of(body_name: str, geom_name: str | None) -> str | None:
    """The scene entity (room, receptacle, object, ``robot`` or ``wall``) a geom belongs to."""
    if geom_name:
        if geom_name.startswith("floor/"):
            return geom_name[len("floor/"):]
        if geom_name.startswith("wall/"):
            return WALL_ENTITY
    if not body_name or body_name == "world":
        return None
    return body_name.split("/", 1)[0]


# ---- XML helpers ---------------------------------------------------------------------------
def _v(*values: float) -> str:
    return " ".join(f"{v:.9g}" for v in values)


def _rgba(c: RGBA) -> str:
    return _v(*c)


def _shade(c: RGBA, k: float) -> RGBA:
    """Darker (k < 1) or lighter (k > 1, mixing towards white) version of a colour."""
    if k <= 1.0:
        return (c[0] * k, c[1] * k, c[2] * k, c[3])
    t = min(k - 1.0, 1.0)
    return (c[0] + (1 - c[0]) * t, c[1] + (1 - c[1]) * t, c[2] + (1 - c[2]) * t, c[3])


def _slab(x0: float, x1: float, y0: float, y1: float, z0: float, z1: float, c: RGBA, name: str = "") -> str:
    """An axis-aligned box given by its min/max corners in the parent frame."""
    named = f'name="{name}" ' if name else ""
    return (f'<geom {named}type="box" pos="{_v((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2)}" '
            f'size="{_v((x1 - x0) / 2, (y1 - y0) / 2, (z1 - z0) / 2)}" rgba="{_rgba(c)}"/>')


def _cyl(x: float, y: float, z0: float, z1: float, r: float, c: RGBA) -> str:
    return f'<geom type="cylinder" pos="{_v(x, y, (z0 + z1) / 2)}" size="{_v(r, (z1 - z0) / 2)}" rgba="{_rgba(c)}"/>'


# ---- furniture ------------------------------------------------------------------------------
def _legs(hx: float, hy: float, z1: float, c: RGBA, t: float = 0.05, inset: float = 0.03) -> list[str]:
    return [_slab(sx * (hx - inset) - t / 2, sx * (hx - inset) + t / 2, sy * (hy - inset) - t / 2,
                  sy * (hy - inset) + t / 2, 0.0, z1, c) for sx in (-1, 1) for sy in (-1, 1)]


def _table(r: Receptacle) -> list[str]:
    hx, hy, h = r.half
    return [_slab(-hx, hx, -hy, hy, h - 0.04, h, r.color), *_legs(hx, hy, h - 0.04, _shade(r.color, 0.8))]


def _desk(r: Receptacle) -> list[str]:
    hx, hy, h = r.half
    body = _shade(r.color, 0.85)
    return [
        _slab(-hx, hx, -hy, hy, h - 0.04, h, r.color),
        _slab(-hx + 0.02, hx - 0.02, -hy + 0.02, -hy + 0.42, 0.0, h - 0.04, body),  # drawer pedestal
        _slab(hx - 0.01, hx + 0.005, -hy + 0.06, -hy + 0.38, h - 0.2, h - 0.08, _shade(r.color, 0.6)),
        _slab(-hx + 0.02, -hx + 0.04, -hy + 0.42, hy - 0.05, 0.3, h - 0.04, body),  # modesty panel
        *[_slab(sx * (hx - 0.03) - 0.025, sx * (hx - 0.03) + 0.025, hy - 0.055, hy - 0.005, 0.0, h - 0.04, body)
          for sx in (-1, 1)],
    ]


def _counter(r: Receptacle) -> list[str]:
    hx, hy, h = r.half
    top = _shade(r.color, 0.75)
    out = [_slab(-hx, hx - 0.06, -hy, hy, 0.0, 0.1, _shade(r.color, 0.5)),
           _slab(-hx, hx - 0.01, -hy, hy, 0.1, h - 0.04, r.color),
           _slab(-hx, hx + 0.02, -hy, hy, h - 0.04, h, top)]
    n = max(1, round(2 * hy / 0.6))
    for i in range(n):  # cabinet door seams and handles
        y0 = -hy + 2 * hy * i / n
        out.append(_slab(hx - 0.01, hx, y0 - 0.004, y0 + 0.004, 0.1, h - 0.04, _shade(r.color, 0.7)))
        out.append(_slab(hx - 0.01, hx + 0.015, y0 + 0.06, y0 + 0.18, h - 0.14, h - 0.12, _shade(r.color, 0.4)))
    return out


def _sofa(r: Receptacle) -> list[str]:
    hx, hy, h = r.half
    cushion = _shade(r.color, 1.12)
    return [
        _slab(-hx, hx, -hy, hy, 0.06, h - 0.1, r.color),
        _slab(-hx + 0.12, hx, -hy + 0.1, hy - 0.1, h - 0.1, h, cushion),
        _slab(-hx, -hx + 0.12, -hy, hy, h - 0.1, h + 0.4, r.color),  # back rest
        _slab(-hx + 0.12, hx, hy - 0.1, hy, h - 0.1, h + 0.18, r.color),  # arm rests
        _slab(-hx + 0.12, hx, -hy, -hy + 0.1, h - 0.1, h + 0.18, r.color),
        *_legs(hx, hy, 0.06, _shade(r.color, 0.3), t=0.05, inset=0.05),
    ]


def _tv_stand(r: Receptacle) -> list[str]:
    hx, hy, h = r.half
    tw = min(0.6, hy - 0.05)
    black, screen = (0.06, 0.06, 0.07, 1.0), (0.1, 0.12, 0.16, 1.0)
    return [
        _slab(-hx, hx, -hy, hy, 0.04, h, r.color),
        _slab(-hx + 0.02, hx - 0.02, -hy + 0.02, hy - 0.02, 0.0, 0.04, _shade(r.color, 0.4)),
        _slab(hx - 0.005, hx + 0.002, -0.004, 0.004, 0.08, h - 0.04, _shade(r.color, 0.6)),  # door seam
        # TV: a thin panel standing at the back edge, behind the placement area
        _slab(-hx + 0.005, -hx + 0.045, -0.12, 0.12, h, h + 0.08, black),
        _slab(-hx + 0.005, -hx + 0.045, -tw, tw, h + 0.08, h + 0.08 + 1.15 * tw, black),
        _slab(-hx + 0.045, -hx + 0.047, -tw + 0.02, tw - 0.02, h + 0.1, h + 0.06 + 1.15 * tw, screen),
    ]


def _chair(r: Receptacle) -> list[str]:
    hx, hy, h = r.half
    return [
        _slab(-hx, hx, -hy, hy, h - 0.05, h, r.color),
        *_legs(hx, hy, h - 0.05, _shade(r.color, 0.8), t=0.04, inset=0.03),
        _slab(-hx, -hx + 0.04, -hy + 0.02, hy - 0.02, h, h + 0.45, r.color),
    ]


def _sink(r: Receptacle) -> list[str]:
    """A cabinet with an open basin whose floor is at ``interior_z``."""
    hx, hy, h = r.half
    z = r.type.interior_z
    steel, rim = (0.62, 0.64, 0.67, 1.0), _shade(r.color, 0.9)
    front, back, side = 0.06, 0.08, 0.06
    return [
        _slab(-hx, hx, -hy, hy, 0.0, z - 0.01, r.color),
        _slab(-hx + back, hx - front, -hy + side, hy - side, z - 0.01, z, steel),  # basin floor
        _slab(hx - front, hx, -hy, hy, z - 0.01, h, rim),
        _slab(-hx, -hx + back, -hy, hy, z - 0.01, h, rim),
        _slab(-hx + back, hx - front, hy - side, hy, z - 0.01, h, rim),
        _slab(-hx + back, hx - front, -hy, -hy + side, z - 0.01, h, rim),
        _slab(hx + 0.0, hx + 0.004, -0.004, 0.004, 0.05, z - 0.1, _shade(r.color, 0.6)),
        _cyl(-hx + 0.04, 0.0, h, h + 0.22, 0.015, steel),  # faucet
        _slab(-hx + 0.03, -hx + 0.16, -0.012, 0.012, h + 0.2, h + 0.225, steel),
    ]


def _hollow(r: Receptacle, floor: float, c_in: RGBA) -> list[str]:
    """Back, sides, bottom (top at ``floor``) and top of an open-fronted box."""
    hx, hy, h = r.half
    return [
        _slab(-hx, -hx + PANEL, -hy, hy, 0.0, h, r.color),
        _slab(-hx + PANEL, hx, hy - PANEL, hy, 0.0, h, r.color),
        _slab(-hx + PANEL, hx, -hy, -hy + PANEL, 0.0, h, r.color),
        _slab(-hx + PANEL, hx, -hy + PANEL, hy - PANEL, 0.0, floor, c_in),
        _slab(-hx + PANEL, hx, -hy + PANEL, hy - PANEL, h - PANEL, h, r.color),
    ]


HANDLE_DEPTH = 0.025  # how far door handles and drawer knobs stand out of the front
HANDLE_EDGE_INSET = (0.04, 0.06)  # door handle bar between these distances from the door's free edge


def door_handle_span(r: Receptacle) -> tuple[float, float]:
    """Bottom and top height of a hinged door's handle bar."""
    _, _, h = r.half
    if r.type.name == "fridge":
        z = r.type.interior_z
        return (z + 0.1, z + 0.6)
    return (h - 0.3, h - 0.1)


def door_hinge_local(r: Receptacle) -> tuple[float, float]:
    """Plan position of a door's hinge axis in the receptacle frame (front face, +y edge)."""
    hx, hy, _ = r.half
    return (hx, hy - DOOR_THICKNESS / 2)


def door_handle_local(r: Receptacle, angle: float) -> tuple[float, float, float]:
    """Centre of the door handle in the receptacle frame when the door is open by ``angle`` radians."""
    _, hy, _ = r.half
    k = DOOR_THICKNESS / 2
    free = -2 * hy + k
    hx_d = DOOR_THICKNESS + HANDLE_DEPTH / 2  # handle centre in the door body frame
    hy_d = free + sum(HANDLE_EDGE_INSET) / 2
    z0, z1 = door_handle_span(r)
    c, s = math.cos(angle), math.sin(angle)
    ax, ay = door_hinge_local(r)
    return (ax + c * hx_d - s * hy_d, ay + s * hx_d + c * hy_d, (z0 + z1) / 2)


def drawer_handle_local(r: Receptacle, travel: float) -> tuple[float, float, float]:
    """Centre of the top drawer's knob in the receptacle frame when pulled out by ``travel`` metres."""
    hx, _, h = r.half
    return (hx + HANDLE_DEPTH / 2 + travel, 0.0, (DRAWER_BOX_BOTTOM + h - PANEL) / 2)


def _door(r: Receptacle, z0: float, z1: float, handle_z: tuple[float, float]) -> str:
    """A door body hinged on the front +y edge; closed it covers the front face from outside."""
    hx, hy, _ = r.half
    w, t = 2 * hy, DOOR_THICKNESS
    k = t / 2  # the hinge axis sits this far inside the +y edge, so the open door stays within open_extent()
    free = -w + k  # local y of the free edge
    e0, e1 = HANDLE_EDGE_INSET
    return (f'<body name="{r.name}/door" pos="{_v(hx, hy - k, 0)}">'
            f'<joint name="{door_joint(r.name)}" type="hinge" axis="0 0 1" range="0 {math.pi / 2:.12g}"/>'
            + _slab(0.0, t, free, k, z0, z1, _shade(r.color, 0.97))
            + _slab(t, t + HANDLE_DEPTH, free + e0, free + e1, handle_z[0], handle_z[1], (0.55, 0.56, 0.58, 1.0))
            + "</body>")


def _cabinet(r: Receptacle) -> list[str]:
    _, _, h = r.half
    return [*_hollow(r, r.type.interior_z, _shade(r.color, 0.8)), _door(r, 0.01, h - 0.005, door_handle_span(r))]


def _fridge(r: Receptacle) -> list[str]:
    hx, hy, h = r.half
    z = r.type.interior_z
    inner = (0.9, 0.92, 0.94, 1.0)
    return [
        *_hollow(r, 0.1, inner),
        _slab(-hx + PANEL, hx - 0.01, -hy + PANEL, hy - PANEL, z - 0.02, z, (0.8, 0.85, 0.88, 1.0)),  # shelf
        _door(r, 0.01, h - 0.005, door_handle_span(r)),
    ]


def _drawer(r: Receptacle) -> list[str]:
    """A chest whose top drawer (floor top at interior_z) slides out along +x."""
    hx, hy, h = r.half
    z0, z1, top = DRAWER_BOX_BOTTOM, r.type.interior_z, h - PANEL
    box_top, knob, dark = z1 + 0.16, _shade(r.color, 0.45), _shade(r.color, 0.75)
    x0, x1, yi = -hx + PANEL + 0.01, hx - 0.02, hy - PANEL - 0.005
    drawer = "".join([
        _slab(x0, x1, -yi, yi, z0, z1, _shade(r.color, 0.8)),
        _slab(x0, x1, yi - 0.015, yi, z1, box_top, r.color),
        _slab(x0, x1, -yi, -yi + 0.015, z1, box_top, r.color),
        _slab(x0, x0 + 0.015, -yi, yi, z1, box_top, r.color),
        _slab(x1, hx, -hy + PANEL, hy - PANEL, z0 - 0.01, top - 0.005, r.color),  # front panel
        _slab(hx, hx + HANDLE_DEPTH, -0.06, 0.06, (z0 + top) / 2 - 0.012, (z0 + top) / 2 + 0.012, knob),
    ])
    out = [
        _slab(-hx, -hx + PANEL, -hy, hy, 0.0, h, r.color),
        _slab(-hx + PANEL, hx, hy - PANEL, hy, 0.0, h, r.color),
        _slab(-hx + PANEL, hx, -hy, -hy + PANEL, 0.0, h, r.color),
        _slab(-hx + PANEL, hx, -hy + PANEL, hy - PANEL, top, h, r.color),
        _slab(-hx + PANEL, hx, -hy + PANEL, hy - PANEL, 0.0, z0 - 0.015, r.color),  # lower drawers
        _slab(hx, hx + 0.003, -hy + PANEL, hy - PANEL, z0 / 2 - 0.005, z0 / 2 + 0.005, dark),
        _slab(hx, hx + 0.025, -0.06, 0.06, z0 * 0.75 - 0.012, z0 * 0.75 + 0.012, knob),
        _slab(hx, hx + 0.025, -0.06, 0.06, z0 * 0.25 - 0.012, z0 * 0.25 + 0.012, knob),
        (f'<body name="{r.name}/drawer"><joint name="{drawer_joint(r.name)}" type="slide" axis="1 0 0" '
         f'range="0 {DRAWER_TRAVEL:.9g}"/>{drawer}</body>'),
    ]
    return out


def _bed(r: Receptacle) -> list[str]:
    hx, hy, h = r.half
    frame = (0.45, 0.3, 0.18, 1.0)
    return [
        _slab(-hx, hx, -hy, hy, 0.0, 0.25, frame),
        _slab(-hx + 0.05, hx - 0.01, -hy + 0.01, hy - 0.01, 0.25, h, r.color),
        _slab(-hx, -hx + 0.05, -hy, hy, 0.0, h + 0.45, frame),  # headboard
    ]


def _shelf(r: Receptacle) -> list[str]:
    hx, hy, h = r.half
    inner = _shade(r.color, 0.8)
    out = [
        _slab(-hx, -hx + 0.02, -hy, hy, 0.0, h, inner),
        _slab(-hx + 0.02, hx, hy - PANEL, hy, 0.0, h, r.color),
        _slab(-hx + 0.02, hx, -hy, -hy + PANEL, 0.0, h, r.color),
        _slab(-hx + 0.02, hx, -hy + PANEL, hy - PANEL, h - PANEL, h, r.color),
        _slab(-hx + 0.02, hx, -hy + PANEL, hy - PANEL, 0.0, 0.06, r.color),
    ]
    out += [_slab(-hx + 0.02, hx, -hy + PANEL, hy - PANEL, z - 0.01, z + 0.01, r.color) for z in (h / 3, 2 * h / 3)]
    return out


RECEPTACLE_BUILDERS: dict[str, Callable[[Receptacle], list[str]]] = {
    "table": _table, "desk": _desk, "kitchen_counter": _counter, "sofa": _sofa, "tv_stand": _tv_stand,
    "chair": _chair, "sink": _sink, "cabinet": _cabinet, "fridge": _fridge, "drawer": _drawer,
    "bed": _bed, "shelf": _shelf,
}


def _generic(r: Receptacle) -> list[str]:
    hx, hy, h = r.half
    return [_slab(-hx, hx, -hy, hy, 0.0, h, r.color)]


def receptacle_body(r: Receptacle) -> str:
    geoms = RECEPTACLE_BUILDERS.get(r.type.name, _generic)(r)
    return f'<body name="{r.name}" pos="{_v(r.x, r.y, 0)}" euler="0 0 {r.yaw:.9g}">\n' + "\n".join(geoms) + "\n</body>"


# ---- objects --------------------------------------------------------------------------------
def _bowl(sx: float, sz: float, c: RGBA, panels: int = 10) -> list[str]:
    """A shallow open bowl: a base disk and a ring of outward-tilted panels."""
    rim, base, t = sx / 2, 0.55 * sx / 2, 0.006
    tilt = math.atan2(rim - base, sz)
    slant = math.hypot(rim - base, sz)
    half_len = rim * math.tan(math.pi / panels) * 1.05
    mid_r, ct, st = (rim + base) / 2, math.cos(tilt), math.sin(tilt)
    out = [f'<geom type="cylinder" pos="{_v(0, 0, -sz / 2 + 0.004)}" size="{_v(base + 0.004, 0.004)}" rgba="{_rgba(c)}"/>']
    for i in range(panels):
        a = 2 * math.pi * i / panels
        n = (math.cos(a), math.sin(a))
        xa = (ct * n[0], ct * n[1], -st)  # panel normal
        ya = (-n[1], n[0], 0.0)  # tangent
        out.append(f'<geom type="box" pos="{_v(mid_r * n[0], mid_r * n[1], 0)}" size="{_v(t / 2, half_len, slant / 2)}" '
                   f'xyaxes="{_v(*xa, *ya)}" rgba="{_rgba(c)}"/>')
    return out


def _mug(sx: float, sz: float, c: RGBA) -> list[str]:
    r = 0.4 * sx
    hz = sz / 2
    return [
        f'<geom type="cylinder" pos="{_v(-0.05 * sx, 0, 0)}" size="{_v(r, hz)}" rgba="{_rgba(c)}"/>',
        f'<geom type="cylinder" pos="{_v(-0.05 * sx, 0, hz)}" size="{_v(r - 0.005, 0.001)}" rgba="{_rgba(_shade(c, 0.35))}"/>',
        _slab(sx / 2 - 0.012, sx / 2, -0.006, 0.006, -0.6 * hz, 0.5 * hz, c),
        _slab(0.3 * sx, sx / 2, -0.006, 0.006, 0.4 * hz, 0.55 * hz, c),
        _slab(0.3 * sx, sx / 2, -0.006, 0.006, -0.6 * hz, -0.45 * hz, c),
    ]


def object_geoms(info: ObjectInfo) -> list[str]:
    """Geoms of an object in its own frame (centred on its bounding box), sized by ``cls.size``."""
    sx, sy, sz = info.cls.size
    c, shape = info.color, info.cls.shape
    if shape == "sphere":
        return [f'<geom type="sphere" size="{max(sx, sy, sz) / 2:.6g}" rgba="{_rgba(c)}"/>']
    if shape == "ellipsoid":
        return [f'<geom type="ellipsoid" size="{_v(sx / 2, sy / 2, sz / 2)}" rgba="{_rgba(c)}"/>']
    if shape == "cylinder":
        return [f'<geom type="cylinder" size="{_v(max(sx, sy) / 2, sz / 2)}" rgba="{_rgba(c)}"/>']
    if shape == "capsule":  # along x (banana)
        r = min(sy, sz) / 2
        return [f'<geom type="capsule" size="{r:.6g}" fromto="{_v(-sx / 2 + r, 0, 0, sx / 2 - r, 0, 0)}" rgba="{_rgba(c)}"/>']
    if shape == "bowl":
        return _bowl(sx, sz, c)
    if shape == "mug":
        return _mug(sx, sz, c)
    return [f'<geom type="box" size="{_v(sx / 2, sy / 2, sz / 2)}" rgba="{_rgba(c)}"/>']


def object_body(info: ObjectInfo) -> str:
    return (f'<body name="{info.name}" pos="0 0 {HIDDEN_Z}"><freejoint name="{object_joint(info.name)}"/>\n'
            + "\n".join(object_geoms(info)) + "\n</body>")


# ---- the whole home -------------------------------------------------------------------------
def _statics(layout: Layout) -> list[str]:
    out = []
    for room in layout.rooms.values():
        out.append(f'<geom name="floor/{room.name}" type="box" pos="{_v(*room.center, -0.01)}" '
                   f'size="{_v((room.x1 - room.x0) / 2, (room.y1 - room.y0) / 2, 0.01)}" rgba="{_rgba(room.type.floor_color)}"/>')
    for i, w in enumerate(layout.walls):
        out.append(_slab(w.x0, w.x1, w.y0, w.y1, 0.0, WALL_HEIGHT, WALL_RGBA, name=f"wall/{i}"))
    return out


def scene_extent(layout: Layout) -> tuple[float, float, float, float]:
    """(centre x, centre y, extent, far clip) of the home, all in metres."""
    x0, y0, x1, y1 = layout.bounds
    diag = math.hypot(x1 - x0, y1 - y0)
    return ((x0 + x1) / 2, (y0 + y1) / 2, max(diag / 2, 1.0), diag + 10.0)


def build_mjcf(layout: Layout, width: int, height: int, fovy: float = 90.0, samples: int = 0) -> str:
    """MJCF text of the home with the robot; the offscreen buffer is exactly ``width`` x ``height``.

    ``samples`` is the offscreen multisampling (anti-aliasing) factor; 0 is fastest on the CPU.
    """
    clash = [n for n in RESERVED_NAMES if n in layout.rooms or n in layout.receptacles or n in layout.objects]
    if clash:
        raise ValueError(f"scene names {clash} are reserved by the renderer")
    cx, cy, extent, far = scene_extent(layout)
    body = [*_statics(layout),
            *(receptacle_body(r) for r in layout.receptacles.values()),
            *(object_body(o) for o in layout.objects.values()),
            robot_mjcf(fovy),
            *([person_mjcf(layout.person.name, layout.person.color)] if layout.person is not None else [])]
    return f"""<mujoco model="home">
<compiler angle="radian"/>
<statistic center="{_v(cx, cy, 1.0)}" extent="{extent:.6g}"/>
<visual>
<global offwidth="{int(width)}" offheight="{int(height)}"/>
<quality shadowsize="0" offsamples="{int(samples)}"/>
<map znear="{NEAR_CLIP / extent:.6g}" zfar="{far / extent:.6g}"/>
<headlight ambient="0.33 0.33 0.33" diffuse="0.3 0.3 0.3" specular="0 0 0"/>
</visual>
<default><geom contype="0" conaffinity="0"/></default>
<worldbody>
<light name="sun" directional="true" castshadow="false" pos="{_v(cx, cy, 6)}" dir="0.25 0.4 -1" diffuse="0.42 0.42 0.4" specular="0.05 0.05 0.05"/>
<light name="fill" directional="true" castshadow="false" pos="{_v(cx, cy, 6)}" dir="-0.4 -0.2 -1" diffuse="0.18 0.18 0.2" specular="0 0 0"/>
{chr(10).join(body)}
</worldbody>
</mujoco>
"""
