"""Running the reference programs and vtlab's lean child process: launching, measuring
(wall time, peak RSS, CPU time of the child alone), stopping every running child at
once on an interruption, and parsing their JSON output lines."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtlab.ns3.program import Ns3Error

__all__ = [
    "VTLAB_CHILD",
    "ProcResult",
    "allow_children",
    "kill_children",
    "num",
    "parse_flow_lines",
    "parse_loss_positions",
    "run_child",
    "run_child_streams",
    "run_process",
    "vtlab_child_command",
]


def num(x: float) -> str:
    """A number for the ns-3 command line: 12 significant digits (so that 5 % is
    ``0.05``, not ``0.04999999999999982``), without a trailing ``.0``.

    >>> num(0.05), num(10.0), num(1e-7)
    ('0.05', '10', '1e-07')
    """
    return format(float(x), ".12g")


@dataclass
class ProcResult:
    """A finished child process with its own resource usage."""

    returncode: int
    stdout: str
    stderr: str
    wall_s: float  #: wall time from spawn to exit
    max_rss_mib: float  #: peak resident set size of the child (``ru_maxrss``)
    cpu_s: float  #: user + system CPU time of the child
    args: tuple[str, ...] = ()  #: the command, when known


#: A lean launcher (``python -S -I``, about 8 MiB) that spawns the measured program and
#: writes its wall time and ``os.wait4`` resource usage to the file descriptor argv[1].
#: Spawning straight from this (large) Python process would not do: on Linux, exec
#: keeps the spawning process's peak RSS as the floor of the child's ``ru_maxrss``.
_LAUNCHER = """
import os, sys, time
fd = int(sys.argv[1])
t = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t
os.write(fd, ("%d %r %d %r %r" % (os.waitstatus_to_exitcode(status), wall, ru.ru_maxrss,
         ru.ru_utime, ru.ru_stime)).encode())
"""


def run_process(cmd: Sequence[str], *, env: Mapping[str, str] | None = None) -> ProcResult:
    """Run ``cmd`` and measure the child alone: wall time from spawn to exit, and peak
    RSS and CPU time from ``os.wait4``, taken by a lean launcher process (see
    ``_LAUNCHER``).  Raises :class:`Ns3Error` if the launcher itself fails."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryFile() as meta,
    ):
        fd = meta.fileno()
        launcher = [sys.executable, "-S", "-I", "-c", _LAUNCHER, str(fd), *cmd]
        proc = subprocess.run(
            launcher, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, pass_fds=(fd,)
        )
        out.seek(0)
        err.seek(0)
        meta.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
        fields = meta.read().decode().split()
        if proc.returncode != 0 or len(fields) != 5:
            tail = " | ".join(stderr.strip().splitlines()[-3:])
            raise Ns3Error(f"could not run {shlex.join(cmd)}: {tail}")
        code, wall, rss, utime, stime = fields
        scale = 1024 * 1024 if sys.platform == "darwin" else 1024
        return ProcResult(
            returncode=int(code),
            stdout=stdout,
            stderr=stderr,
            wall_s=float(wall),
            max_rss_mib=int(rss) / scale,
            cpu_s=float(utime) + float(stime),
        )


def parse_flow_lines(stdout: str) -> list[dict[str, Any]]:
    """The ``{"type": "flow", ...}`` JSON lines the reference program prints."""
    rows = []
    for line in stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            if d.get("type") == "flow":
                rows.append(d)
    return rows


#: Child processes of running runs, ended when a validation is interrupted; the value
#: says whether the child ends gracefully (SIGTERM first: it cleans up system state).
_LIVE: dict[subprocess.Popen[str], bool] = {}
_LIVE_LOCK = threading.Lock()
_STOP = threading.Event()
#: Seconds a graceful child gets between SIGTERM and SIGKILL.
GRACE_S = 15.0


def run_child(cmd: Sequence[str]) -> str:
    """Run one child process to completion and return its stdout; raises
    ``RuntimeError`` with the tail of its stderr when it fails, or when
    :func:`kill_children` was called since the last :func:`allow_children`."""
    return run_child_streams(cmd)[0]


def run_child_streams(
    cmd: Sequence[str], *, timeout_s: float | None = None, graceful: bool = False
) -> tuple[str, str]:
    """:func:`run_child`, returning the child's stdout and stderr. A ``graceful`` child
    (one that holds system state, such as an emulation) runs in its own session and is
    ended with SIGTERM, then SIGKILL after :data:`GRACE_S`; so is one that outlives
    ``timeout_s``, which then raises ``RuntimeError``."""
    if _STOP.is_set():
        raise RuntimeError("stopped")
    proc = subprocess.Popen(
        list(cmd),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=graceful,
    )
    with _LIVE_LOCK:
        _LIVE[proc] = graceful
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _end([proc] if graceful else [], [] if graceful else [proc])
        proc.communicate()
        raise RuntimeError(f"{Path(cmd[0]).name} ran past {timeout_s:g} s and was ended") from None
    finally:
        with _LIVE_LOCK:
            _LIVE.pop(proc, None)
    if proc.returncode != 0:
        tail = " | ".join(err.strip().splitlines()[-3:])
        raise RuntimeError(f"{Path(cmd[0]).name} exited with {proc.returncode}: {tail}")
    return out, err


def _end(graceful: Sequence[subprocess.Popen[str]], rest: Sequence[subprocess.Popen[str]]) -> None:
    """SIGKILL ``rest``; SIGTERM ``graceful`` and SIGKILL those still running after
    :data:`GRACE_S`."""
    for proc in rest:
        if proc.poll() is None:
            proc.kill()
    for proc in graceful:
        if proc.poll() is None:
            proc.terminate()
    for proc in graceful:
        try:
            proc.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()


def kill_children() -> None:
    """End every child :func:`run_child` is waiting for (graceful ones with SIGTERM
    first), and refuse new ones."""
    _STOP.set()
    with _LIVE_LOCK:
        live = list(_LIVE.items())
    _end([p for p, g in live if g], [p for p, g in live if not g])


def allow_children() -> None:
    """Let :func:`run_child` start children again (before a new batch of runs)."""
    _STOP.clear()


#: The child that runs vtlab: it imports only the compiled core (not the vtlab package,
#: which pulls in pandas) and prints the run's meta, its first flow row (``flow``) and
#: every flow row (``flows``, each with the flow's ``start_s``) as one JSON line.
#: argv: core directory, spec JSON, seed.
VTLAB_CHILD = """
import json, sys, time, types
pkg = types.ModuleType("vtlab"); pkg.__path__ = [sys.argv[1]]; sys.modules["vtlab"] = pkg
from vtlab import _core
spec = sys.argv[2]; seed = int(sys.argv[3])
t = time.perf_counter()
out = _core.run(spec, seed, False)
wall = time.perf_counter() - t
cols = out["flows"]
rows = [{k: v[i] for k, v in cols.items()} for i in range(len(cols["flow"]))]
starts = {f["name"]: f["start_ns"] / 1e9 for f in json.loads(_core.expand(spec))["flows"]}
for r in rows:
    r["start_s"] = starts.get(r["flow"], 0.0)
print(json.dumps({"meta": out["meta"], "flow": rows[0], "flows": rows, "call_wall_s": wall}))
"""


def vtlab_child_command(spec_json: str, seed: int) -> list[str]:
    """The command that runs one vtlab simulation in a lean child process."""
    from vtlab import _core

    return [
        sys.executable,
        "-S",  # no site: the child needs only the standard library and the core
        "-I",
        "-c",
        VTLAB_CHILD,
        str(Path(_core.__file__).resolve().parent),  # the compiled core's directory
        spec_json,
        str(int(seed)),
    ]


def parse_loss_positions(stderr: str) -> dict[str, list[int]]:
    """The lost packets' positions a reference program prints with ``--traceLoss``:
    ``lost <direction> <position> ...`` lines of its stderr, by direction
    (``toward_evcc``, ``toward_secc``).

    >>> parse_loss_positions("tcp 0 1 x\\nlost toward_evcc 3 17\\nlost toward_secc\\n")
    {'toward_evcc': [3, 17], 'toward_secc': []}
    """
    drops: dict[str, list[int]] = {}
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "lost":
            drops[parts[1]] = [int(x) for x in parts[2:]]
    return drops
