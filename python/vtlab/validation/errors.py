"""The errors of a validation, one hierarchy:

* ``ValueError`` ← :class:`vtlab.errors.CliError` ← :class:`ValidateError`: bad input
  (an option value, a cell, a file), printed as one ``error: <option>: <problem>`` line
  with exit status 2;
* ``RuntimeError`` ← :class:`Ns3Error` ← :class:`Ns3NotInstalled`: ns-3 is missing, or a
  reference program failed to build or run (also one ``error:`` line, exit status 2).

A run that fails inside a grid is not an exception of the grid: it is reported per run
(:attr:`vtlab.validation.protocol.ValidateResult.errors`) and the grid goes on.
"""

from __future__ import annotations

from vtlab.errors import CliError
from vtlab.ns3.program import Ns3Error, Ns3NotInstalled

__all__ = ["Ns3Error", "Ns3NotInstalled", "ValidateError"]


class ValidateError(CliError):
    """Bad input to a validation: ``ValidateError("--runs", "must be at least 1, got 0")``
    is printed as ``error: --runs: must be at least 1, got 0``."""
