"""The property suite of hostile input (hostile_child.py), run in a child process
with a memory limit and a time limit: ≥ 1,000 generated scenarios, each either run
with sane rows or refused with one line naming the field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CHILD = Path(__file__).with_name("hostile_child.py")


def test_generated_scenarios_run_sanely_or_are_refused_in_one_line():
    proc = subprocess.run(
        [sys.executable, str(CHILD), "1200", "20261123"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert counts["ran"] + counts["refused"] == 1200
    # Both kinds must be exercised in volume, or the suite proves little.
    assert counts["ran"] >= 300 and counts["refused"] >= 300, counts
