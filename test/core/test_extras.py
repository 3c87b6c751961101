"""A missing optional module is named as the extra to install, and a planner that loses its sentence
embeddings says so."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import metadata

import pytest

from homiebot.core.extras import EXTRA_OF, missing_extra
from homiebot.perception import grounding

BLOCKER = """
import sys
from importlib.abc import MetaPathFinder
class Gone(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Gone())
from homiebot.cli import main
sys.exit(main({argv!r}))
"""


def test_every_extra_named_is_one_the_package_declares():
    declared = set(metadata("homiebot").get_all("Provides-Extra") or [])
    assert set(EXTRA_OF.values()) <= declared


def test_an_import_error_of_another_module_is_left_as_it_is():
    assert missing_extra(ModuleNotFoundError("No module named 'nonsense'", name="nonsense")) is None
    assert "homiebot[sim]" in (missing_extra(ModuleNotFoundError("x", name="scipy.spatial")) or "")


def test_run_without_the_sim_extra_names_the_extra(tmp_path):
    code = BLOCKER.format(blocked={"scipy", "mujoco", "imageio"}, argv=["run", "put the apple in the fridge", "--out", str(tmp_path)])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stderr
    assert "pip install 'homiebot[sim]'" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_the_heuristic_planner_says_once_that_it_reads_words_only(monkeypatch, capsys):
    from homiebot.planners.heuristic import HeuristicPlanner

    monkeypatch.setattr(grounding, "EMBEDDING_MODULES", ("torch", "homiebot_no_such_module"))
    monkeypatch.setattr(grounding, "_told", set())
    HeuristicPlanner()
    HeuristicPlanner()
    err = capsys.readouterr().err
    assert err.count("homiebot: notice: the heuristic planner reads instructions without sentence embeddings") == 1, err
    assert "homiebot_no_such_module is not installed; pip install 'homiebot[ml]'" in err
    HeuristicPlanner(embeddings=False)  # asked for words only: nothing to say
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", sorted(EXTRA_OF))
def test_each_module_of_the_table_names_its_extra(name):
    assert f"homiebot[{EXTRA_OF[name]}]" in (missing_extra(ModuleNotFoundError("x", name=name)) or "") or name in {"homiebot_msgs", "control_msgs"}
