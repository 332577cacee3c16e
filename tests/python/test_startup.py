"""Start-up of the command line: which libraries each command imports (no timing).

Speed itself is measured by ``benchmarks/startup.py`` and ``vtlab bench``; here we
only check that the light paths do not import the heavy libraries.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vtlab
from vtlab.bench import parse_importtime

PYTHON_DIR = Path(vtlab.__file__).resolve().parent.parent
HEAVY = ("pandas", "pyarrow", "matplotlib", "scipy")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    return env


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=_env(), timeout=120
    )


def test_importing_the_cli_imports_no_heavy_library() -> None:
    code = (
        "import json, sys\n"
        "import vtlab.cli.app\n"
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))\n"
    )
    proc = _run("-c", code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_the_check_above_sees_heavy_imports() -> None:
    """Control: the same check run after a command that does need pandas."""
    code = (
        "import json, sys\n"
        "import vtlab\n"
        "vtlab.run({'preset': 'v2g', 'bytes': '1MB'}).flows\n"
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))\n"
    )
    proc = _run("-c", code)
    assert proc.returncode == 0, proc.stderr
    assert "pandas" in json.loads(proc.stdout)


def _imports_of(*cli_args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, float]]:
    proc = _run("-X", "importtime", "-m", "vtlab", *cli_args)
    return proc, parse_importtime(proc.stderr)


def test_the_package_imports_its_api_modules_when_first_used() -> None:
    """``import vtlab`` (what ``vtlab --help`` pays for) imports none of the modules
    behind its attributes; each attribute, first used, is that module's own object,
    and ``from vtlab import ...`` works alike. The module names are written out here,
    not read from the package's table."""
    behind = {
        "run": "vtlab.api",
        "run_many": "vtlab.api",
        "Result": "vtlab.api",
        "load": "vtlab.results",
        "Scenario": "vtlab.scenario",
        "jain_index": "vtlab.stats",
        "summarize": "vtlab.stats",
        "advise": "vtlab.advice",
        "emulate": "vtlab.emulation",
        "Emulation": "vtlab.emulation",
    }
    code = (
        "import importlib, json, sys\n"
        "import vtlab\n"
        f"behind = {behind!r}\n"
        "before = sorted({m for m in behind.values() if m in sys.modules})\n"
        "same = {n: getattr(vtlab, n) is getattr(importlib.import_module(m), n)\n"
        "        for n, m in behind.items()}\n"
        "from vtlab import Scenario, run\n"
        "print(json.dumps([before, same, sorted(set(vtlab.__all__) - set(dir(vtlab)))]))\n"
    )
    proc = _run("-c", code)
    assert proc.returncode == 0, proc.stderr
    before, same, missing = json.loads(proc.stdout)
    assert before == []
    assert same == dict.fromkeys(behind, True)
    assert missing == []  # every public name is listed by dir()
    proc = _run("-c", "import vtlab; vtlab.no_such_name")
    assert "module 'vtlab' has no attribute 'no_such_name'" in proc.stderr


def test_run_json_imports_neither_pandas_nor_matplotlib() -> None:
    proc, modules = _imports_of("run", "v2g", "--bytes", "1MB", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 1 and rows[0]["bytes"] == 1_000_000
    assert "vtlab" in modules  # the report was parsed
    for name in HEAVY:
        assert name not in modules, f"{name} imported by `vtlab run --json`"


def test_help_and_version_import_no_heavy_library() -> None:
    for args in (["--help"], ["--version"]):
        proc, modules = _imports_of(*args)
        assert proc.returncode == 0, proc.stderr
        assert [m for m in HEAVY if m in modules] == []
    assert _run("-m", "vtlab", "--version").stdout == f"vtlab {vtlab.__version__}\n"


def test_run_table_does_import_pandas() -> None:
    """Control for the test above: the table needs the statistics, hence pandas."""
    proc, modules = _imports_of("run", "v2g", "--bytes", "1MB")
    assert proc.returncode == 0, proc.stderr
    assert "pandas" in modules


def test_parse_importtime_on_a_hand_written_report() -> None:
    report = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:       100 |        100 |   pandas._libs",
            "import time:      2000 |     500000 | pandas",
            "import time:        50 |         70 |     vtlab.errors",
            "import time:        10 |       1500 |   vtlab",
            "some other line on stderr",
        ]
    )
    assert parse_importtime(report) == {"pandas": 0.5, "vtlab": 0.0015}


def _json_ready(row: dict) -> dict:
    out = {}
    for k, v in row.items():
        v = v.item() if hasattr(v, "item") else v
        out[k] = None if isinstance(v, float) and not math.isfinite(v) else v
    return out


@pytest.mark.parametrize("seeds", [[1], [4, 5]])
def test_flow_records_match_the_dataframe(seeds: list[int]) -> None:
    """--json builds its lines from the core's columns; they must equal the table's."""
    spec = {"preset": "v2g", "bytes": "1MB", "loss": {"mean_loss": "5%"}}
    lazy = vtlab.run_many(spec, seeds, progress=False)
    records = lazy.flow_records()  # before any DataFrame exists
    table = vtlab.run_many(spec, seeds, progress=False).flows
    assert [list(r) for r in records] == [list(table.columns)] * len(table)
    assert [_json_ready(r) for r in records] == [
        _json_ready(r) for r in table.to_dict(orient="records")
    ]
    assert [r["seed"] for r in records] == seeds
