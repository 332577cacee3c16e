"""The campaign benchmark (benchmarks/campaign.py, issue 28 item 5) in small: 8 000
short ISO 15118 session runs in a columnar store (about 2 s of one core: enough polls
of the store, every 0.2 s, to see it mid-way), the campaign killed with SIGKILL (its
whole process group) once 800 runs are committed, then resumed: every run is in
the store once, nothing is left pending or quarantined, and no process of the
campaign held 1 GB. The script checks the store itself (read with Arrow, not with
vtlab) and exits 1 when a check fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "campaign.py"


def test_a_killed_campaign_resumes_with_every_run_once_in_bounded_memory(tmp_path: Path):
    figures = tmp_path / "figures.json"
    args = ["--runs", "8000", "--jobs", "1", "--kill-after", "800", "--part-runs", "400"]
    args += ["--store", str(tmp_path / "store"), "--json", str(figures)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = json.loads(figures.read_text())
    assert got["problems"] == []
    # Killed after at least 800 committed runs (parts of 400 runs or a batch more,
    # docs/reliability.md), before the end.
    assert 800 <= got["killed_at"] < 8000
    assert got["resumed_runs"] == 8000 - got["killed_at"]
    assert 0 < got["peak_rss_mb"] < 1024
    # One job: the sweep's process runs every run itself, so its CPU per run is at
    # least the engine's (a 2 s session's charging loop: above 50 µs here).
    assert got["sweep_cpu_us_per_run"] > 50
