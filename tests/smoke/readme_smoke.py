"""Every command of the README, in quick form, against an installed vtlab.

Run by ``make smoke`` (part of ``make test``) with the python of a fresh virtual
environment that holds only the built wheel (no development extras), from an empty
folder outside the checkout: a command that finds its data beside the source tree
fails here. Standard library only.

    python tests/smoke/readme_smoke.py --readme README.md --examples examples

:data:`QUICK` maps each command of the README's console block, as written there, to
the command the smoke run runs: the same command with a smaller transfer, fewer runs
or its ``--quick`` form. A README command missing from :data:`QUICK` (or an entry no
longer in the README) fails the run and ``tests/python/test_readme.py``.  Commands
that need what a runtime install lacks (root, ns-3, Dask) are run all the same and
must fail with the one-line error that names what to install.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SMALL = "--bytes 1MB"


@dataclass(frozen=True)
class Quick:
    """What the smoke run runs for one README command and what it expects."""

    command: str  #: shell words after ``vtlab``
    status: int = 0  #: expected exit status
    error: str = ""  #: text of the expected ``error:`` line when ``status`` is 2
    or_error: bool = False  #: status 0, or 2 with one ``error:`` line (a machine lacks it)
    file: str = ""  #: a file the command writes (relative to the folder it runs in) ...
    contains: str = ""  #: ... that holds this text ...
    lacks: str = ""  #: ... and not this one


NS3 = "ns-3 is not installed: pip install 'vtlab[ns3]'"

#: README command (after ``$ vtlab ``) → its quick form.
QUICK: dict[str, Quick] = {
    "run v2g --loss 5% --runs 6": Quick(f"run v2g --loss 5% --runs 6 {SMALL}"),
    "run v2g --cc illinois-aa --loss 5%": Quick(f"run v2g --cc illinois-aa --loss 5% {SMALL}"),
    "run v2g --profile linux": Quick(f"run v2g --profile linux {SMALL}"),
    "run station --loss 5%": Quick(f"run station --loss 5% {SMALL}"),
    "run v2g --loss 1% --qdisc codel": Quick(f"run v2g --loss 1% --qdisc codel {SMALL}"),
    "run v2g --session iso15118-2-dc --loss 1% -n 20": Quick(
        "run v2g --session iso15118-2-dc --loss 1% -n 2 --set session.duration=10s"
    ),
    "run v2g --session din70121-dc --set session.duration=5min --json": Quick(
        "run v2g --session din70121-dc --set session.duration=10s --json"
    ),
    "run lte-cabin --set speed_kmh=60 -n 10": Quick(
        f"run lte-cabin --set speed_kmh=60 -n 2 {SMALL}"
    ),
    "run lte-cabin --set adaptive=true": Quick(f"run lte-cabin --set adaptive=true {SMALL}"),
    "run vanet-chain --set hops=8 --cc vegas": Quick(
        "run vanet-chain --set hops=8 --cc vegas --bytes 20KB"
    ),
    "run vanet-chain --set hops=8 --set routing=aodv": Quick(
        "run vanet-chain --set hops=8 --set routing=aodv --bytes 20KB"
    ),
    "run v2g --loss 1% --runs 6 --json": Quick(f"run v2g --loss 1% --runs 2 --json {SMALL}"),
    "run v2g --loss 5% --runs 6 --format csv": Quick(
        f"run v2g --loss 5% --runs 2 --format csv {SMALL}"
    ),
    "run v2g --loss 1% --out runs.parquet": Quick(f"run v2g --loss 1% --out runs.parquet {SMALL}"),
    "run v2g --loss 1% --trace trace.parquet": Quick(
        f"run v2g --loss 1% --trace trace.parquet {SMALL}"
    ),
    # The same figure as SVG, a text file whose content the smoke run can check.
    "plot trace.parquet -o cwnd.png": Quick(
        "plot trace.parquet -o cwnd.svg", file="cwnd.svg", contains="<svg"
    ),
    "run v2g --loss 5% --trace t.parquet --trace-mode changes": Quick(
        f"run v2g --loss 5% --trace t.parquet --trace-mode changes {SMALL}"
    ),
    "run v2g --loss 5% --events events.qlog": Quick(
        f"run v2g --loss 5% --events events.qlog {SMALL}"
    ),
    "run v2g --loss 2% --bytes 2MB --pcap caps/": Quick(
        "run v2g --loss 2% --bytes 200KB --pcap caps/"
    ),
    "run --scenario examples/v2g-5pct.toml": Quick(
        "run --scenario examples/v2g-5pct.toml --set bytes=1MB"
    ),
    "run v2g --set plc_rate=5Mbps --set tcp.delayed_ack=false": Quick(
        f"run v2g --set plc_rate=5Mbps --set tcp.delayed_ack=false {SMALL}"
    ),
    # Needs root and TAP devices: without them the one-line error says so.
    "emulate v2g --loss 1% --far \"iperf3 -s -1\" -- iperf3 -c '$VTLAB_PEER' -R": Quick(
        "emulate v2g --loss 1% --far true -- true", or_error=True
    ),
    "expand v2g --loss 5%": Quick("expand v2g --loss 5%"),
    # Needs root, Java and the iso15118 package (the dev extra): without them the
    # one-line error says which is missing.
    "study iso15118 --real --quick": Quick("study iso15118 --real --quick", or_error=True),
    "sweep v2g --axis tcp.cc=newreno,illinois --axis loss:loss.mean_loss=1%,5% --store out/grid": (
        Quick(
            "sweep v2g --axis tcp.cc=newreno,illinois --axis loss:loss.mean_loss=1%,5% "
            f"--store out/grid --runs 1 {SMALL}"
        )
    ),
    "load out/grid --where tcp_cc=illinois": Quick("load out/grid --where tcp_cc=illinois"),
    # One stack, a 10-s loop: seconds instead of minutes.
    "advise v2g --loss 0.0001% --burst 1-4": Quick(
        "advise v2g --loss 0.01% --burst 1 --duration 10s --stack linux"
    ),
    # Dask is the [cluster] extra: a runtime install says how to get it.
    "sweep v2g --axis loss:loss.mean_loss=1%,5% --runs 1000 --store out/big "
    "--scheduler tcp://scheduler-host:8786": Quick(
        "sweep v2g --axis loss:loss.mean_loss=1%,5% --runs 2 --store out/big "
        "--scheduler tcp://127.0.0.1:9",
        2,
        "pip install 'vtlab[cluster]'",
    ),
    "bench": Quick(f"bench --repeat 1 --no-startup {SMALL}"),
    "bench --vs-ns3": Quick(f"bench --vs-ns3 --repeat 1 --no-startup {SMALL}", 2, NS3),
    # The quick grid's ns-3 runs are stored: it runs without ns-3.
    "validate v2g --quick": Quick(
        "validate v2g --quick -q -o out/v2g", file="out/v2g/report.md", contains="ns-3 3.44"
    ),
    # The report quotes the packaged validation data (it said there were none).
    "reproduce park2019": Quick(
        "reproduce park2019 --quick -q -o out/park2019",
        file="out/park2019/report.md",
        contains="validation against ns-3.44 (`validation/agreement.csv`",
        lacks="hold no",
    ),
    "reproduce martignon": Quick("reproduce martignon --quick -q -o out/martignon"),
    "reproduce martignon --profile ns2": Quick(
        "reproduce martignon --profile ns2 --quick -q -o out/martignon-ns2"
    ),
    "reproduce hu-lte": Quick("reproduce hu-lte --quick -q -o out/hu-lte"),
    "reproduce janevski2014": Quick("reproduce janevski2014 --quick -q -o out/janevski2014"),
    "study iso15118": Quick("study iso15118 --quick -q -o out/iso15118"),
    "study iso15118 --quick": Quick("study iso15118 --quick -q -o out/iso15118"),
    "validate lte": Quick("validate lte -q"),
    "validate wifi": Quick("validate wifi --quick -q"),
    "validate wifi-aodv": Quick("validate wifi-aodv --quick -q"),
    "validate iso15118": Quick("validate iso15118 --quick -q"),
    "lte-trace cell.down --set speed_kmh=60": Quick(
        "lte-trace cell.down --set speed_kmh=60 --seconds 2"
    ),
    "reproduce --list": Quick("reproduce --list"),
    "study --list": Quick("study --list"),
    "cc list": Quick("cc list"),
    "cc table": Quick("cc table -n 1 --bytes 200KB --loss 1% --cc newreno --cc cubic"),
}


def readme_commands(readme: str) -> list[str]:
    """The ``$ vtlab ...`` lines of the README's console blocks (after ``vtlab``),
    continuation lines joined, comments and ``sudo`` dropped."""
    commands: list[str] = []
    lines = iter(readme.splitlines())
    for line in lines:
        m = re.match(r"^\$ (?:sudo )?vtlab (.*)$", line)
        if not m:
            continue
        text = m.group(1)
        while text.rstrip().endswith("\\"):
            text = text.rstrip()[:-1] + " " + next(lines).strip()
        commands.append(_drop_comment(text))
    return commands


def _drop_comment(text: str) -> str:
    """``text`` without its trailing ``# comment`` (a ``#`` outside quotes)."""
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] == " "):
            return " ".join(text[:i].split())
    return " ".join(text.split())


def check_mapping(commands: list[str]) -> list[str]:
    """Problems between the README's commands and :data:`QUICK`."""
    missing = [c for c in commands if c not in QUICK]
    stale = [c for c in QUICK if c not in commands]
    return [f"README command without a quick form: {c}" for c in missing] + [
        f"quick form of a command no longer in the README: {c}" for c in stale
    ]


def clean_env() -> dict[str, str]:
    """This environment without the variables that point vtlab at other data (or at
    a source tree): the smoke run sees only what the wheel installed."""
    drop = ("VTLAB_VALIDATION_DIR", "PYTHONPATH")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("VTLAB_NS3_")}


def run_one(vtlab: str, quick: Quick, cwd: Path, timeout: float) -> tuple[bool, float, str]:
    """Run one quick command; (as expected, wall seconds, what went wrong)."""
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [vtlab, *shlex.split(quick.command)],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=clean_env(),
        )
    except subprocess.TimeoutExpired:
        return False, time.perf_counter() - started, f"no exit within {timeout:g} s"
    wall = time.perf_counter() - started
    err = proc.stderr.strip().splitlines()
    if quick.or_error and proc.returncode == 2:
        quick = Quick(quick.command, 2)
    if proc.returncode != quick.status:
        tail = "\n    ".join((proc.stdout.strip().splitlines() + err)[-8:])
        return False, wall, f"exit {proc.returncode}, expected {quick.status}:\n    {tail}"
    if quick.file:
        path = cwd / quick.file
        text = path.read_text() if path.is_file() else ""
        if quick.contains not in text or (quick.lacks and quick.lacks in text):
            return False, wall, f"{quick.file}: lacks {quick.contains!r} or has {quick.lacks!r}"
    one_line = len(err) == 1 and err[0].startswith("error: ") and quick.error in err[0]
    if quick.status == 2 and not one_line:
        return False, wall, f"expected one 'error: ...{quick.error}' line, got {err}"
    return True, wall, ""


def api_example(python: str, cwd: Path) -> tuple[bool, str]:
    """The README's Python example (with 1 MB transfers)."""
    code = (
        "import vtlab\n"
        'res = vtlab.run({"preset": "v2g", "loss": {"mean_loss": "5%"}, "bytes": "1MB"}, seed=1)\n'
        'assert res.flows["goodput_bps"].iloc[0] > 0\n'
        'many = vtlab.run_many({"preset": "v2g", "bytes": "1MB"}, seeds=range(1, 3))\n'
        'print(vtlab.summarize(many.flows, by=("cc",)))\n'
    )
    proc = subprocess.run(
        [python, "-c", code], cwd=cwd, capture_output=True, text=True, env=clean_env()
    )
    return proc.returncode == 0, proc.stderr.strip()


def data_check(python: str, cwd: Path, checkout: Path) -> str:
    """Where the installed package finds its validation data: inside itself."""
    code = "import vtlab.packagedata as p; print(p.validation_dir().resolve())"
    out = subprocess.run(
        [python, "-c", code], cwd=cwd, capture_output=True, text=True, env=clean_env(), check=True
    ).stdout.strip()
    found = Path(out)
    if found.is_relative_to(checkout.resolve()):
        return f"the installed package reads its validation data from the checkout: {found}"
    if not (found / "ns3" / "v2g.cc").is_file():
        return f"the installed package's validation data lack ns3/v2g.cc: {found}"
    return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readme", type=Path, required=True)
    ap.add_argument("--examples", type=Path, required=True)
    ap.add_argument("--timeout", type=float, default=300.0, help="per command, seconds")
    args = ap.parse_args(argv)
    problems = check_mapping(readme_commands(args.readme.read_text()))
    bindir = Path(sys.executable).parent
    vtlab = shutil.which("vtlab", path=str(bindir)) or "vtlab"
    checkout = args.readme.resolve().parent
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="vtlab-smoke-") as tmp:
        cwd = Path(tmp)
        shutil.copytree(args.examples, cwd / "examples")
        problems += [p for p in [data_check(sys.executable, cwd, checkout)] if p]
        done: set[str] = set()
        for readme_command, quick in QUICK.items():
            if quick.command in done:
                continue
            done.add(quick.command)
            ok, wall, why = run_one(vtlab, quick, cwd, args.timeout)
            print(f"{'ok  ' if ok else 'FAIL'} {wall:6.1f} s  vtlab {quick.command}", flush=True)
            if not ok:
                problems.append(f"vtlab {quick.command} (README: {readme_command}): {why}")
        ok, why = api_example(sys.executable, cwd)
        print(f"{'ok  ' if ok else 'FAIL'} the README's Python example", flush=True)
        if not ok:
            problems.append(f"the README's Python example: {why}")
    wall = time.perf_counter() - started
    print(f"{len(QUICK)} README commands ({len(done)} runs) and the Python example in {wall:.0f} s")
    for p in problems:
        print(f"smoke: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
