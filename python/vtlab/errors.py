"""The one error path of the ``vtlab`` command line.

Every user error — a bad option value, an invalid scenario field, a missing or
unwritable file, an argument the parser rejects — is printed as exactly one line

    error: <field>: <problem>

on stderr, and the process exits with status 2 (:data:`EXIT_USAGE`).  ``<field>`` is
the option (``--runs``), the scenario field (``tcp.cc``) or the file the problem is
about.  Commands use :func:`cli_errors` (a decorator) or :func:`user_errors` (a
context manager); the parser's own errors go through :func:`usage_error_line`.  Set
``VTLAB_DEBUG=1`` to get the traceback instead.

Numbers are echoed as the user wrote them: the core formats a rejected number its own
way (``1.5`` as ``1.5e0``, ``1.50`` as ``1.5``, ``1e14`` as ``100000000000000``), so the
command line records the text of every value it sets (:func:`remember_text`) and
:func:`message_of` puts it back into the core's message.

This module imports only the standard library and the compiled core, so that it costs
nothing at start-up.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TypeVar

from vtlab._core import ScenarioError

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "CliError",
    "cli_errors",
    "fail",
    "forget_texts",
    "message_of",
    "one_line",
    "os_problem",
    "remember_text",
    "usage_error_line",
    "user_errors",
    "with_filename",
]

#: Exit status of every user error (the same as the argument parser's).
EXIT_USAGE = 2

#: Exit status after Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


class CliError(ValueError):
    """Bad command-line input: ``CliError("--runs", "must be at least 1, got 0")`` is
    printed as ``error: --runs: must be at least 1, got 0``."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


# -- numbers as the user wrote them ------------------------------------------------------

#: Spec path → texts the user gave for it on this command line.
_TEXTS: dict[str, list[str]] = {}
#: Spec path → the option that set it (``loss.mean_loss`` → ``--loss``), for errors.
_OPTIONS: dict[str, str] = {}


def remember_text(path: str, text: str, option: str | None = None) -> None:
    """Record that the command line set spec field ``path`` from ``text``, through
    the shorthand ``option`` (an error about ``path`` then names the option), or
    directly (``--set path=...``: the path is what the user wrote)."""
    path = path.strip()
    _TEXTS.setdefault(path, []).append(text.strip())
    if option is None:
        _OPTIONS.pop(path, None)
    else:
        _OPTIONS[path] = option


def forget_texts() -> None:
    """Start a new command line (in-process callers run several in a row)."""
    _TEXTS.clear()
    _OPTIONS.clear()


def _number_of(text: str) -> int | float | None:
    """The number ``text`` parses to the way the command line parses values, if any
    (a percentage as the fraction the core reads: ``200%`` → 2)."""
    from vtlab.scenario import parse_value

    if text.endswith("%"):
        try:
            return float(text[:-1]) / 100
        except ValueError:
            return None
    value = parse_value(text)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _renderings(value: int | float) -> list[str]:
    """How the core may print ``value``: its Display (``1.5``, ``1`` followed by 300
    zeros for ``1e300``) and LowerExp (``1.5e0``, ``1e300``) forms, longest first."""
    if isinstance(value, int):
        return [str(value)]
    if not math.isfinite(value):
        return []
    import decimal

    d = decimal.Decimal(repr(value)).normalize()
    sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits))
    lower_exp = mantissa[0] + (f".{mantissa[1:]}" if len(mantissa) > 1 else "")
    lower_exp = f"{'-' if sign else ''}{lower_exp}e{exponent + len(mantissa) - 1}"
    display = f"{d:f}"
    return sorted({display, lower_exp, repr(value)}, key=len, reverse=True)


def _echo_user_text(message: str) -> str:
    """Replace the core's rendering of a number the user gave with the user's text,
    and a spec path a shorthand option set with that option (``--loss``)."""
    path, sep, problem = message.partition(": ")
    if not sep:
        return message
    field = _OPTIONS.get(path.strip(), path)
    for text in _TEXTS.get(path.strip(), [])[-1:]:  # the last assignment is in effect
        value = _number_of(text)
        if value is None:
            continue
        for rendered in _renderings(value):
            pattern = rf"(?<![\w.]){re.escape(rendered)}(?![\w.])"
            new, n = re.subn(pattern, lambda _m, t=text: t, problem, count=1)
            if n:
                return f"{field}{sep}{new}"
    return f"{field}{sep}{problem}"


# -- printing --------------------------------------------------------------------------


def one_line(message: str) -> str:
    """``message`` with its lines joined by spaces (an error is always one line)."""
    return " ".join(part.strip() for part in str(message).splitlines() if part.strip())


def os_problem(exc: OSError) -> str:
    """What went wrong in an I/O error, in the system's words and in lower case
    (``no space left on device``), without Python's ``[Errno 28]`` or pyarrow's
    ``Error writing bytes to file. Detail:``."""
    text = os.strerror(exc.errno) if exc.errno else str(exc.strerror or exc)
    return _lower_first(text)


def with_filename(exc: OSError, path: str | os.PathLike[str]) -> OSError:
    """``exc``, or when it names no file (pyarrow's errors do not) the same error
    naming ``path``, so that the command line can say which output failed."""
    if exc.filename is not None:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), os.fspath(path))


def message_of(exc: BaseException) -> str:
    """The ``<field>: <problem>`` text of a user error."""
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{os.fsdecode(exc.filename)}: {os_problem(exc)}"
    if isinstance(exc, ScenarioError):
        return _echo_user_text(str(exc))
    return str(exc) or type(exc).__name__


def fail(message: str) -> NoReturn:
    """Print ``error: <message>`` (one line) on stderr and exit with status 2."""
    sys.stdout.flush()
    print(f"error: {one_line(message)}", file=sys.stderr, flush=True)
    raise SystemExit(EXIT_USAGE)


#: What counts as a user error (anything else is a bug and keeps its traceback).
USER_ERRORS: tuple[type[BaseException], ...] = (CliError, ScenarioError, ValueError, OSError)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn :data:`USER_ERRORS` raised inside the block into :func:`fail`."""
    try:
        yield
    except BrokenPipeError:
        raise  # output piped into e.g. `head`: the CLI framework exits quietly
    except USER_ERRORS as exc:
        if os.environ.get("VTLAB_DEBUG"):
            raise
        fail(message_of(exc))


F = TypeVar("F", bound=Callable[..., Any])


def cli_errors(fn: F) -> F:
    """Decorator form of :func:`user_errors` for a command function; also starts a
    fresh record of the user's texts (:func:`remember_text`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        forget_texts()
        try:
            with user_errors():
                return fn(*args, **kwargs)
        except KeyboardInterrupt:
            # Ctrl-C: the running simulation has stopped; completed runs of a
            # sweep or reproduction are in its store. One line, exit 130.
            print("interrupted", file=sys.stderr)
            raise SystemExit(EXIT_INTERRUPTED) from None

    return wrapper  # type: ignore[return-value]


# -- the argument parser's errors -------------------------------------------------------


def _param_name(param: Any) -> str:
    """``--runs`` for an option (its first long name), ``PRESET`` for an argument."""
    opts = list(getattr(param, "opts", None) or [])
    if getattr(param, "param_type_name", "") == "option" and opts:
        long = [o for o in opts if o.startswith("--")]
        return (long or opts)[0]
    return str(getattr(param, "human_readable_name", None) or getattr(param, "name", "?"))


def _lower_first(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def usage_error_line(exc: Exception) -> str:
    """One ``<field>: <problem>`` line for an error of the argument parser (unknown
    option or command, bad value or choice, missing argument or value)."""
    name = type(exc).__name__
    message = str(getattr(exc, "message", "") or exc)
    if name == "NoSuchOption":
        options = sorted(getattr(exc, "possibilities", None) or [])
        hint = ""
        if len(options) == 1:
            hint = f" (did you mean {options[0]}?)"
        elif options:
            hint = f" (did you mean one of {', '.join(options)}?)"
        return f"{exc.option_name}: no such option{hint}"  # type: ignore[attr-defined]
    if name == "BadOptionUsage":
        option = exc.option_name  # type: ignore[attr-defined]
        if "requires an argument" in message:
            return f"{option}: needs a value"
        return f"{option}: {_lower_first(message.replace(repr(option), '').strip())}"
    param = getattr(exc, "param", None)
    if name == "MissingParameter" and param is not None:
        kind = "argument" if getattr(param, "param_type_name", "") == "argument" else "option"
        return f"{_param_name(param)}: missing {kind}"
    if param is not None:
        problem = message.strip().rstrip(".")
        problem = (
            problem[len("Value error, ") :] if problem.startswith("Value error, ") else problem
        )
        return f"{_param_name(param)}: {_lower_first(problem)}"
    match = re.match(r"No such command '(.*?)'\.\s*(.*)$", message, re.DOTALL)
    if match:
        hint = f" ({_lower_first(match.group(2))}?)" if match.group(2) else ""
        return f"{match.group(1)}: no such command{hint.replace('??', '?')}"
    match = re.match(r"Got unexpected extra arguments?(?:\(s\))? \((.*)\)", message)
    if match:
        return f"{match.group(1)}: unexpected extra argument"
    return _lower_first(message)
