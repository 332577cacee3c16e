"""The validate commands share one option set (vtlab.cli.validate_options): the same
spellings for what every family has, and each family's ``--quick``."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import typer.main

from vtlab.cli.app import app
from vtlab.ns3 import program
from vtlab.validation import lte

#: What every ``vtlab validate FAMILY`` accepts, spelled the same way.
COMMON = {"--quick", "--seeds", "-n", "--runs", "--out", "-o", "--quiet", "-q"}


def _families() -> dict[str, set[str]]:
    group = typer.main.get_command(app).commands["validate"]  # type: ignore[attr-defined]
    return {
        name: {o for p in cmd.params for o in [*p.opts, *p.secondary_opts]}
        for name, cmd in group.commands.items()
    }


def test_every_validate_family_takes_the_common_spellings():
    families = _families()
    assert {"v2g", "station", "wifi", "iso15118", "lte"} <= families.keys()
    for name, options in families.items():
        assert options >= COMMON, f"validate {name} lacks {sorted(COMMON - options)}"


def test_lte_quick_runs_the_static_cases_with_two_seeds(cli, tmp_path: Path, monkeypatch):
    """From the ns-3 results vtlab ships (ns-3 made unavailable, so none runs)."""

    def missing(**_: Any) -> Any:
        raise program.Ns3NotInstalled()

    monkeypatch.setattr(lte, "ensure_lte_binary", missing)
    out = tmp_path / "lte"
    result = cli("validate", "lte", "--quick", "-q", "-o", str(out))
    assert result.exit_code == 0, result.output + result.stderr
    with open(out / "agreement.csv", newline="") as fh:
        cases = [r["case"] for r in csv.DictReader(fh) if r["variant"] == "main"]
    assert sorted(cases) == ["static_rlc10k", "static_rlc2m"]
    report = (out / "report.md").read_text()
    assert "--seeds 2" in report and "moving_rlc2m" not in report


def test_shell_completion_completes_commands_and_options():
    """typer's completion: ``vtlab --install-completion`` installs it; the shell then
    asks ``vtlab`` itself with ``_VTLAB_COMPLETE`` set."""
    import os
    import subprocess
    import sys

    def complete(words: str) -> list[str]:
        env = {
            **os.environ,
            "_VTLAB_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - 1),
        }
        proc = subprocess.run(
            [sys.executable, "-m", "vtlab"], env=env, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    assert complete("vtlab validate w") == ["wifi", "wifi-aodv"]
    assert "--profile" in complete("vtlab run v2g --pro")
    help_text = subprocess.run(
        [sys.executable, "-m", "vtlab", "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    assert "--install-completion" in help_text
