"""Finding the ns-3 installation and building the reference programs
(``validation/ns3/*.cc``), cached by a hash of their source and compile command.

The ``ns3`` PyPI wheel (``pip install 'vtlab[ns3]'``, i.e. ``ns3==3.44.post0``) carries
the ns-3 C++ headers (``<site-packages>/ns3/include``) and shared libraries
(``<site-packages>/ns3/lib64``).  :func:`build_program` compiles a reference program
against them with g++ into ``<cache>/<program>/<sha256 of source and command>/<name>``,
where ``<cache>`` is ``$VTLAB_CACHE`` or ``~/.cache/vtlab``; the binary is reused while
the source, the compile command and the ns-3 installation stay the same.

This module imports only the standard library, so that ``validation/ns3/build.sh``
can run it as a plain script with any ``python3``::

    python3 python/vtlab/ns3/program.py build [--out DIR]

which prints the compile command and the path of the binary.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "COMPILE_FLAGS",
    "ISO15118_PROGRAM",
    "NS3_MISSING",
    "NS3_MODULES",
    "PINNED_NS3_VERSION",
    "V2G_PROGRAM",
    "WIFI_PROGRAM",
    "Ns3Binary",
    "Ns3Error",
    "Ns3Install",
    "Ns3NotInstalled",
    "Program",
    "build_program",
    "cache_dir",
    "cache_root",
    "cache_setting",
    "compile_command",
    "ensure_binary",
    "find_ns3",
    "make_dir",
    "program_results_hash",
    "source_dir",
    "source_path",
]

#: The one-line message when the ``ns3`` wheel is missing.
NS3_MISSING = "ns-3 is not installed: pip install 'vtlab[ns3]'"

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


def source_dir() -> Path:
    """The reference programs' sources: ``ns3/`` of the validation data vtlab ships
    (:func:`vtlab.packagedata.ns3_source_dir`; imported here, not at the top, so that
    ``validation/ns3/build.sh`` can run this module as a script with ``--source``)."""
    from vtlab.packagedata import ns3_source_dir

    return ns3_source_dir()


def source_path() -> Path:
    """The reference program's source: ``$VTLAB_NS3_SOURCE``, else ``v2g.cc`` of
    :func:`source_dir`."""
    env = os.environ.get("VTLAB_NS3_SOURCE")
    if env:
        return Path(env)
    return source_dir() / "v2g.cc"


def cache_root() -> Path:
    """``$VTLAB_CACHE``, else ``$XDG_CACHE_HOME/vtlab``, else ``~/.cache/vtlab``."""
    env = os.environ.get("VTLAB_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "vtlab"


def cache_setting() -> str:
    """Where :func:`cache_root` comes from, as the field of an error message:
    ``$VTLAB_CACHE``, ``$XDG_CACHE_HOME``, or ``cache directory`` (the default)."""
    for variable in ("VTLAB_CACHE", "XDG_CACHE_HOME"):
        if os.environ.get(variable):
            return f"${variable}"
    return "cache directory"


def _problem(exc: OSError) -> str:
    """An I/O error in the system's words, in lower case (``permission denied``)."""
    text = os.strerror(exc.errno) if exc.errno else str(exc.strerror or exc)
    return text[:1].lower() + text[1:]


def make_dir(path: Path, field: str) -> Path:
    """Create the directory ``path`` (and its parents) and check that it is writable;
    raise :class:`Ns3Error` ``<field>: ...`` naming it otherwise (one line, where the
    operating system would give a traceback)."""
    hint = " (set $VTLAB_CACHE to a writable directory)" if field == "cache directory" else ""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Ns3Error(f"{field}: cannot create '{path}': {_problem(exc)}{hint}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise Ns3Error(f"{field}: '{path}' is not writable{hint}")
    return path


def cache_dir(name: str) -> Path:
    """The directory ``name`` under :func:`cache_root`, created (:func:`make_dir`)."""
    return make_dir(cache_root() / name, cache_setting())


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
        binary, field = Path(output), "output"
    else:
        root = Path(cache) if cache is not None else cache_root()
        field = "cache" if cache is not None else cache_setting()
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
    make_dir(binary.parent, field)
    tmp = binary.with_name(f".{binary.name}.{os.getpid()}.tmp")
    tmp_command = program.command(install, src, tmp)
    if log is not None:
        log(f"compiling the ns-3 {program.label} (about 10 s): {shlex.join(command)}")
    proc = subprocess.run(tmp_command, capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        tail = " | ".join(proc.stderr.strip().splitlines()[-5:])
        raise Ns3Error(f"compiling {src} failed (exit {proc.returncode}): {tail}")
    try:
        os.replace(tmp, binary)
        stamp.write_text(digest + "\n")
        binary.with_name(binary.name + ".command.txt").write_text(shlex.join(command) + "\n")
    except OSError as exc:
        raise Ns3Error(f"{field}: cannot write '{exc.filename}': {_problem(exc)}") from None
    return result


#: The V2G reference program, validation/ns3/v2g.cc.
V2G_PROGRAM = Program("reference program", source_path, "VTLAB_NS3_SOURCE", BINARY_NAME, "ns3")

#: The 802.11 vehicular chain, validation/ns3/wifi.cc ($VTLAB_NS3_WIFI_SOURCE overrides
#: the path; see validation/ns3/README-wifi.md). ``libns3.44-wifi.so`` brings in
#: spectrum, energy, antenna and propagation through its own NEEDED entries.
WIFI_PROGRAM = Program(
    "Wi-Fi program",
    lambda: Path(os.environ.get("VTLAB_NS3_WIFI_SOURCE") or source_dir() / "wifi.cc"),
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
#: validation/ns3/README-iso15118.md and :mod:`vtlab.ns3.iso15118`).
ISO15118_PROGRAM = Program(
    "ISO 15118 session program",
    lambda: Path(os.environ.get("VTLAB_NS3_ISO_SOURCE") or source_dir() / "iso15118.cc"),
    "VTLAB_NS3_ISO_SOURCE",
    "iso15118",
    "ns3-iso15118",
    ("core", "network", "internet", "point-to-point", "traffic-control"),
)


#: The ns-3 version of vtlab's ``ns3`` extra (pyproject.toml), which the stored ns-3 runs
#: were made with: :func:`program_results_hash` uses it where no ns-3 is installed.
PINNED_NS3_VERSION = "3.44.post0"


def program_results_hash(program: Program) -> str:
    """The results hash (:func:`results_hash`) of ``program``'s source with the installed
    ns-3's version, or with :data:`PINNED_NS3_VERSION` where none is installed: the key
    of the program's stored runs, known without compiling, so that validating from
    stored runs needs neither ns-3 nor g++.  Equals :attr:`Ns3Binary.results_hash` of
    the binary :func:`build_program` makes.  Raises :class:`Ns3Error` when the source
    cannot be read."""
    src = program.source()
    try:
        source = src.read_bytes()
    except OSError as exc:
        raise Ns3Error(
            f"cannot read the ns-3 {program.label} {src}: {exc.strerror or exc} "
            f"(set {program.env} to validation/ns3/{src.name} of a vtlab checkout)"
        ) from None
    try:
        version = find_ns3().version
    except Ns3NotInstalled:
        version = PINNED_NS3_VERSION
    return results_hash(source, version)


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


# -- script entry point (used by validation/ns3/build.sh) -----------------------------


def _main(argv: Sequence[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="program.py", description="Build the ns-3 V2G reference program."
    )
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
