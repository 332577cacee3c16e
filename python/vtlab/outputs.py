"""Output paths of the command line, checked before the first simulation.

A command collects every file it will write — including files derived from an
option, such as ``runs.links.parquet`` beside ``--out runs.parquet`` — and calls
:func:`check_outputs` before it simulates anything.  Each file must:

* have a name ending in one of the formats the option writes (``.parquet``, ...);
* not be a dangling symbolic link (writing through it would fail after the runs,
  or create a file elsewhere);
* if it exists, be a regular file after following links (not a directory, and
  not a FIFO or device: writing into a FIFO blocks until something reads it);
* be in a directory that exists and is writable;
* not already exist, unless ``--force`` is given;
* be different from every other output of the same command (two options naming
  the same file, or one option's file being another's derived file).

Directories a command fills and resumes from (``sweep --store``, ``validate --out``)
are checked with :func:`check_output_dir`: an existing path must be a writable
directory; a missing one must be creatable (its nearest existing parent is a
writable directory, and no dangling symbolic link is on the way).

Problems raise :class:`vtlab.errors.CliError` naming the option, so the user sees one
``error: --out: ...`` line and no file is touched.

While a command writes, :func:`writing` turns an I/O error (a full disk, a file size
limit) into ``error: --out: <path>: no space left on device`` and removes what the
failed option had written, so that no partial output is left behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vtlab.api import Result, sibling_paths
from vtlab.errors import CliError, os_problem
from vtlab.scenario import Scenario

__all__ = [
    "Output",
    "check_output_dir",
    "check_outputs",
    "table_outputs",
    "write_tables",
    "writing",
]


@dataclass(frozen=True)
class Output:
    """One file a command will write.

    ``option`` is the command-line option it comes from, ``what`` says which file
    of that option it is (``"flows"``, ``"links"``) when an option writes several,
    and ``suffixes`` the accepted file-name endings (``None`` for a derived file
    whose name the command chose).
    """

    option: str
    path: Path
    what: str = ""
    suffixes: tuple[str, ...] | None = None

    def describe(self) -> str:
        what = f" ({self.what} file)" if self.what else ""
        return f"{self.option} {self.path}{what}"


def table_outputs(
    option: str, path: str | os.PathLike[str], *, sessions: bool = False
) -> list[Output]:
    """The files :func:`write_tables` writes: the flow rows at ``path`` (must end in
    ``.parquet`` or ``.csv``) and the link rows beside it, and with ``sessions`` (the
    scenario has request/response sessions) the session and message rows beside it
    too."""
    paths = sibling_paths(path)
    outputs = [
        Output(option, paths["flows"], "flows", (".parquet", ".csv")),
        Output(option, paths["links"], "links"),
    ]
    if sessions:
        outputs += [
            Output(option, paths["sessions"], "sessions"),
            Output(option, paths["messages"], "messages"),
        ]
    return outputs


def write_tables(res: Result, path: Path, scenario: Scenario | None = None) -> dict[str, Path]:
    """Write a result's tables as ``path``'s name says: ``.csv`` with
    :meth:`Result.to_csv`, else Parquet with :meth:`Result.to_parquet` (no traces; the
    files carrying ``scenario`` when given). Returns the paths written."""
    if path.name.lower().endswith(".csv"):
        return res.to_csv(path)
    return res.to_parquet(path, traces=False, scenario=scenario)


def _same_file_key(path: Path) -> str:
    return os.path.normcase(str(path.expanduser().resolve()))


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def _looping(path: Path) -> str | None:
    """Why ``path`` (or a directory on the way to it) is a symbolic link loop, or
    ``None``: following it never reaches a file (``ELOOP``)."""
    try:
        os.stat(path.expanduser())
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"'{path}' is a symbolic link loop (following it never reaches a file)"
    return None


def _dangling(path: Path) -> str | None:
    """Why ``path`` is a symbolic link that leads nowhere, or ``None``."""
    if path.is_symlink() and not path.exists():
        return f"'{path}' is a symbolic link to '{os.readlink(path)}', which does not exist"
    return None


def special_kind(path: Path) -> str | None:
    """What ``path`` is when it exists but is neither a regular file nor a directory
    (after following links): ``"a FIFO (named pipe)"``, ``"a character device"``, ..."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    kinds = (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), None)


def check_outputs(outputs: Sequence[Output], *, force: bool = False) -> None:
    """Raise :class:`CliError` unless every output can be written (see the module
    docstring).  Nothing is created."""
    for out in outputs:
        if out.suffixes is not None and not out.path.name.lower().endswith(out.suffixes):
            endings = " or ".join(out.suffixes)
            raise CliError(out.option, f"'{out.path}': the file name must end in {endings}")
    for out in outputs:
        loop = _looping(out.path)
        if loop is not None:
            raise CliError(out.option, loop)
    seen: dict[str, Output] = {}
    for out in outputs:
        key = _same_file_key(out.path)
        other = seen.get(key)
        if other is None:
            for prev_key, prev in seen.items():
                p, q = Path(prev_key), Path(key)
                if p.exists() and q.exists() and os.path.samefile(p, q):
                    other = prev
                    break
        if other is not None:
            raise CliError(
                out.option,
                f"'{out.path}' is the same file as {other.describe()}; give different names",
            )
        seen[key] = out
    for out in outputs:
        parent = out.path.expanduser().parent
        dangling = _dangling(out.path.expanduser())
        if dangling is not None:
            raise CliError(out.option, dangling)
        if out.path.is_dir():
            raise CliError(out.option, f"'{out.path}' is a directory")
        kind = special_kind(out.path.expanduser())
        if kind is not None:
            raise CliError(out.option, f"'{out.path}' is {kind}, not a regular file")
        if not parent.exists():
            raise CliError(out.option, f"'{out.path}': directory '{parent}' does not exist")
        if not _writable_dir(parent):
            raise CliError(out.option, f"'{out.path}': directory '{parent}' is not writable")
        if out.path.exists() and not force:
            what = f" ({out.what} file)" if out.what else ""
            raise CliError(
                out.option, f"'{out.path}'{what} already exists; add --force to overwrite it"
            )


def check_output_dir(option: str, path: str | os.PathLike[str]) -> None:
    """Raise :class:`CliError` unless ``path`` is a writable directory or can be
    created as one.  Nothing is created."""
    p = Path(path).expanduser()
    loop = _looping(p)
    if loop is not None:
        raise CliError(option, loop)
    for link in (p, *p.parents):
        dangling = _dangling(link)
        if dangling is not None:
            raise CliError(option, dangling)
    if p.exists():
        if not p.is_dir():
            raise CliError(option, f"'{path}' exists and is not a directory")
        if not _writable_dir(p):
            raise CliError(option, f"directory '{path}' is not writable")
        return
    ancestor = p.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not _writable_dir(ancestor):
        raise CliError(option, f"cannot create '{path}': '{ancestor}' is not a writable directory")


def _remove_partial(paths: Iterable[Path]) -> None:
    """Remove what a failed write left at ``paths``: regular files and symbolic
    links only (never the device or FIFO a link may point to)."""
    for path in paths:
        with contextlib.suppress(OSError):
            mode = path.lstat().st_mode
            if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                path.unlink()


def _owner(targets: dict[str, Path], file: str | None) -> str | None:
    """The option whose file is ``file``, or whose directory holds it."""
    if file is None:
        return next(iter(targets)) if len(targets) == 1 else None
    f = Path(os.path.abspath(file))
    for option, path in targets.items():
        p = Path(os.path.abspath(path))
        if f == p or p in f.parents:
            return option
    return None


@contextlib.contextmanager
def writing(
    targets: Mapping[str, str | os.PathLike[str] | None], *, remove: Iterable[Path] = ()
) -> Iterator[None]:
    """Name the option in an I/O error raised while the block writes: ``targets`` maps
    each option to its file, or to the directory it fills (``None``: not given).  An
    ``OSError`` about one of them (or without a file name, when there is one target)
    becomes ``CliError(option, "<file>: <problem>")``, after the files ``remove`` are
    removed, so that no partial output is left behind."""
    given = {option: Path(p) for option, p in targets.items() if p is not None}
    try:
        yield
    except BrokenPipeError:
        raise  # stdout closed early (e.g. `| head`): the CLI framework exits quietly
    except OSError as exc:
        _remove_partial(remove)
        file = None if exc.filename is None else os.fsdecode(exc.filename)
        option = _owner(given, file)
        if option is None:
            raise
        where = file if file is not None else str(given[option])
        raise CliError(option, f"{where}: {os_problem(exc)}") from None
