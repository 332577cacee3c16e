"""The README against the code: every command it shows has a quick form in the
installed-wheel smoke run (tests/smoke/readme_smoke.py, run by ``make smoke``), and
the counts and lists it states are the package's."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import vtlab

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _smoke():
    path = ROOT / "tests" / "smoke" / "readme_smoke.py"
    spec = importlib.util.spec_from_file_location("readme_smoke", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_every_readme_command_has_a_quick_form():
    smoke = _smoke()
    commands = smoke.readme_commands(README)
    assert "bench --vs-ns3" in commands and "reproduce park2019" in commands
    assert smoke.check_mapping(commands) == []


def test_the_readme_parser_joins_continuations_and_drops_comments():
    smoke = _smoke()
    text = '$ vtlab run v2g --far "a # b"   # a comment\n$ sudo vtlab x \\\n    --y 1  # c\n'
    assert smoke.readme_commands(text) == ['run v2g --far "a # b"', "x --y 1"]
    assert smoke.check_mapping(["not a command"])[0].startswith("README command without")


def test_readme_counts_the_congestion_controls():
    (n,) = re.findall(r"# (\d+) congestion controls", README)
    assert int(n) == len(vtlab.congestion_controls())


def test_readme_names_every_preset():
    (paragraph,) = re.findall(r"^Presets: (.*?)\n\n", README, re.S | re.M)
    named = set(re.findall(r"`([a-z0-9-]+)`", paragraph))
    assert set(vtlab.presets()) <= named
