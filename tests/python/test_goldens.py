"""Refactoring invariance: the golden grid (tests/goldens/goldens.py) must come out
bit for bit as recorded. See that file for what the goldens are and are not."""

import importlib.util
from pathlib import Path

GOLDENS = Path(__file__).parents[1] / "goldens" / "goldens.py"


def test_golden_runs_are_bit_identical(capsys):
    spec = importlib.util.spec_from_file_location("goldens", GOLDENS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    status = mod.check()
    assert status == 0, capsys.readouterr().out
