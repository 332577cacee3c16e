"""File-system faults at the output files of `vtlab run` (`--out`, `--trace`,
`--events`, `--pcap`) and `vtlab sweep --out`: a full disk (/dev/full; a file-size
limit reached mid-file), a device file, a FIFO, a dangling or looping symbolic link,
a read-only directory. Each must end in one line `error: <option>: ...` naming the
path as the user gave it, exit status 2, no traceback, no hang, and nothing left
behind or changed in the directory (docs/cli.md, "Output files").

The cases run in one child process (fs_faults_child.py) under a time limit: a FIFO
a writer blocks on, or any other hang, fails the suite instead of stopping it.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fs_faults_child import case_id, cases

CHILD = Path(__file__).with_name("fs_faults_child.py")
#: The child runs 35 short cases; far longer means a case hangs.
TIMEOUT_S = 300
#: prctl(PR_CAPBSET_DROP) and the capabilities that let root write through
#: permissions (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER): a child running as
#: root goes without them, so a directory it made read-only is read-only to it.
PR_CAPBSET_DROP = 24
ROOT_OVERRIDES = (1, 2, 3)


def _plain_root() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in ROOT_OVERRIDES:
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _read_only_holds() -> bool:
    """Whether a read-only directory stops the child: always for a user; for root, if
    its child can go without the overriding capabilities here."""
    if os.geteuid() != 0:
        return True
    try:
        subprocess.run([sys.executable, "-c", ""], preexec_fn=_plain_root, check=True)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


READ_ONLY_HOLDS = _read_only_holds()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    out = tmp_path_factory.mktemp("fs-faults") / "results.json"
    env = {k: v for k, v in os.environ.items() if k != "VTLAB_DEBUG"}
    plain = os.geteuid() == 0 and READ_ONLY_HOLDS
    try:
        proc = subprocess.run(
            [sys.executable, str(CHILD), str(out)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            preexec_fn=_plain_root if plain else None,
            env=env,
        )
    except subprocess.TimeoutExpired as e:
        started = (e.stderr or b"").decode(errors="replace").splitlines()
        pytest.fail(f"hangs: {started[-1] if started else 'before the first case'}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def params() -> list[object]:
    out = []
    for command, fault, option in cases():
        name = case_id(command, fault, option)
        out.append(pytest.param(name, option, id=name))
    return out


@pytest.mark.parametrize(("case", "option"), params())
def test_output_fault_is_one_error_line_and_leaves_nothing(outcomes, case, option):
    if "read-only" in case and not READ_ONLY_HOLDS:
        pytest.skip("root writes through permissions here (no prctl(PR_CAPBSET_DROP))")
    r = outcomes[case]
    assert r["exception"] is None, r["exception"]
    assert "Traceback" not in r["stderr"]
    lines = [ln for ln in r["stderr"].splitlines() if ln.strip()]
    assert r["exit_code"] == 2 and len(lines) == 1, (r["exit_code"], r["stderr"][-2000:])
    assert lines[0].startswith(f"error: {option}: ") and r["value"] in lines[0], lines[0]
    assert r["changed"] == [], r["changed"]
