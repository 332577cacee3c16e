"""The limit on open files (``RLIMIT_NOFILE``, ``ulimit -n``), checked before a run
that holds many files open at once.

A packet capture keeps one file open per capture point for the whole run: every node
of a 1000-vehicle station is 1336 files, more than the common soft limit of 1024.
:func:`ensure_open_files` runs before the first simulation: when the files do not fit
under the soft limit it raises the soft limit up to the hard limit (as a process may
without privileges), and when they do not fit under the hard limit either it raises
:class:`~vtlab.errors.CliError` naming the option, so that nothing is simulated and no
file is created (docs/reliability.md).  Imports only the standard library.
"""

from __future__ import annotations

import contextlib
import os

from vtlab.errors import CliError

__all__ = ["FD_RESERVE", "ensure_open_files", "open_file_count"]

#: Files kept free for everything else the process opens while the files are open
#: (Python's own, a trace file, Parquet writers).
FD_RESERVE = 64


def open_file_count() -> int:
    """Files this process has open now (0 where the system does not say)."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return len(os.listdir(listing))
    return 0


def ensure_open_files(files: int, field: str) -> None:
    """Make sure this process may hold ``files`` more files open at once (besides
    those open now and :data:`FD_RESERVE`): raise the soft limit if the hard limit
    allows, else raise :class:`CliError` ``field: ...``."""
    try:
        import resource
    except ImportError:  # not a Unix system: a failed open is reported by the core
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    now = open_file_count()
    need = files + now + FD_RESERVE
    unlimited = resource.RLIM_INFINITY
    if soft == unlimited or need <= soft:
        return
    if hard == unlimited or need <= hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
            return
    raise CliError(
        field,
        f"the capture opens {files} files at once (one per capture point), but this "
        f"process may open at most {hard} files ({now} open already, ulimit -n); "
        "capture fewer points or raise the limit",
    )
