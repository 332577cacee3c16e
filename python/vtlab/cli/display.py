"""What ``vtlab run`` and ``vtlab sweep`` print: the table of mean ± 95 % CI per flow
(and per session), or one JSON object per row; the rich console they print on; and
the command line as typed, which the reports and tables the commands write record.

rich and the pandas-backed statistics are imported by the functions that print.
"""

import json
import math
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtlab import _core

if TYPE_CHECKING:  # pandas-backed: imported by the commands that need it
    from vtlab.api import Result
    from vtlab.cli.tables import Summary

__all__ = ["console", "print_json_rows", "print_table", "typed_command"]


def console(stderr: bool = False) -> Any:
    """A rich console; wide when not writing to a terminal, so tables do not wrap."""
    from rich.console import Console

    out = Console(stderr=stderr, highlight=False)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out = Console(stderr=stderr, highlight=False, width=160)
    return out


def _json_value(value: Any) -> Any:
    """A JSON-ready Python value (numpy scalars unwrapped, NaN/inf as null)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_json_rows(res: "Result") -> None:
    """One JSON object per flow row (as before sessions existed: no ``table`` key),
    then one per session row, marked ``"table": "sessions"``."""
    for record in res.flow_records():
        line = json.dumps({str(k): _json_value(v) for k, v in record.items()})
        sys.stdout.write(line + "\n")
    for record in res.session_records():
        row = {"table": "sessions", **{str(k): _json_value(v) for k, v in record.items()}}
        sys.stdout.write(json.dumps(row) + "\n")
    sys.stdout.flush()


def print_table(
    res: "Result",
    runs: int,
    seeds: list[int],
    wall: float,
    quiet: bool,
    by: Sequence[str] = ("cc", "flow"),
    fmt: str = "table",
    columns: Sequence[str] | None = None,
    sessions: bool = True,
) -> None:
    """Per flow (or per ``by``): mean ± 95 % CI over the runs of the chosen metrics
    (:mod:`vtlab.cli.tables`), in ``fmt`` (table, csv or markdown), then the sessions'
    table if there are sessions and ``sessions`` (a sweep's points are not told apart
    there, so ``vtlab sweep`` leaves it out); the table form ends, unless ``quiet``, with one line
    naming the scenario, seeds, wall time and version."""
    from vtlab.cli.tables import FLOW_METRICS, SESSION_METRICS, summary_of

    flows = summary_of(res.flows, by, FLOW_METRICS, runs, columns)
    per_session = (
        summary_of(res.sessions, ("session", "profile"), SESSION_METRICS, runs)
        if sessions and res.has_sessions()
        else None
    )
    if fmt != "table":
        _print_data(flows, per_session, fmt)
        return
    out = console()
    _print_rich(out, flows, "")
    if per_session is not None:
        _print_rich(out, per_session, "sessions")
    if not quiet:
        hashes = res.flows["scenario_hash"].unique()
        seed_text = str(seeds[0]) if len(seeds) == 1 else f"{seeds[0]}..{seeds[-1]}"
        out.print(
            f"scenario {', '.join(map(str, hashes))} · seeds {seed_text} · "
            f"wall {wall:.2f} s · vtlab {res.meta.get('version', _core.version())}",
            markup=False,
        )


def _print_data(flows: "Summary", sessions: "Summary | None", fmt: str) -> None:
    """CSV or Markdown on stdout: the flows' table, then (after an empty line) the
    sessions'."""
    from vtlab.cli.tables import to_csv, to_markdown

    render = to_csv if fmt == "csv" else to_markdown
    parts = [render(flows)] + ([render(sessions)] if sessions is not None else [])
    sys.stdout.write("\n".join(parts))
    sys.stdout.flush()


def _print_rich(out: Any, summary: "Summary", name: str) -> None:
    """The terminal table: short headers, no vertical rules (it fits 80 columns for
    the presets' flows), the legend and the reasons of runs not done below."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    title = summary.title if not name else summary.title.replace("vtlab", name, 1)
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
    )
    for i, head in enumerate(summary.header()):
        table.add_column(head, justify="left" if i < len(summary.keys) else "right", no_wrap=True)
    for row in summary.rows:
        table.add_row(*(escape(c) for c in summary.cells(row)))
    out.print(table)
    out.print(summary.legend(), markup=False)
    for note in summary.notes():
        out.print(note, markup=False)


#: The modules ``python -m`` runs as the ``vtlab`` program.
PROGRAM_MODULES = ("vtlab.__main__", "vtlab.cli.__main__")


def typed_command() -> str:
    """The command line as typed, when this process is the ``vtlab`` program (the
    ``vtlab`` script, or ``python -m vtlab``; not another program's ``__main__.py``,
    such as ``python -m pytest``'s), else ``""``."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if Path(sys.argv[0]).name == "vtlab" or getattr(spec, "name", None) in PROGRAM_MODULES:
        return shlex.join(["vtlab", *sys.argv[1:]])
    return ""
