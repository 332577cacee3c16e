"""The output-fault cases of test_fs_faults.py, run in one child process: each case
prepares a scratch directory (a full disk, a device file, a FIFO, a dangling or
looping link, a read-only directory, a file-size limit), runs the command line in
it in-process (the import cost paid once, not per case) and records the exit
status, the output, any uncaught exception and whether the directory changed.
Usage: ``python fs_faults_child.py RESULTS.json``; prints each case as it starts on
stderr, so a case that hangs is named by the parent's time limit.

Where the child runs as root, the parent has taken from it the capabilities that
let root write through permissions, so the read-only directory is read-only to it.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

#: The file-size limit of the "disk full mid-file" cases: every output of RUN is
#: larger (flow rows 22 kB, link rows 11 kB, trace 28 kB, events 96 kB, capture 2 MB).
FSIZE_LIMIT = 8 * 1024
#: A run whose every output is small but larger than FSIZE_LIMIT.
RUN = ["run", "v2g", "--bytes", "2MB", "--loss", "2%", "--quiet"]
#: The commands tested, with the options each writes through.
COMMANDS = {
    "run": (RUN, ["--out", "--trace", "--events", "--pcap"]),
    "sweep": (
        [
            "sweep",
            "v2g",
            "--bytes",
            "2MB",
            "--axis",
            "loss.mean_loss=1%,2%",
            "--runs",
            "1",
            "--quiet",
        ],
        ["--out"],
    ),
}
#: Extra arguments per command and option.
ARGS = {
    ("run", "--pcap"): ["--pcap-points", "evcc"],
    ("run", "--trace"): ["--trace-mode", "changes"],
}
#: The file each option writes in these cases (--pcap: in its directory, `caps`).
TARGETS = {
    "--out": "o.parquet",
    "--trace": "t.parquet",
    "--events": "e.qlog",
    "--pcap": "evcc.pcap",
}


@dataclass
class Case:
    """A scratch directory prepared for one fault, and how to run the command there."""

    root: Path
    option: str
    value: str = ""
    force: bool = False
    fsize: int | None = None
    fifo: Path | None = None


def _target(case: Case, parent: Path) -> Path:
    """Where the option's file goes: in `parent`, or in `parent`/caps for --pcap."""
    if case.option == "--pcap":
        caps = parent / "caps"
        caps.mkdir(exist_ok=True)
        case.value = str(caps.relative_to(case.root))
        return caps / TARGETS["--pcap"]
    path = parent / TARGETS[case.option]
    case.value = str(path.relative_to(case.root))
    return path


def full_disk(case: Case) -> None:
    _target(case, case.root).symlink_to("/dev/full")
    case.force = True  # the name exists: only --force may write over it


def device(case: Case) -> None:
    _target(case, case.root).symlink_to("/dev/null")
    case.force = True


def fifo(case: Case) -> None:
    path = _target(case, case.root)
    os.mkfifo(path)
    case.force = True
    case.fifo = path


def dangling(case: Case) -> None:
    _target(case, case.root).symlink_to(case.root / "missing" / "x")


def loop(case: Case) -> None:
    path = _target(case, case.root)
    path.symlink_to(path.name)


def read_only(case: Case) -> None:
    ro = case.root / "ro"
    ro.mkdir()
    if case.option == "--pcap":  # the capture directory would have to be created there
        case.value = "ro/caps"
    else:
        _target(case, ro)
    ro.chmod(0o555)


def size_limit(case: Case) -> None:
    _target(case, case.root)
    if case.option == "--pcap":
        (case.root / "caps").rmdir()
    case.fsize = FSIZE_LIMIT


FAULTS: dict[str, Callable[[Case], None]] = {
    "full disk (/dev/full)": full_disk,
    "device file (/dev/null)": device,
    "FIFO": fifo,
    "dangling link into a missing directory": dangling,
    "link loop": loop,
    "read-only directory": read_only,
    "disk full mid-file (file-size limit)": size_limit,
}


def cases() -> list[tuple[str, str, str]]:
    """Every (command, fault, option)."""
    return [(c, f, o) for c, (_, opts) in COMMANDS.items() for f in FAULTS for o in opts]


def case_id(command: str, fault: str, option: str) -> str:
    return f"{command} {option} {fault}"


def snapshot(root: Path) -> dict[str, list[str]]:
    """Every entry under `root`: its kind and content (a link's target)."""
    out: dict[str, list[str]] = {}
    for p in sorted(root.rglob("*")):
        key = str(p.relative_to(root))
        if p.is_symlink():
            out[key] = ["link", os.readlink(p)]
        elif p.is_dir():
            out[key] = ["dir", ""]
        elif p.is_file():
            out[key] = ["file", p.read_bytes().hex()]
        else:
            out[key] = ["other", ""]
    return out


@contextlib.contextmanager
def drained(path: Path | None) -> Iterator[None]:
    """A reader on the FIFO, if any, so a writer never blocks on it."""
    if path is None:
        yield
        return
    stop = threading.Event()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)

    def drain() -> None:
        while not stop.is_set():
            try:
                if not os.read(fd, 1 << 16):
                    stop.wait(0.01)
            except BlockingIOError:
                stop.wait(0.01)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        yield
    finally:
        stop.set()
        reader.join()
        os.close(fd)


@contextlib.contextmanager
def file_size_limit(limit: int | None) -> Iterator[None]:
    """RLIMIT_FSIZE for the duration (Python ignores SIGXFSZ: writes fail with EFBIG)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    if limit is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def run_case(invoke: Callable[[list[str]], object], command: str, fault: str, option: str) -> dict:
    root = Path(tempfile.mkdtemp(prefix="vtlab-fs-"))
    here = os.getcwd()
    try:
        case = Case(root, option)
        FAULTS[fault](case)
        before = snapshot(root)
        args = [*COMMANDS[command][0], option, case.value, *ARGS.get((command, option), [])]
        os.chdir(root)
        with drained(case.fifo), file_size_limit(case.fsize):
            result = invoke(args + (["--force"] if case.force else []))
        after = snapshot(root)
        exc = result.exception  # type: ignore[attr-defined]
        return {
            "value": case.value,
            "exit_code": result.exit_code,  # type: ignore[attr-defined]
            "stderr": result.stderr,  # type: ignore[attr-defined]
            "exception": None if exc is None or isinstance(exc, SystemExit) else repr(exc),
            "changed": sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k)),
        }
    finally:
        os.chdir(here)
        for p in [root, *root.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(root)


def main(out: str) -> None:
    from typer.testing import CliRunner

    from vtlab.cli.app import app

    try:  # click < 8.2 mixes stderr into stdout unless told not to
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        runner = CliRunner()
    results = {}
    for command, fault, option in cases():
        name = case_id(command, fault, option)
        print(name, file=sys.stderr, flush=True)
        results[name] = run_case(lambda a: runner.invoke(app, a), command, fault, option)
    Path(out).write_text(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1])
