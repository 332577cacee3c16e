"""Where the data that vtlab ships with lies: the one place to change it.

The validation data (the ns-3 reference programs ``ns3/*.cc``, ns-3's stored runs,
the committed agreement tables that the park2019 report quotes) are part of the
installed package, at ``vtlab/_data/validation``: in a wheel as files, in a checkout
through the link ``python/vtlab/_data/validation`` → ``validation/`` (docs/packaging.md).
``$VTLAB_VALIDATION_DIR`` points every command at another folder of the same layout
(a checkout's ``validation/``, say). Each study's paper values sit beside its code
(``vtlab/experiments/<study>/paper.toml``) and are found by the study itself.

Standard library and :mod:`vtlab.errors` only, so that importing it costs nothing at
start-up.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from vtlab.errors import CliError

__all__ = ["VALIDATION_ENV", "ns3_source_dir", "packaged_validation_dir", "validation_dir"]

#: The environment variable that replaces the packaged validation folder.
VALIDATION_ENV = "VTLAB_VALIDATION_DIR"


def packaged_validation_dir() -> Path:
    """``vtlab/_data/validation`` of the installed package."""
    return Path(str(resources.files("vtlab") / "_data" / "validation"))


def validation_dir() -> Path:
    """The validation folder: ``$VTLAB_VALIDATION_DIR`` when set, else the packaged one.
    Raises :class:`~vtlab.errors.CliError` (naming the variable) when the variable
    names no folder, and when the packaged folder is missing (a build that left the
    data out)."""
    env = os.environ.get(VALIDATION_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise CliError(
                VALIDATION_ENV, f"'{env}' is not a folder (unset it to use the data vtlab ships)"
            )
        return path
    path = packaged_validation_dir()
    if not path.is_dir():
        raise CliError(
            "vtlab/_data/validation",
            f"the package's validation data are missing at {path}: reinstall vtlab, or set "
            f"{VALIDATION_ENV} to a vtlab checkout's validation/ folder",
        )
    return path


def ns3_source_dir() -> Path:
    """The ns-3 reference programs' sources (``validation_dir()/ns3``)."""
    return validation_dir() / "ns3"
