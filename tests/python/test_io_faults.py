"""File-system faults: input files that are not files (FIFOs, devices, through links),
outputs that cannot be written (a full disk, a file size limit, too many open files),
an unwritable cache directory, and the names error messages use for them.

Every case runs the command line in a child process with a memory cap and a timeout
(:func:`vtlab_child`), so that a regression hangs or exhausts nothing: it fails. A full
disk is simulated with ``RLIMIT_FSIZE`` (writes past the limit fail with EFBIG, as on
a full disk with ENOSPC), which needs no root and no special file system; the
expected problem text comes from the C library (``os.strerror``), not from vtlab.
"""

from __future__ import annotations

import errno
import os
import re
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from typer.testing import Result

import vtlab
from conftest import assert_usage_error
from vtlab.ns3 import program

Cli = Callable[..., Result]

PYTHON_DIR = Path(vtlab.__file__).resolve().parent.parent

#: What the C library calls EFBIG, as vtlab prints it (first letter in lower case).
FILE_TOO_LARGE = os.strerror(errno.EFBIG)[0].lower() + os.strerror(errno.EFBIG)[1:]

#: Address space of every child: far above what the commands need, far below the
#: machine (an unbounded read of /dev/zero fails instead of swapping).
MEMORY_CAP = 6 << 30


def vtlab_child(
    args: Sequence[str],
    cwd: Path,
    *,
    fsize: int | None = None,
    nofile: tuple[int, int] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``vtlab ARGS`` in a child process in ``cwd``, under a memory cap and a timeout,
    with optional limits on the file size (``RLIMIT_FSIZE``; SIGXFSZ ignored, so a
    write past it fails with EFBIG) and on open files (soft, hard)."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, nofile)

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "vtlab", *args],
        cwd=cwd,
        env=env,
        preexec_fn=limits,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line of a child that exited with status 2."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), proc.stderr
    return lines[0]


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# -- input files that are not regular files ----------------------------------------------


def _fifo(tmp: Path) -> tuple[str, str]:
    os.mkfifo(tmp / "cell.down")
    return "cell.down", "a FIFO (named pipe)"


def _link_to_dev_zero(tmp: Path) -> tuple[str, str]:
    (tmp / "zero.down").symlink_to("/dev/zero")
    return "zero.down", "a character device"


def _directory(tmp: Path) -> tuple[str, str]:
    (tmp / "dir.down").mkdir()
    return "dir.down", "a directory"


@pytest.mark.parametrize(
    "make",
    [_fifo, lambda _tmp: ("/dev/zero", "a character device"), _link_to_dev_zero, _directory],
    ids=["fifo", "dev-zero", "link-to-dev-zero", "directory"],
)
def test_a_trace_file_must_be_a_regular_file(tmp_path: Path, make) -> None:
    # Before: a FIFO blocked the run forever (nothing writes to it); /dev/zero's
    # length reads as 0, so the 1 GiB check let an endless read through.
    name, kind = make(tmp_path)
    proc = vtlab_child(
        ["run", "lte-cabin", "--bytes", "1MB", "--set", f'capacity_down.trace="{name}"'],
        tmp_path,
        timeout=60,
    )
    assert one_error(proc) == (
        f"error: capacity_down.trace: trace file '{name}' is {kind}, not a regular file"
    )


def test_a_scenario_file_is_read_up_to_64_mib(tmp_path: Path) -> None:
    # /dev/zero never ends: before, the whole of it was read into memory.
    proc = vtlab_child(["run", "-s", "/dev/zero"], tmp_path, timeout=60)
    assert one_error(proc) == (
        f"error: /dev/zero: a scenario file may have at most {64 * 2**20} bytes (64 MiB); "
        'put a long capacity trace in a trace file (trace = "FILE")'
    )


# -- a full disk while writing -----------------------------------------------------------

#: (command line, option, file the error names (a regular expression), limit in bytes).
#: Each output is larger than its limit (a 1 MB run writes about 20 kB of flow rows);
#: the traces, events and captures are written while the runs go.
WRITE_CASES = [
    (["run", "v2g", "--bytes", "1MB", "--out", "o.parquet"], "--out", "o.parquet", 2000),
    (["run", "v2g", "--bytes", "5MB", "--trace", "t.parquet"], "--trace", "t.parquet", 2000),
    (["run", "v2g", "--bytes", "5MB", "--trace", "t.csv"], "--trace", "t.csv", 2000),
    (["run", "v2g", "--bytes", "1MB", "--events", "e.parquet"], "--events", "e.parquet", 2000),
    (["run", "v2g", "--bytes", "1MB", "--events", "e.qlog"], "--events", "e.qlog", 2000),
    (["run", "v2g", "--bytes", "5MB", "--pcap", "caps"], "--pcap", r"caps/\w+\.pcap", 20000),
    (
        ["sweep", "v2g", "--bytes", "1MB", "-n", "1", "--out", "s.parquet"],
        "--out",
        "s.parquet",
        2000,
    ),
    (
        ["sweep", "v2g", "--bytes", "1MB", "-n", "2", "--store", "st"],
        "--store",
        r"st/runs/part-[0-9]{8}T[0-9]{6}-[0-9]+-[0-9a-f]{8}\.parquet",
        2000,
    ),
    (["lte-trace", "m.txt", "--seconds", "5"], "OUT", "m.txt", 2000),
]


@pytest.mark.parametrize(
    ("args", "option", "file", "limit"),
    WRITE_CASES,
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_a_failed_write_names_the_option_and_the_file(
    tmp_path: Path, args: list[str], option: str, file: str, limit: int
) -> None:
    # Before: `error: [Errno 28] Error writing bytes to file. Detail: ...` (no option, no
    # file), or for a capture `cannot write caps/secc.pcap: Error reading bytes`.
    proc = vtlab_child([*args, "-q"] if args[0] != "lte-trace" else args, tmp_path, fsize=limit)
    line = one_error(proc)
    assert re.fullmatch(rf"error: {option}: {file}: {re.escape(FILE_TOO_LARGE)}", line), line
    if option != "--store":  # a store keeps its complete runs and resumes
        assert files(tmp_path) == [], "no partial output is left behind"


# -- outputs that are devices, FIFOs or dangling links -----------------------------------


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (os.mkfifo, "a FIFO (named pipe)"),
        (lambda p: os.symlink("/dev/full", p), "a character device"),
    ],
    ids=["fifo", "link-to-dev-full"],
)
@pytest.mark.parametrize("option", ["--out", "--trace", "--events"])
def test_an_output_must_be_a_regular_file(tmp_path: Path, make, kind: str, option: str) -> None:
    # Before: a FIFO blocked the command when it opened the file (nothing reads it);
    # /dev/full failed after the runs with `[Errno 28]` and no option.
    name = {"--out": "o.parquet", "--trace": "t.csv", "--events": "e.qlog"}[option]
    make(tmp_path / name)
    proc = vtlab_child(
        ["run", "v2g", "--bytes", "1MB", option, name, "--force"], tmp_path, timeout=60
    )
    assert one_error(proc) == f"error: {option}: '{name}' is {kind}, not a regular file"


def test_a_capture_over_a_device_is_refused_before_the_run(tmp_path: Path) -> None:
    # Before: with --force the run went ahead and failed writing /dev/full.
    (tmp_path / "caps").mkdir()
    (tmp_path / "caps" / "sa.pcap").symlink_to("/dev/full")
    proc = vtlab_child(
        ["run", "v2g", "--bytes", "1MB", "--pcap", "caps", "--force"], tmp_path, timeout=60
    )
    assert one_error(proc) == (
        "error: --pcap: 'caps/sa.pcap' is a character device, not a regular file"
    )
    assert files(tmp_path) == ["caps", "caps/sa.pcap"]
    assert Path("/dev/full").is_char_device()


# -- too many open files -----------------------------------------------------------------

#: A 100-vehicle station: SA, the switch, 34 segments (3 vehicles each) and 100
#: vehicles, one capture file per node (docs/scenarios.md, docs/captures.md).
STATION_100 = ["run", "station", "--set", "vehicles=100", "--bytes", "10kB", "-q"]
STATION_100_FILES = 2 + 34 + 100


def test_a_capture_beyond_the_open_file_limit_is_refused_before_the_run(tmp_path: Path) -> None:
    # Before: the run started, failed at the 1024th file (ulimit -n 1024 with 1000
    # vehicles) and left the files it had opened.
    proc = vtlab_child([*STATION_100, "--pcap", "caps"], tmp_path, nofile=(128, 128))
    line = one_error(proc)
    pattern = (
        rf"error: --pcap: the capture opens {STATION_100_FILES} files at once \(one per "
        r"capture point\), but this process may open at most 128 files \(\d+ open already, "
        r"ulimit -n\); capture fewer points or raise the limit"
    )
    assert re.fullmatch(pattern, line), line
    assert files(tmp_path) == []


def test_a_low_soft_open_file_limit_is_raised_to_the_hard_one(tmp_path: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 1024:
        pytest.skip(f"the hard limit on open files is {hard}")
    proc = vtlab_child(
        [*STATION_100, "--pcap", "caps", "--pcap-headers-only"], tmp_path, nofile=(128, 1024)
    )
    assert proc.returncode == 0, proc.stderr
    captured = list((tmp_path / "caps").iterdir())
    assert len(captured) == STATION_100_FILES
    assert all(f.stat().st_size >= 24 for f in captured)  # the pcap file header at least


CORE_CAPTURE = (
    "import json, resource\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))\n"
    "from vtlab import _core\n"
    "spec = json.dumps({'preset': 'station', 'vehicles': 100, 'bytes': '10kB'})\n"
    "try:\n"
    "    _core.run(spec, 1, pcap='caps')\n"
    "except _core.ScenarioError as e:\n"
    "    print(e)\n"
)


def test_the_core_removes_the_files_it_opened_when_one_cannot_be(tmp_path: Path) -> None:
    # The compiled core on its own (no Python check first): the open that fails
    # says why, and the files opened before it are removed with their directory.
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    proc = subprocess.run(
        [sys.executable, "-c", CORE_CAPTURE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(
        r"pcap: cannot write caps/\w+\.pcap: too many open files: the capture opens "
        rf"{STATION_100_FILES} files at once, more than this process may open \(raise the "
        r"limit, ulimit -n, or capture fewer points\)",
        proc.stdout.strip(),
    ), proc.stdout
    assert files(tmp_path) == []


# -- the cache directory -----------------------------------------------------------------


def test_an_unusable_cache_directory_is_one_error_line(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: `vtlab validate v2g --only ns3` printed a NotADirectoryError traceback, and
    # other commands a bare "<path>: Not a directory" that did not say it was the cache.
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    monkeypatch.setenv("VTLAB_CACHE", str(a_file / "cache"))
    result = cli("bench", "lte-cabin", "--vs-ns3")
    line = assert_usage_error(result)
    problem = os.strerror(errno.ENOTDIR)
    assert line == (
        f"error: $VTLAB_CACHE: cannot create '{a_file / 'cache' / 'bench-lte'}': "
        f"{problem[0].lower()}{problem[1:]}"
    )


def test_a_read_only_cache_directory_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root may write anywhere, so the permission answer is replaced, not the mode.
    real_access = os.access
    monkeypatch.setattr(
        program.os,
        "access",
        lambda p, mode: False if Path(p) == tmp_path / "ro" else real_access(p, mode),
    )
    monkeypatch.setenv("VTLAB_CACHE", str(tmp_path))
    with pytest.raises(program.Ns3Error) as info:
        program.cache_dir("ro")
    assert str(info.value) == f"$VTLAB_CACHE: '{tmp_path / 'ro'}' is not writable"
    monkeypatch.delenv("VTLAB_CACHE")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(program.Path, "home", lambda: tmp_path / "home")
    (tmp_path / "home").write_text("")  # not a directory
    with pytest.raises(program.Ns3Error) as info:
        program.cache_dir("ns3")
    assert str(info.value).startswith(f"cache directory: cannot create '{tmp_path / 'home'}")
    assert str(info.value).endswith("(set $VTLAB_CACHE to a writable directory)")


# -- the names in messages ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        # Before: `error: n_ms: 0 is outside [1, 3600000] ms (one hour)`.
        (
            ["--seconds", "0.0001"],
            "error: --seconds: 0.0001 is outside [0.001, 3600] (1 ms to 1 h)",
        ),
        (["--seconds", "4000"], "error: --seconds: 4000 is outside [0.001, 3600] (1 ms to 1 h)"),
        # Before: `error: link: no link 'lte' (links: wan, plc)`.
        (
            ["--preset", "v2g"],
            "error: --preset: no link 'lte' (links: wan, plc) (direction 'down' is the lte "
            "link leaving enb, as in lte-cabin)",
        ),
    ],
)
def test_lte_trace_errors_name_its_options(
    cli: Cli, tmp_path: Path, args: list[str], line: str
) -> None:
    out = tmp_path / "t.txt"
    assert assert_usage_error(cli("lte-trace", str(out), *args)) == line
    assert not out.exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seconds": 0.0004}, "seconds: 0.0004 is outside [0.001, 3600]"),
        ({"link": "lte", "from_node": "car"}, "from_node: 'car' is not an end of link 'lte'"),
        ({"link": "x", "from_node": "enb"}, "link: no link 'x' (links: core, lte, cabin)"),
    ],
)
def test_channel_series_errors_name_its_arguments(kwargs: dict, message: str) -> None:
    from vtlab.cellular import channel_series

    with pytest.raises(ValueError) as info:
        channel_series("lte-cabin", **kwargs)
    assert str(info.value).startswith(message)
