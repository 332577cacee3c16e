"""The ns-3 side of validation: find the ``ns3`` wheel, compile the reference program
``validation/ns3/v2g.cc`` on demand, translate a vtlab scenario into its arguments,
run it, and compare speed and memory with vtlab (:func:`bench_vs_ns3`).

The ``ns3`` PyPI wheel (``pip install 'vtlab[ns3]'``, i.e. ``ns3==3.44.post0``) carries
the ns-3 C++ headers (``<site-packages>/ns3/include``) and shared libraries
(``<site-packages>/ns3/lib64``).  :func:`ensure_binary` compiles ``v2g.cc`` against
them with g++ into ``<cache>/ns3/<sha256 of source and command>/v2g``, where
``<cache>`` is ``$VTLAB_CACHE`` or ``~/.cache/vtlab``; the binary is reused while the
source, the compile command and the ns-3 installation stay the same.

This module imports only the standard library at import time, so that
``validation/ns3/build.sh`` can run it as a plain script with any ``python3``::

    python3 python/vtlab/ns3.py build [--out DIR]

which prints the compile command and the path of the binary.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CC_TO_NS3",
    "COMPILE_FLAGS",
    "NS3_MISSING",
    "NS3_MODULES",
    "BENCH_STATION_SPEC",
    "BenchSide",
    "Ns3Binary",
    "Ns3Error",
    "ISO15118_PROGRAM",
    "Ns3Install",
    "Ns3NotInstalled",
    "ProcResult",
    "SessionStep",
    "VTLAB_CHILD",
    "bench_vs_ns3",
    "bench_vs_ns3_command",
    "cache_root",
    "compile_command",
    "core_dir",
    "ensure_binary",
    "find_ns3",
    "iso15118_args",
    "iso15118_schedule",
    "ns3_args",
    "parse_iso15118_output",
    "run_iso15118_reference",
    "run_process",
    "run_v2g",
    "run_v2g_flows",
    "vehicle_summary",
    "source_path",
    "vtlab_child_command",
]

#: The one-line message when the ``ns3`` wheel is missing.
NS3_MISSING = "ns-3 is not installed: pip install 'vtlab[ns3]'"

#: vtlab congestion-control name -> ns-3 TypeId (without the ``ns3::`` prefix), for
#: every algorithm both implement.
CC_TO_NS3: dict[str, str] = {
    "newreno": "TcpNewReno",
    "hybla": "TcpHybla",
    "highspeed": "TcpHighSpeed",
    "htcp": "TcpHtcp",
    "vegas": "TcpVegas",
    "scalable": "TcpScalable",
    "veno": "TcpVeno",
    "bic": "TcpBic",
    "illinois": "TcpIllinois",
    "westwood-plus": "TcpWestwoodPlus",
    "cubic": "TcpCubic",
    "yeah": "TcpYeah",
    "bbr": "TcpBbr",
}

#: ns-3 modules linked into the reference program.  Linking every ``libns3.44-*.so``
#: fails (config-store needs GTK, visualizer needs libpython).
NS3_MODULES: tuple[str, ...] = (
    "core",
    "network",
    "internet",
    "point-to-point",
    "applications",
    "traffic-control",
    "stats",
    "bridge",
)

#: Compiler flags before the include directory.
COMPILE_FLAGS: tuple[str, ...] = ("-std=c++20", "-O2")

#: Name of the compiled program inside its cache directory.
BINARY_NAME = "v2g"


class Ns3Error(RuntimeError):
    """ns-3 is missing, or the reference program failed to build or run."""


class Ns3NotInstalled(Ns3Error):
    """The ``ns3`` wheel is not installed in this Python environment."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(NS3_MISSING + (f" ({detail})" if detail else ""))


# -- locating ns-3 and the source ------------------------------------------------------


@dataclass(frozen=True)
class Ns3Install:
    """An installed ``ns3`` wheel."""

    root: Path  #: ``<site-packages>/ns3``
    version: str  #: distribution version, e.g. ``3.44.post0``

    @property
    def include(self) -> Path:
        return self.root / "include"

    @property
    def libdir(self) -> Path:
        lib64 = self.root / "lib64"
        return lib64 if lib64.is_dir() else self.root / "lib"

    @property
    def lib_version(self) -> str:
        """The version in the library names, e.g. ``3.44`` in ``libns3.44-core.so``."""
        m = re.match(r"\d+\.\d+", self.version)
        if m:
            return m.group(0)
        libs = sorted(self.libdir.glob("libns3.*-core.so"))
        if libs:
            return libs[0].name[len("libns") : -len("-core.so")]
        raise Ns3Error(f"cannot tell the ns-3 library version of {self.root}")


def find_ns3() -> Ns3Install:
    """The ``ns3`` wheel of the running Python, found through its distribution metadata
    (importing ``ns`` is not needed and can fail without cppyy's dependencies).

    Raises :class:`Ns3NotInstalled`.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution("ns3")
    except metadata.PackageNotFoundError:
        raise Ns3NotInstalled() from None
    root = Path(str(dist.locate_file("ns3")))
    if not (root / "include" / "ns3").is_dir():
        raise Ns3NotInstalled(f"no C++ headers under {root / 'include'}")
    return Ns3Install(root=root, version=dist.version)


def source_path() -> Path:
    """The reference program's source: ``$VTLAB_NS3_SOURCE``, else
    ``validation/ns3/v2g.cc`` of the source tree this module belongs to."""
    env = os.environ.get("VTLAB_NS3_SOURCE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "validation" / "ns3" / "v2g.cc"


def cache_root() -> Path:
    """``$VTLAB_CACHE``, else ``$XDG_CACHE_HOME/vtlab``, else ``~/.cache/vtlab``."""
    env = os.environ.get("VTLAB_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "vtlab"


# -- compiling ---------------------------------------------------------------------------


def compile_command(
    install: Ns3Install,
    source: Path,
    output: Path,
    modules: Sequence[str] = NS3_MODULES,
    link_flags: Sequence[str] = (),
) -> list[str]:
    """The g++ command that builds a reference program (see validation/ns3/README.md)
    against ``modules``, with extra ``link_flags`` before the rpath.

    ``--no-as-needed`` keeps every listed library loaded even though the program
    references none of its symbols directly, so that their TypeIds (every
    TcpCongestionOps, TcpSocketBase) get registered.
    """
    cxx = os.environ.get("CXX", "g++")
    libs = [f"-lns{install.lib_version}-{m}" for m in modules]
    return [
        cxx,
        *COMPILE_FLAGS,
        f"-I{install.include}",
        str(source),
        "-o",
        str(output),
        f"-L{install.libdir}",
        "-Wl,--no-as-needed",
        *libs,
        "-Wl,--as-needed",
        *link_flags,
        f"-Wl,-rpath,{install.libdir}",
    ]


@dataclass(frozen=True)
class Ns3Binary:
    """A compiled reference program."""

    path: Path
    build_hash: str  #: sha256 of the source, the compile command and the ns-3 version
    ns3_version: str
    source: Path
    command: tuple[str, ...]

    @property
    def short_hash(self) -> str:
        return self.build_hash[:16]

    @property
    def results_hash(self) -> str:
        """What the program's results depend on, independent of where the source and
        the ns-3 wheel are: sha256 over the source, the ns-3 version, the compile
        flags and the modules (16 hex digits).  Run caches key ns-3 runs by it, so a
        run made in one checkout is reused in another (and from the stored runs)."""
        try:
            source = self.source.read_bytes()
        except OSError:
            return self.short_hash
        return results_hash(source, self.ns3_version)


def results_hash(source_bytes: bytes, ns3_version: str) -> str:
    """:attr:`Ns3Binary.results_hash` of a source text and an ns-3 version."""
    h = hashlib.sha256()
    h.update(source_bytes)
    h.update(b"\0")
    h.update(json.dumps([ns3_version, *COMPILE_FLAGS, *NS3_MODULES]).encode())
    return h.hexdigest()[:16]


def build_hash(source_bytes: bytes, command: Sequence[str], ns3_version: str) -> str:
    """sha256 over the source, the compile command (output path left out) and the
    ns-3 version."""
    h = hashlib.sha256()
    h.update(source_bytes)
    h.update(b"\0")
    h.update(json.dumps([ns3_version, *command]).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Program:
    """A reference program: how to find its source, link it and cache it."""

    label: str  #: for messages: "reference program", "LTE program"
    source: Callable[[], Path]  #: the default source path
    env: str  #: the environment variable that overrides it
    binary_name: str
    cache_dir: str  #: under the cache root
    modules: tuple[str, ...] = NS3_MODULES
    link_flags: tuple[str, ...] = ()

    def command(self, install: Ns3Install, source: Path, output: Path) -> list[str]:
        return compile_command(install, source, output, self.modules, self.link_flags)


def build_program(
    program: Program,
    *,
    source: Path | None = None,
    cache: Path | None = None,
    rebuild: bool = False,
    log: Callable[[str], None] | None = None,
    output: Path | None = None,
) -> Ns3Binary:
    """Compile ``program`` unless the cached binary is current.

    The binary goes to ``output`` if given, else to
    ``<cache>/<program.cache_dir>/<build hash>/<program.binary_name>`` (``cache``
    defaults to :func:`cache_root`); the hash covers the source, the compile command
    and the ns-3 version. Compilation (about 10 s) writes to a temporary name and
    renames, so concurrent callers are safe.  ``log`` receives a line before
    compiling.  Raises :class:`Ns3NotInstalled` or :class:`Ns3Error`.
    """
    install = find_ns3()
    src = Path(source) if source is not None else program.source()
    try:
        src_bytes = src.read_bytes()
    except OSError as exc:
        raise Ns3Error(
            f"cannot read the ns-3 {program.label} {src}: {exc.strerror or exc} "
            f"(set {program.env} to validation/ns3/{program.source().name} of a vtlab checkout)"
        ) from None
    placeholder = Path(program.binary_name)
    digest = build_hash(src_bytes, program.command(install, src, placeholder), install.version)
    if output is not None:
        binary = Path(output)
    else:
        root = Path(cache) if cache is not None else cache_root()
        binary = root / program.cache_dir / digest / program.binary_name
    command = program.command(install, src, binary)
    result = Ns3Binary(binary, digest, install.version, src, tuple(command))
    stamp = binary.with_name(binary.name + ".hash")
    current = binary.is_file() and os.access(binary, os.X_OK)
    if current and output is not None:
        current = stamp.is_file() and stamp.read_text().strip() == digest
    if current and not rebuild:
        return result

    if shutil.which(command[0]) is None:
        raise Ns3Error(f"C++ compiler '{command[0]}' not found (install g++ or set CXX)")
    binary.parent.mkdir(parents=True, exist_ok=True)
    tmp = binary.with_name(f".{binary.name}.{os.getpid()}.tmp")
    tmp_command = program.command(install, src, tmp)
    if log is not None:
        log(f"compiling the ns-3 {program.label} (about 10 s): {shlex.join(command)}")
    proc = subprocess.run(tmp_command, capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        tail = " | ".join(proc.stderr.strip().splitlines()[-5:])
        raise Ns3Error(f"compiling {src} failed (exit {proc.returncode}): {tail}")
    os.replace(tmp, binary)
    stamp.write_text(digest + "\n")
    binary.with_name(binary.name + ".command.txt").write_text(shlex.join(command) + "\n")
    return result


#: The V2G reference program, validation/ns3/v2g.cc.
V2G_PROGRAM = Program(
    "reference program", lambda: source_path(), "VTLAB_NS3_SOURCE", BINARY_NAME, "ns3"
)

#: The 802.11 vehicular chain, validation/ns3/wifi.cc ($VTLAB_NS3_WIFI_SOURCE overrides
#: the path; see validation/ns3/README-wifi.md). ``libns3.44-wifi.so`` brings in
#: spectrum, energy, antenna and propagation through its own NEEDED entries.
WIFI_PROGRAM = Program(
    "Wi-Fi program",
    lambda: Path(
        os.environ.get("VTLAB_NS3_WIFI_SOURCE")
        or Path(__file__).resolve().parents[2] / "validation" / "ns3" / "wifi.cc"
    ),
    "VTLAB_NS3_WIFI_SOURCE",
    "wifi",
    "ns3-wifi",
    (
        "core",
        "network",
        "internet",
        "applications",
        "mobility",
        "propagation",
        "wifi",
        "traffic-control",
    ),
)


#: The request/response (ISO 15118-style) session over the charging cable,
#: validation/ns3/iso15118.cc ($VTLAB_NS3_ISO_SOURCE overrides the path; see
#: validation/ns3/README-iso15118.md and :func:`run_iso15118_reference`).
ISO15118_PROGRAM = Program(
    "ISO 15118 session program",
    lambda: Path(
        os.environ.get("VTLAB_NS3_ISO_SOURCE")
        or Path(__file__).resolve().parents[2] / "validation" / "ns3" / "iso15118.cc"
    ),
    "VTLAB_NS3_ISO_SOURCE",
    "iso15118",
    "ns3-iso15118",
    ("core", "network", "internet", "point-to-point", "traffic-control"),
)


def ensure_binary(
    *,
    source: Path | None = None,
    cache: Path | None = None,
    rebuild: bool = False,
    log: Callable[[str], None] | None = None,
    output: Path | None = None,
) -> Ns3Binary:
    """Compile the V2G reference program unless the cached binary is current
    (:func:`build_program`): ``<cache>/ns3/<build hash>/v2g`` by default."""
    return build_program(
        V2G_PROGRAM, source=source, cache=cache, rebuild=rebuild, log=log, output=output
    )


# -- running -----------------------------------------------------------------------------


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


def run_v2g(
    binary: Path | Ns3Binary, args: Sequence[str], *, measure: bool = False
) -> tuple[dict[str, Any], ProcResult]:
    """Run the reference program with ``args``; return its (single) flow row and the
    process measurements (wall time only, unless ``measure``: then also peak RSS and
    CPU time, see :func:`run_process`).  Raises :class:`Ns3Error` when it fails."""
    rows, proc = run_v2g_flows(binary, args, measure=measure)
    if len(rows) != 1:
        raise Ns3Error(f"{shlex.join(proc.args)} printed {len(rows)} flow rows, expected 1")
    return rows[0], proc


def run_v2g_flows(
    binary: Path | Ns3Binary, args: Sequence[str], *, measure: bool = False
) -> tuple[list[dict[str, Any]], ProcResult]:
    """:func:`run_v2g` for any number of flows (the station prints one row per
    vehicle): every flow row, in flow order, and the process measurements."""
    path = binary.path if isinstance(binary, Ns3Binary) else Path(binary)
    cmd = [str(path), *args]
    if measure:
        proc = run_process(cmd)
    else:
        started = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        proc = ProcResult(p.returncode, p.stdout, p.stderr, wall, math.nan, math.nan)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise Ns3Error(f"{shlex.join(cmd)} exited with {proc.returncode}: {tail}")
    rows = parse_flow_lines(proc.stdout)
    if not rows:
        raise Ns3Error(f"{shlex.join(cmd)} printed no flow rows")
    proc.args = tuple(cmd)
    return rows, proc


# -- request/response sessions (validation/ns3/iso15118.cc) -----------------------------

#: One step of a session schedule: (name, request bytes, response bytes, timeout in s,
#: repeats, period in s), as validation/ns3/README-iso15118.md describes.
SessionStep = tuple[str, int, int, float, int, float]


def iso15118_schedule(schedule: Sequence[SessionStep]) -> str:
    """The ``--schedule`` argument: ``name:req:resp:timeout:repeats:period;...``.
    Raises :class:`ValueError` for a step the program would refuse."""
    if not schedule:
        raise ValueError("schedule: at least one step")
    items = []
    for step in schedule:
        if len(step) != 6:
            raise ValueError(
                f"schedule step {step!r}: want (name, req, resp, timeout, repeats, period)"
            )
        name, req, resp, timeout, repeats, period = step
        if not name or any(c in name for c in ":;"):
            raise ValueError(
                f"schedule step {step!r}: the name must be non-empty without ':' or ';'"
            )
        if int(req) < 1 or int(resp) < 1 or int(repeats) < 1:
            raise ValueError(f"schedule step {step!r}: sizes and repeats must be 1 or more")
        if not float(timeout) > 0 or not float(period) >= 0:
            raise ValueError(f"schedule step {step!r}: timeout must be > 0 and period >= 0")
        items.append(f"{name}:{int(req)}:{int(resp)}:{_num(timeout)}:{int(repeats)}:{_num(period)}")
    return ";".join(items)


def iso15118_args(
    *,
    schedule: Sequence[SessionStep],
    seed: int,
    loss: float = 0.0,
    reverse_loss: float = 0.0,
    cc: str = "newreno",
    timestamps: bool = True,
    abort_on_miss: bool = False,
    stop_s: float | None = None,
    loss_start_s: float = 0.0,
) -> list[str]:
    """The command line of the ISO 15118 session program (without the binary):
    ``seed`` is ns-3's RngRun (RngSeed stays 1, as for v2g.cc), ``loss`` the mean
    loss toward the EVCC, ``reverse_loss`` toward the SECC, ``cc`` a vtlab name
    (:data:`CC_TO_NS3`) or an ns-3 TypeId suffix; ``loss_start_s`` > 0 keeps both
    error models off until that simulated time (``--lossStart``, for tests that
    need the handshake through)."""
    ns3_cc = CC_TO_NS3.get(cc, cc)
    if ns3_cc not in CC_TO_NS3.values():
        raise ValueError(f"cc: '{cc}' has no ns-3 counterpart (ns-3 has: {', '.join(CC_TO_NS3)})")
    for label, value in (("loss", loss), ("reverse_loss", reverse_loss)):
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"{label}: {value!r} is not in [0, 1]")
    args = [
        f"--schedule={iso15118_schedule(schedule)}",
        f"--run={int(seed)}",
        f"--loss={_num(loss)}",
        f"--reverseLoss={_num(reverse_loss)}",
        f"--cc={ns3_cc}",
        f"--timestamps={'true' if timestamps else 'false'}",
        f"--abortOnMiss={'true' if abort_on_miss else 'false'}",
    ]
    if stop_s is not None:
        if not float(stop_s) > 0:
            raise ValueError(f"stop_s: {stop_s!r} must be positive")
        args.append(f"--stop={_num(stop_s)}")
    if loss_start_s:
        if not float(loss_start_s) > 0:
            raise ValueError(f"loss_start_s: {loss_start_s!r} must not be negative")
        args.append(f"--lossStart={_num(loss_start_s)}")
    return args


def parse_iso15118_output(stdout: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Split the program's JSON lines into the per-request rows (in order) and the
    summary line.  Raises :class:`Ns3Error` if the summary is missing."""
    messages: list[dict[str, Any]] = []
    summary: dict[str, Any] | None = None
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        if d.get("summary") is True:
            summary = d
        else:
            messages.append(d)
    if summary is None:
        raise Ns3Error("the ISO 15118 session program printed no summary line")
    return messages, summary


def run_iso15118_reference(
    *,
    schedule: Sequence[SessionStep],
    seed: int,
    loss: float = 0.0,
    reverse_loss: float = 0.0,
    cc: str = "newreno",
    timestamps: bool = True,
    abort_on_miss: bool = False,
    stop_s: float | None = None,
    loss_start_s: float = 0.0,
    cache: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run the ns-3 request/response session (validation/ns3/iso15118.cc, compiled on
    demand by :func:`build_program` into ``<cache>/ns3-iso15118/<hash>/iso15118``).

    Returns ``(messages, summary)``: ``messages`` has one dict per request written,
    in order, with the keys ``index`` (from 0), ``name``, ``request_s`` and
    ``response_s`` (simulator clock, i.e. including the 0.1 s start; ``response_s``
    None if no response came), ``response_time_s`` (None likewise) and ``missed``;
    ``summary`` is the program's summary line (``completed``, ``messages``,
    ``misses``, ``wall_s`` of the contract, and ``aborted``, ``end`` (why the
    session ended: completed, aborted, stop, connection_failed, ...), ``end_s``,
    ``connected_s``, ``scheduled``) plus the process's ``process_wall_s`` and
    ``max_rss_mib`` (:func:`run_process`).  Raises :class:`ValueError` for bad
    arguments, :class:`Ns3Error` (or :class:`Ns3NotInstalled`) when ns-3 fails.
    """
    args = iso15118_args(
        schedule=schedule,
        seed=seed,
        loss=loss,
        reverse_loss=reverse_loss,
        cc=cc,
        timestamps=timestamps,
        abort_on_miss=abort_on_miss,
        stop_s=stop_s,
        loss_start_s=loss_start_s,
    )
    binary = build_program(ISO15118_PROGRAM, cache=cache, log=log)
    cmd = [str(binary.path), *args]
    proc = run_process(cmd)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise Ns3Error(f"{shlex.join(cmd)} exited with {proc.returncode}: {tail}")
    messages, summary = parse_iso15118_output(proc.stdout)
    summary = {**summary, "process_wall_s": proc.wall_s, "max_rss_mib": proc.max_rss_mib}
    return messages, summary


# -- scenario translation ----------------------------------------------------------------

#: ns-3 settings that v2g.cc leaves at ns-3's defaults; a vtlab scenario must match them.
_NS3_FIXED: dict[str, Any] = {
    "profile": "ns3",
    "header_bytes": 40,
    "dupack_threshold": 3,
    "limited_transmit": True,
    "rto_initial_ns": 1_000_000_000,
    "rto_max_ns": 60_000_000_000,
    "clock_granularity_ns": 1_000_000,
    "syn_timeout_ns": 3_000_000_000,
}


def _num(x: float) -> str:
    """A number for the ns-3 command line: 12 significant digits (so that 5 % is
    ``0.05``, not ``0.04999999999999982``), without a trailing ``.0``."""
    return format(float(x), ".12g")


def _wifi_reference(
    expanded: Mapping[str, Any], seed: int, log: Callable[[str], None] | None
) -> tuple[list[str], Ns3Binary, Callable[[], tuple[list[dict[str, Any]], ProcResult]]]:
    """The ns-3 Wi-Fi program's arguments, binary and one timed run, for a
    ``vanet-chain`` scenario (``vtlab bench vanet-chain --vs-ns3``)."""
    from vtlab.validate_wifi import parse_result, wifi_args

    try:
        args = wifi_args(expanded, seed)
    except ValueError as exc:
        raise Ns3Error(str(exc)) from None
    binary = build_program(WIFI_PROGRAM, log=log)
    rule = expanded["media"][0]["wifi"]["reception"]["model"]
    if rule != "dsss-ber" and log is not None:
        log(
            f"note: vtlab receives frames by the {rule} rule, ns-3 by its DSSS error rates "
            "(--set 'wifi.reception={model=\"dsss-ber\",preamble_snr_db=4}' for the same rule; "
            "docs/validation.md)"
        )

    def run() -> tuple[list[dict[str, Any]], ProcResult]:
        proc = run_process([str(binary.path), *args])
        if proc.returncode != 0:
            tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
            raise Ns3Error(f"the ns-3 Wi-Fi program failed (exit {proc.returncode}): {tail}")
        res = parse_result(proc.stdout)
        row = {
            "goodput_bps": res["goodput_bps"],
            "completion_s": math.nan,  # runs for the scenario's duration, as vtlab's
            "packets_sent_data": res["tcp_data_segments"],
            "wall_s": res["wall_s"],
        }
        return [row], proc

    return args, binary, run


def ns3_args(expanded: Mapping[str, Any], seed: int) -> list[str]:
    """Arguments of ``v2g`` for a resolved vtlab scenario (``Scenario.expand()``) and a
    seed (passed as ``--run``; the ns-3 RngSeed stays 1).

    Two topologies are supported:

    * preset ``v2g``, the single vehicle: SA -- WAN -- SECC -- PLC -- EVCC, burst loss on
      the PLC data direction (``--vehicles=1``, the program's default);
    * preset ``station`` with at least 2 vehicles: SA -- WAN -- switch -- PLC segment j --
      seg j -- access -- ev i, burst loss on each access hop toward the vehicle
      (``--vehicles=N --perSegment=k --stagger=s --accessRate --accessDelay``).

    Anything the reference program cannot reproduce raises :class:`ValueError`
    naming the field.
    """
    if expanded.get("preset") == "station" or "switch" in expanded.get("nodes", []):
        return _station_args(expanded, seed)
    nodes = list(expanded.get("nodes", []))
    links = {link["name"]: link for link in expanded.get("links", [])}
    flows = list(expanded.get("flows", []))
    if nodes != ["sa", "secc", "evcc"] or set(links) != {"wan", "plc"} or len(flows) != 1:
        raise ValueError(
            "the ns-3 reference program models the single-vehicle V2G topology "
            "(preset v2g: sa -- wan -- secc -- plc -- evcc, one flow sa -> evcc) and the "
            "charging station (preset station, at least 2 vehicles)"
        )
    wan, plc = links["wan"], links["plc"]
    flow = flows[0]
    if (wan["a"], wan["b"], plc["a"], plc["b"]) != ("sa", "secc", "secc", "evcc") or (
        flow["src"],
        flow["dst"],
    ) != ("sa", "evcc"):
        raise ValueError("the ns-3 reference program needs the v2g link and flow directions")
    _same_link_template([wan, plc])
    for name, model in (
        ("wan.loss_ab", wan["loss_ab"]),
        ("wan.loss_ba", wan["loss_ba"]),
        ("plc.loss_ba", plc["loss_ba"]),
    ):
        if model.get("model") != "none":
            raise ValueError(f"links.{name}: ns-3 reference applies loss on the PLC data side")
    return _common_args(flow, _loss_args("plc.loss_ab", plc["loss_ab"]), seed, wan, plc)


def _same_link_template(links: Sequence[Mapping[str, Any]]) -> None:
    """Every link must share queue size, MTU and framing (one value in ns-3)."""
    for name in ("queue_packets", "mtu_bytes", "framing_bytes"):
        if len({link[name] for link in links}) != 1:
            raise ValueError(f"links.{name}: ns-3 reference uses one value for every link")
    if len({json.dumps(link.get("qdisc"), sort_keys=True) for link in links}) != 1:
        raise ValueError("links.qdisc: ns-3 reference uses one queue disc on every link")
    if links[0]["framing_bytes"] != 2:
        raise ValueError("links.framing_bytes: ns-3 point-to-point frames add 2 bytes (PPP)")


def _qdisc_args(link: Mapping[str, Any]) -> list[str]:
    """``--qdisc`` of the reference program: none, or what stock ns-3.44 installs
    (FqCoDel at its defaults, quantum = MTU, flow control with the device queue)."""
    q = link.get("qdisc")
    if q is None:
        return ["--qdisc=none"]
    stock = {
        "kind": "fq_codel",
        "limit_packets": 10240,
        "flows": 1024,
        "drop_batch_size": 64,
        "quantum": link["mtu_bytes"],
        "interval": 100_000_000,
        "target": 5_000_000,
        "min_bytes": 1500,
    }
    if dict(q) == stock:
        return ["--qdisc=default"]
    raise ValueError(
        "links.qdisc: the ns-3 reference runs no queue disc (none) or ns-3's default "
        f"fq_codel with its default attributes, not {q.get('kind')!r} as given"
    )


def _loss_args(where: str, loss: Mapping[str, Any]) -> list[str]:
    if loss.get("model") == "none":
        return ["--meanLoss=0"]
    if loss.get("model") == "burst" and (loss.get("burst_min"), loss.get("burst_max")) == (1, 4):
        # The resolved burst-start probability itself, at full precision (repr
        # round-trips a double), so both simulators draw against the same p.
        if loss["burst_start"] == 0:
            return ["--meanLoss=0"]
        return [f"--burstRate={float(loss['burst_start'])!r}"]
    raise ValueError(f"links.{where}: ns-3 reference supports the burst model with bursts of 1..4")


def _common_args(
    flow: Mapping[str, Any],
    loss_args: list[str],
    seed: int,
    wan: Mapping[str, Any],
    plc: Mapping[str, Any],
) -> list[str]:
    """The flags both topologies share: TCP, loss, size, seed, WAN and PLC links."""
    tcp = flow["tcp"]
    for name, want in _NS3_FIXED.items():
        if tcp.get(name) != want:
            raise ValueError(f"tcp.{name}: must be {want!r} to compare with ns-3")
    cc = tcp["cc"]
    if cc not in CC_TO_NS3:
        raise ValueError(
            f"tcp.cc: '{cc}' has no ns-3 counterpart (ns-3 has: {', '.join(CC_TO_NS3)})"
        )
    if tcp.get("cc_params"):
        raise ValueError("tcp.cc_params: the ns-3 reference runs every algorithm at its defaults")
    recovery = tcp["recovery"]
    if recovery == "sack":
        rec_args = ["--sack=true", f"--recovery={'prr' if tcp['prr'] else 'classic'}"]
    elif recovery == "newreno":
        rec_args = ["--sack=false", "--recovery=classic"]
    else:
        raise ValueError(f"tcp.recovery: '{recovery}' has no ns-3 counterpart (sack, newreno)")
    del_ack_count = tcp["delayed_ack_count"] if tcp["delayed_ack"] else 1
    args = [
        f"--cc={CC_TO_NS3[cc]}",
        *loss_args,
        f"--bytes={int(flow['bytes'])}",
        f"--run={int(seed)}",
        *rec_args,
        f"--timestamps={'true' if tcp['timestamps'] else 'false'}",
        f"--delAckCount={del_ack_count}",
        f"--delAckTimeout={_num(tcp['delayed_ack_timeout_ns'] / 1e9)}",
        f"--initialCwnd={tcp['initial_cwnd']}",
        f"--minRto={_num(tcp['rto_min_ns'] / 1e9)}",
        f"--sndBuf={tcp['send_buffer']}",
        f"--rcvBuf={tcp['recv_buffer']}",
        f"--segmentSize={tcp['mss']}",
        f"--mtu={plc['mtu_bytes']}",
        f"--queuePackets={plc['queue_packets']}",
        *_qdisc_args(plc),
        f"--plcRate={_num(plc['rate_bps'] / 1e6)}",
        f"--wanRate={_num(wan['rate_bps'] / 1e6)}",
        f"--plcDelay={_num(plc['delay_ns'] / 1e6)}",
        f"--wanDelay={_num(wan['delay_ns'] / 1e6)}",
    ]
    if tcp.get("initial_ssthresh") is not None:
        args.append(f"--initialSsthresh={int(tcp['initial_ssthresh'])}")
    return args


def _station_args(expanded: Mapping[str, Any], seed: int) -> list[str]:
    """:func:`ns3_args` for preset ``station`` (N >= 2 vehicles, k per segment)."""
    links = {link["name"]: link for link in expanded.get("links", [])}
    flows = list(expanded.get("flows", []))
    n = len(flows)
    if n < 2:
        raise ValueError(
            "vehicles: the ns-3 reference program builds the charging station for 2 or "
            "more vehicles (with --vehicles=1 it is the v2g topology; use preset v2g)"
        )
    plcs = [links.get(f"plc{j}") for j in range(1, len(links) + 1)]
    plcs = [p for p in plcs if p is not None]
    access = [links.get(f"access{i}") for i in range(1, n + 1)]
    wan = links.get("wan")
    if (
        wan is None
        or any(a is None for a in access)
        or len(links) != 1 + len(plcs) + n
        or (wan["a"], wan["b"]) != ("sa", "switch")
    ):
        raise ValueError(
            "the ns-3 reference program needs the station links: wan (sa -> switch), "
            "plc1..plcS (switch -> segj), access1..accessN (segj -> evi)"
        )
    per_segment = sum(1 for a in access if a is not None and a["a"] == "seg1")
    segments = math.ceil(n / per_segment) if per_segment else 0
    ok = per_segment > 0 and len(plcs) == segments
    for j, p in enumerate(plcs, start=1):
        ok = ok and (p["a"], p["b"]) == ("switch", f"seg{j}")
    for i, a in enumerate(access, start=1):
        assert a is not None
        ok = ok and (a["a"], a["b"]) == (f"seg{(i - 1) // max(per_segment, 1) + 1}", f"ev{i}")
    for i, f in enumerate(flows, start=1):
        ok = ok and (f["src"], f["dst"]) == ("sa", f"ev{i}")
    if not ok:
        raise ValueError(
            "the ns-3 reference program needs vehicles ev1..evN on segments of k "
            "consecutive vehicles and one flow sa -> ev i each"
        )
    all_links: list[Mapping[str, Any]] = [wan, *plcs, *(a for a in access if a is not None)]
    _same_link_template(all_links)
    for group, name in ((plcs, "plc"), (access, "access")):
        for field_name in ("rate_bps", "delay_ns"):
            if len({g[field_name] for g in group if g is not None}) != 1:
                raise ValueError(f"links.{name}*.{field_name}: ns-3 reference uses one value")
    for link in (wan, *plcs):
        for side in ("loss_ab", "loss_ba"):
            if link[side].get("model") != "none":
                raise ValueError(
                    f"links.{link['name']}.{side}: ns-3 reference applies loss on the access "
                    "hops toward the vehicles"
                )
    first = access[0]
    assert first is not None
    for a in access:
        assert a is not None
        if a["loss_ab"] != first["loss_ab"]:
            raise ValueError("links.access*.loss_ab: ns-3 reference uses one loss model")
        if a["loss_ba"].get("model") != "none":
            raise ValueError(f"links.{a['name']}.loss_ba: ns-3 reference has no reverse loss here")
    flow = flows[0]
    stagger_ns = flows[1]["start_ns"] - flows[0]["start_ns"]
    for i, f in enumerate(flows):
        if f["start_ns"] != i * stagger_ns:
            raise ValueError("flows.start: ns-3 reference starts flow i at i x stagger")
        if f["bytes"] != flow["bytes"] or f["tcp"] != flow["tcp"]:
            raise ValueError(f"flows.{f['name']}: ns-3 reference uses one size and TCP setup")
    args = _common_args(flow, _loss_args("access1.loss_ab", first["loss_ab"]), seed, wan, plcs[0])
    return [
        *args,
        f"--vehicles={n}",
        f"--perSegment={per_segment}",
        f"--stagger={_num(stagger_ns / 1e9)}",
        f"--accessRate={_num(first['rate_bps'] / 1e6)}",
        f"--accessDelay={_num(first['delay_ns'] / 1e6)}",
    ]


# -- speed and memory versus ns-3 ----------------------------------------------------

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


def vehicle_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-vehicle statistics of one run's flow rows (either side).

    Each row needs ``goodput_bps`` and ``completion_s``; ``start_s`` (default 0) is the
    flow's start.  Returns ``vehicles``, ``goodput_bps`` (mean over vehicles),
    ``goodput_min_bps``, ``goodput_max_bps``, ``jain`` (Jain's fairness index of the
    goodputs) and ``aggregate_goodput_bps``: every byte received × 8 / (arrival of the
    last byte of any flow − start of the first flow).

    >>> s = vehicle_summary([{"goodput_bps": 4.0, "completion_s": 2.0, "start_s": 0.0},
    ...                      {"goodput_bps": 2.0, "completion_s": 3.0, "start_s": 1.0}])
    >>> s["goodput_bps"], s["aggregate_goodput_bps"], round(s["jain"], 3)
    (3.0, 3.5, 0.9)
    """
    if not rows:
        raise ValueError("vehicle_summary needs at least one flow row")
    goodputs = [float(r["goodput_bps"]) for r in rows]
    starts = [float(r.get("start_s") or 0.0) for r in rows]
    ends = [s + float(r["completion_s"]) for s, r in zip(starts, rows, strict=True)]
    bits = sum(g * float(r["completion_s"]) for g, r in zip(goodputs, rows, strict=True))
    span = max(ends) - min(starts)
    squares = sum(g * g for g in goodputs)
    return {
        "vehicles": len(rows),
        "goodput_bps": sum(goodputs) / len(goodputs),
        "goodput_min_bps": min(goodputs),
        "goodput_max_bps": max(goodputs),
        "jain": sum(goodputs) ** 2 / (len(goodputs) * squares) if squares else math.nan,
        "aggregate_goodput_bps": bits / span if span > 0 else math.nan,
    }


def core_dir() -> str:
    """The directory of the compiled ``vtlab._core`` (argv[1] of :data:`VTLAB_CHILD`)."""
    from vtlab import _core

    return str(Path(_core.__file__).resolve().parent)


def vtlab_child_command(spec_json: str, seed: int, directory: str | None = None) -> list[str]:
    """The command that runs one vtlab simulation in a lean child process."""
    return [
        sys.executable,
        "-S",  # no site: the child needs only the standard library and the core
        "-I",
        "-c",
        VTLAB_CHILD,
        directory if directory is not None else core_dir(),
        spec_json,
        str(int(seed)),
    ]


@dataclass
class BenchSide:
    """Repeated runs of one side (``vtlab`` or ``ns-3``)."""

    name: str
    wall_s: list[float] = field(default_factory=list)  #: process wall time per run
    inner_wall_s: list[float] = field(default_factory=list)  #: simulation-only wall time
    max_rss_mib: list[float] = field(default_factory=list)  #: peak RSS per run
    goodput_bps: float = math.nan  #: per flow (several flows: the mean over flows)
    completion_s: float = math.nan  #: the longest flow's
    segments_sent: int = 0  #: data segments sent by TCP, retransmissions included (all flows)
    flows: int = 1
    aggregate_goodput_bps: float = math.nan  #: see :func:`vehicle_summary`

    def record(self, rows: Sequence[Mapping[str, Any]], segments_key: str) -> None:
        """Take the goodput, completion and segment count of one run's flow rows."""
        summary = vehicle_summary(rows)
        self.flows = len(rows)
        self.goodput_bps = summary["goodput_bps"]
        self.aggregate_goodput_bps = summary["aggregate_goodput_bps"]
        self.completion_s = max(float(r["completion_s"]) for r in rows)
        self.segments_sent = sum(int(r.get(segments_key) or 0) for r in rows)

    @property
    def median_wall_s(self) -> float:
        return statistics.median(self.wall_s)

    @property
    def median_inner_wall_s(self) -> float:
        return statistics.median(self.inner_wall_s)

    @property
    def peak_rss_mib(self) -> float:
        return max(self.max_rss_mib)


@dataclass
class VsNs3Result:
    """Result of :func:`bench_vs_ns3`."""

    scenario_hash: str
    seed: int
    vtlab_version: str
    ns3_version: str
    ns3_args: list[str]
    vtlab: BenchSide
    ns3: BenchSide
    events: int
    packets: int
    baseline_rss_mib: float  #: peak RSS of the same Python child without running anything

    @property
    def speedup(self) -> float:
        """ns-3 process wall time / vtlab process wall time (medians)."""
        return self.ns3.median_wall_s / self.vtlab.median_wall_s

    @property
    def inner_speedup(self) -> float:
        """ns-3 / vtlab, simulation time only (vtlab: the ``_core.run`` call; ns-3:
        the program's own wall time from ``main`` to the end, library loading excluded)."""
        return self.ns3.median_inner_wall_s / self.vtlab.median_inner_wall_s

    @property
    def per_segment_speedup(self) -> float:
        """:attr:`inner_speedup` per data segment sent: the two sides' runs differ in
        how many segments they send (different random streams, different recovery)."""
        v, n = self.vtlab, self.ns3
        if not (v.segments_sent and n.segments_sent):
            return math.nan
        return (n.median_inner_wall_s / n.segments_sent) / (v.median_inner_wall_s / v.segments_sent)

    @property
    def memory_ratio(self) -> float:
        """ns-3 peak RSS / vtlab peak RSS (whole processes)."""
        return self.ns3.peak_rss_mib / self.vtlab.peak_rss_mib

    @property
    def events_per_s(self) -> float:
        return self.events / self.vtlab.median_inner_wall_s

    @property
    def packets_per_s(self) -> float:
        return self.packets / self.vtlab.median_inner_wall_s

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            speedup=self.speedup,
            inner_speedup=self.inner_speedup,
            per_segment_speedup=self.per_segment_speedup,
            memory_ratio=self.memory_ratio,
            events_per_s=self.events_per_s,
            packets_per_s=self.packets_per_s,
        )
        return d

    def summary_lines(self) -> list[str]:
        """A human-readable summary (what ``vtlab bench --vs-ns3`` prints)."""
        v, n = self.vtlab, self.ns3
        runs = len(v.wall_s)

        def walls(side: BenchSide) -> str:
            return ", ".join(f"{w:.3f}" for w in side.wall_s)

        if v.flows > 1:
            goodput = (
                f"goodput      per vehicle (mean of {v.flows}) vtlab {v.goodput_bps / 1e6:.3f}  "
                f"ns-3 {n.goodput_bps / 1e6:.3f} Mbit/s; aggregate vtlab "
                f"{v.aggregate_goodput_bps / 1e6:.3f}  ns-3 {n.aggregate_goodput_bps / 1e6:.3f} "
                "Mbit/s (same parameters, different RNG streams)"
            )
        else:
            goodput = (
                f"goodput      vtlab {v.goodput_bps / 1e6:.3f} Mbit/s  "
                f"ns-3 {n.goodput_bps / 1e6:.3f} Mbit/s (same parameters, different RNG streams)"
            )
        return [
            f"scenario {self.scenario_hash} · seed/run {self.seed} · {runs} runs per side · "
            f"vtlab {self.vtlab_version} · ns-3 {self.ns3_version}",
            f"ns-3 args    {' '.join(self.ns3_args)}",
            f"wall/run     vtlab {v.median_wall_s:.3f} s ({walls(v)})  "
            f"ns-3 {n.median_wall_s:.3f} s ({walls(n)})  -> {self.speedup:,.1f}x",
            f"sim only     vtlab {v.median_inner_wall_s * 1e3:.1f} ms  "
            f"ns-3 {n.median_inner_wall_s * 1e3:.1f} ms  -> {self.inner_speedup:,.1f}x "
            f"({self.per_segment_speedup:,.1f}x per data segment: vtlab sent "
            f"{v.segments_sent:,}, ns-3 {n.segments_sent:,})",
            f"peak RSS     vtlab {v.peak_rss_mib:.1f} MiB (Python + core; bare interpreter "
            f"with the core imported: {self.baseline_rss_mib:.1f} MiB)  "
            f"ns-3 {n.peak_rss_mib:.1f} MiB  -> {self.memory_ratio:.2f}x",
            f"vtlab rate   {self.events:,} events ({self.events_per_s / 1e6:.2f} M events/s), "
            f"{self.packets:,} link transmissions ({self.packets_per_s / 1e6:.2f} M packets/s)",
            goodput,
        ]


def bench_vs_ns3(
    scenario: Any = None,
    *,
    seed: int = 1,
    repeat: int = 3,
    log: Callable[[str], None] | None = None,
) -> VsNs3Result:
    """Run the same scenario ``repeat`` times on each side, each run in its own child
    process, and measure wall time and peak memory (``ru_maxrss`` via ``os.wait4``).

    ``scenario`` is anything :meth:`vtlab.Scenario.coerce` accepts; the default is the
    bench scenario (NewReno, 100 MB, single-vehicle V2G, 5 % mean loss);
    :data:`BENCH_STATION_SPEC` is the 21-vehicle charging station.  It is translated
    with :func:`ns3_args`; the vtlab child imports only ``vtlab._core``.  With several
    flows, goodput is the mean over flows (plus the aggregate, see
    :func:`vehicle_summary`) and the segment count the sum.
    The sides alternate (vtlab, ns-3, vtlab, ...) so that machine load hits both.
    """
    from vtlab import _core
    from vtlab.bench import DEFAULT_BENCH_SPEC
    from vtlab.scenario import Scenario

    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    sc = Scenario.coerce(scenario if scenario is not None else dict(DEFAULT_BENCH_SPEC))
    expanded = json.loads(sc.expanded_json())
    if expanded.get("preset") == "vanet-chain":
        args, binary, run_ns3 = _wifi_reference(expanded, seed, log)
    else:
        args = ns3_args(expanded, seed)
        binary = ensure_binary(log=log)

        def run_ns3() -> tuple[list[dict[str, Any]], ProcResult]:
            return run_v2g_flows(binary, args, measure=True)

    spec_json = sc.to_json()
    child = vtlab_child_command(spec_json, seed)
    baseline = run_process([*child[:4], VTLAB_CHILD.split("spec = ")[0], child[5]])
    if baseline.returncode != 0:
        raise RuntimeError(f"the vtlab child failed: {baseline.stderr.strip()[-500:]}")

    vt, ns = BenchSide("vtlab"), BenchSide("ns-3")
    events = packets = 0
    scenario_hash = ""
    for _ in range(repeat):
        proc = run_process(child)
        if proc.returncode != 0:
            raise RuntimeError(f"the vtlab child failed: {proc.stderr.strip()[-500:]}")
        d = json.loads(proc.stdout.strip().splitlines()[-1])
        vt.wall_s.append(proc.wall_s)
        vt.inner_wall_s.append(d["call_wall_s"])
        vt.max_rss_mib.append(proc.max_rss_mib)
        vt.record(d.get("flows") or [d["flow"]], "segments_sent")
        events, packets = d["meta"]["events"], d["meta"]["packets"]
        scenario_hash = d["meta"]["scenario_hash"]

        rows, proc = run_ns3()
        ns.wall_s.append(proc.wall_s)
        ns.inner_wall_s.append(float(rows[0]["wall_s"]))
        ns.max_rss_mib.append(proc.max_rss_mib)
        ns.record(rows, "packets_sent_data")
        if log is not None:
            log(
                f"run {len(vt.wall_s)}/{repeat}: vtlab {vt.wall_s[-1]:.3f} s, "
                f"ns-3 {ns.wall_s[-1]:.3f} s"
            )

    return VsNs3Result(
        scenario_hash=scenario_hash,
        seed=seed,
        vtlab_version=_core.version(),
        ns3_version=binary.ns3_version,
        ns3_args=args,
        vtlab=vt,
        ns3=ns,
        events=events,
        packets=packets,
        baseline_rss_mib=baseline.max_rss_mib,
    )


#: The charging-station bench scenario (issue 5's second one): 21 vehicles, 3 per PLC
#: segment, NewReno, 100 MB each, 5 % mean loss per vehicle.  On the command line:
#: ``vtlab bench station --vs-ns3 --cc newreno --loss 5%``.
BENCH_STATION_SPEC: dict[str, Any] = {
    "preset": "station",
    "qdisc": "none",
    "bytes": "100MB",
    "loss": {"mean_loss": "5%"},
    "tcp": {"cc": "newreno"},
}

#: Printed by ``vtlab bench --vs-ns3`` after a single-vehicle scenario.
BENCH_21_NOTE = (
    "21-vehicle charging station (21 x 100 MB, 5 %): "
    "vtlab bench station --vs-ns3 --cc newreno --loss 5%"
)


def _bench_lte_vs_ns3(repeat: int | None, json_out: bool, log: Callable[[str], None]) -> None:
    """``vtlab bench lte-cabin --vs-ns3``: the LTE validation's four cases (ns-3's LTE
    module, and vtlab replaying its channel on the same scenario), timed; ns-3's
    results are cached under the vtlab cache directory (docs/validation.md)."""
    import typer

    from vtlab.errors import CliError
    from vtlab.validate_lte import validate_lte

    try:
        res = validate_lte(
            cache_root() / "bench-lte",
            bench=True,
            repeat=5 if repeat is None else repeat,
            diagnostic=False,
            progress=not json_out,
            log=log,
        )
    except Ns3Error as exc:
        raise CliError("--vs-ns3", " ".join(str(exc).split())) from None
    if json_out:
        typer.echo(json.dumps(res.speed_rows, default=str))
        return
    for r in res.speed_rows:
        typer.echo(
            f"{r['case']:<14} ns-3 {float(r['ns3_process_wall_s']):7.3f} s · vtlab "
            f"{float(r['vtlab_call_wall_s']) * 1e3:7.1f} ms · {float(r['speedup_whole']):5.0f}× "
            f"faster ({r['simulated_s']} s simulated)"
        )


def bench_vs_ns3_command(
    scenario: Any = None,
    *,
    seed: int = 1,
    repeat: int | None = None,
    json_out: bool = False,
) -> None:
    """Body of ``vtlab bench --vs-ns3``: run :func:`bench_vs_ns3` (``repeat`` None
    means 3) and print the summary, or one JSON object with ``json_out``.  A missing
    or broken ns-3 prints one ``error:`` line and exits with status 2."""
    import typer

    def log(line: str) -> None:
        if not json_out:
            typer.echo(line, err=True)

    spec = getattr(scenario, "spec", scenario)
    if isinstance(spec, Mapping) and spec.get("preset") == "lte-cabin":
        # ns-3's reference for the cellular link is the LTE validation's program.
        _bench_lte_vs_ns3(repeat, json_out, log)
        return
    try:
        res = bench_vs_ns3(scenario, seed=seed, repeat=3 if repeat is None else repeat, log=log)
    except Ns3Error as exc:
        typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
        raise typer.Exit(2) from None
    note = BENCH_21_NOTE if res.vtlab.flows == 1 else ""
    if json_out:
        typer.echo(json.dumps({**res.as_dict(), "note": note}))
        return
    for line in res.summary_lines():
        typer.echo(line)
    if note:
        typer.echo(note)


# -- script entry point (used by validation/ns3/build.sh) -----------------------------


def _main(argv: Sequence[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="ns3.py", description="Build the ns-3 V2G reference program.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile validation/ns3/v2g.cc unless up to date")
    b.add_argument("--out", type=Path, help="directory for the binary (default: the cache)")
    b.add_argument("--source", type=Path, help="source file (default: validation/ns3/v2g.cc)")
    b.add_argument("--rebuild", action="store_true", help="compile even if up to date")
    a = ap.parse_args(argv)
    try:
        binary = ensure_binary(
            source=a.source,
            output=a.out / BINARY_NAME if a.out is not None else None,
            rebuild=a.rebuild,
            log=lambda line: print(line, file=sys.stderr),
        )
    except Ns3Error as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(binary.path)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
