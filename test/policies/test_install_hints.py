"""Every wrapper's install hint, checked by making one package missing with an import hook: every other
package of the model's stack is made to look installed, so the message must name the hidden one and
give the command that installs it (and loading must fail with that message, never a raw ImportError)."""

from __future__ import annotations

import importlib.machinery
import sys

import numpy as np
import pytest

from homiebot.policies import nomad, octo, pixnav, rt1x
from homiebot.policies.base import PolicyObservation
from homiebot.policies.nomad import NoMaDPolicy
from homiebot.policies.octo import OctoPolicy
from homiebot.policies.pixnav import PixNavPolicy
from homiebot.policies.rt1x import RT1XPolicy


class _Modules:
    """A meta-path finder: ``present`` names are found (specs without a loader), ``hidden`` ones are not."""

    def __init__(self, present: set[str], hidden: set[str]) -> None:
        self.present, self.hidden = present, hidden

    def find_spec(self, name, path=None, target=None):
        root = name.split(".")[0]
        if root in self.hidden:
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        if root in self.present:
            return importlib.machinery.ModuleSpec(name, None)
        return None


@pytest.fixture
def modules(monkeypatch):
    """``modules(present=..., hidden=...)`` installs the hook for this test."""
    def install(present=(), hidden=()):
        finder = _Modules(set(present) - set(hidden), set(hidden))
        for name in list(sys.modules):
            if name.split(".")[0] in finder.hidden | finder.present:
                monkeypatch.delitem(sys.modules, name)
        monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
        return finder
    return install


NOMAD_STACK = ["vint_train", "diffusion_policy", "efficientnet_pytorch", "torchvision", "einops"]


@pytest.mark.parametrize("hidden", ["torchvision", "einops", "vint_train"])
def test_nomad_names_each_missing_package(modules, tmp_path, hidden):
    ckpt, cfg = tmp_path / "nomad.pth", tmp_path / "nomad.yaml"
    ckpt.write_bytes(b"")
    cfg.write_text("context_size: 3\n")
    modules(present=NOMAD_STACK, hidden=[hidden])
    pol = NoMaDPolicy(checkpoint=str(ckpt), config=str(cfg))
    msg = pol.availability()
    assert msg is not None and f"Python module '{hidden}' is not installed" in msg
    assert nomad.INSTALL_HINT in msg and "torchvision" in nomad.INSTALL_HINT and "einops" in nomad.INSTALL_HINT
    others = [m for m in NOMAD_STACK if m != hidden]
    assert not any(f"'{m}'" in msg for m in others)  # only what is missing is named
    with pytest.raises(RuntimeError, match=f"NoMaD unavailable: Python module '{hidden}'"):
        pol.act(PolicyObservation(rgb=np.zeros((96, 128, 3), np.uint8)))


def test_nomad_available_when_the_stack_is_there(modules, tmp_path):
    ckpt, cfg = tmp_path / "nomad.pth", tmp_path / "nomad.yaml"
    ckpt.write_bytes(b"")
    cfg.write_text("context_size: 3\n")
    modules(present=NOMAD_STACK)
    assert NoMaDPolicy(checkpoint=str(ckpt), config=str(cfg)).availability() is None


def test_octo_gpu_hint_carries_the_jax_cuda_release_link(modules, tmp_path):
    ckpt = tmp_path / "octo"
    ckpt.mkdir()
    (ckpt / "config.json").write_text("{}")
    modules(present=["octo", "flax", "tensorflow"], hidden=["jax"])
    msg = OctoPolicy(checkpoint=str(ckpt)).availability()
    assert msg is not None and "Python module 'jax' is not installed" in msg
    assert "module 'octo'" not in msg and "module 'flax'" not in msg
    assert '"jax[cuda11_pip]==0.4.20" -f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html' in msg
    assert "(CPU: pip install jax==0.4.20)" in msg
    assert octo.INSTALL_HINT in msg
    modules(present=["octo", "jax", "flax", "tensorflow"])
    assert OctoPolicy(checkpoint=str(ckpt)).availability() is None


def test_pixnav_hint_when_torch_is_missing(modules, tmp_path):
    ckpt = tmp_path / "pixnav.ckpt"
    ckpt.write_bytes(b"")
    modules(hidden=["torch"])
    msg = PixNavPolicy(checkpoint=str(ckpt)).availability()
    assert msg is not None and "Python module 'torch' is not installed" in msg and pixnav.INSTALL_HINT in msg
    modules(present=["policy_network", "cv2", "torch"], hidden=["torchvision"])
    msg = PixNavPolicy(checkpoint=str(ckpt), use_upstream_code=True).availability()
    assert "Python module 'torchvision' is not installed" in msg and "pip install torch torchvision opencv-python" in msg


@pytest.mark.parametrize("hidden", ["tensorflow", "tf_agents"])
def test_rt1x_tf_hints(modules, tmp_path, hidden):
    ckpt, enc = tmp_path / "rt1x", tmp_path / "use"
    ckpt.mkdir()
    enc.mkdir()
    modules(present=["tensorflow", "tf_agents"], hidden=[hidden])
    msg = RT1XPolicy(checkpoint=str(ckpt), embedder=str(enc)).availability()
    assert msg is not None and f"Python module '{hidden}' is not installed" in msg and rt1x.TF_INSTALL_HINT in msg


def test_rt1x_jax_hint(modules, tmp_path):
    ckpt, code = tmp_path / "rt1x_jax", tmp_path / "models"
    ckpt.mkdir()
    code.mkdir()
    (code / "rt1.py").write_text("")
    modules(present=["jax"], hidden=["flax"])
    msg = RT1XPolicy(checkpoint=str(ckpt), backend="jax", code_path=str(code), embedder=lambda t: np.zeros((len(t), 512))).availability()
    assert msg is not None and "Python module 'flax' is not installed" in msg and rt1x.JAX_INSTALL_HINT in msg
