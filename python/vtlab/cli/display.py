"""What ``vtlab run`` and ``vtlab sweep`` print: the table of mean ± 95 % CI per flow
(and per session), or one JSON object per row; and the rich console they print on.

rich and the pandas-backed statistics are imported by the functions that print.
"""

import json
import math
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vtlab import _core

if TYPE_CHECKING:  # pandas-backed: imported by the commands that need it
    from vtlab.api import Result

__all__ = ["console", "print_json_rows", "print_sessions_table", "print_table"]

#: (flow column, table header, scale, digits) for the default run table.
TABLE_METRICS: tuple[tuple[str, str, float, int | None], ...] = (
    ("goodput_bps", "goodput Mbit/s", 1e-6, 3),
    ("completion_s", "completion s", 1.0, 3),
    ("retransmissions", "retrans", 1.0, None),
    ("rto_count", "RTOs", 1.0, None),
    ("fast_recoveries", "fast rec.", 1.0, None),
    ("drops_link_error", "link-err drops", 1.0, None),
    ("drops_queue", "queue drops", 1.0, None),
    ("drops_aqm", "AQM drops", 1.0, None),
)

#: (session column, table header, scale, digits) for the run command's session table.
SESSION_METRICS: tuple[tuple[str, str, float, int | None], ...] = (
    ("completed", "completed", 1.0, 2),
    ("deadline_misses", "deadline misses", 1.0, None),
    ("loop_p99_s", "loop p99 ms", 1e3, 2),
    ("time_to_energy_s", "time to energy s", 1.0, 3),
)


def console(stderr: bool = False) -> Any:
    """A rich console; wide when not writing to a terminal, so tables do not wrap."""
    from rich.console import Console

    out = Console(stderr=stderr, highlight=False)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out = Console(stderr=stderr, highlight=False, width=160)
    return out


def fmt_ci(mean: float, ci: float, n: int, digits: int | None) -> str:
    """``mean ± ci``; counts (digits None) get 0 decimals for one run, 1 otherwise."""
    if digits is None:
        digits = 0 if n <= 1 else 1
    if not math.isfinite(mean):
        return "–" if math.isnan(mean) else f"{mean}"
    half = f"{ci:.{digits}f}" if math.isfinite(ci) else "–"
    return f"{mean:.{digits}f} ± {half}"


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
) -> None:
    """Per flow (or per ``by``): mean ± 95 % CI over the runs of every
    :data:`TABLE_METRICS` column; then, unless ``quiet``, one summary line."""
    from rich.markup import escape
    from rich.table import Table

    from vtlab.stats import summarize

    flows = res.flows
    by = list(by)
    stats = summarize(flows, by=by, metrics=[m[0] for m in TABLE_METRICS])
    done = flows.groupby(by, sort=False)["completed"].agg(["sum", "count"])

    plural = "s" if runs != 1 else ""
    table = Table(title=f"vtlab: mean ± 95 % CI over {runs} run{plural}", title_justify="left")
    for col in by:
        table.add_column(col)
    table.add_column("done", justify="right")
    for _, header, _, _ in TABLE_METRICS:
        table.add_column(header, justify="right")
    for key, group in stats.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        by_metric = group.set_index("metric")
        cells = []
        for col, _, scale, digits in TABLE_METRICS:
            row = by_metric.loc[col]
            cells.append(fmt_ci(row["mean"] * scale, row["ci95"] * scale, int(row["n"]), digits))
        ok, count = done.loc[key if len(key) > 1 else key[0]]
        labels = [escape(str(k)) for k in key]
        table.add_row(*labels, f"{int(ok)}/{int(count)}", *cells)

    out = console()
    out.print(table)
    if not quiet:
        hashes = flows["scenario_hash"].unique()
        seed_text = str(seeds[0]) if len(seeds) == 1 else f"{seeds[0]}..{seeds[-1]}"
        out.print(
            f"scenario {', '.join(map(str, hashes))} · seeds {seed_text} · "
            f"wall {wall:.2f} s · vtlab {res.meta.get('version', _core.version())}",
            markup=False,
        )


def print_sessions_table(res: "Result", runs: int) -> None:
    """Per session: mean ± 95 % CI over the runs of the completed fraction, the
    deadline misses, the charging loop's p99 response time and the time to energy."""
    from rich.markup import escape
    from rich.table import Table

    from vtlab.stats import summarize

    sessions = res.sessions
    by = ["session", "profile"]
    stats = summarize(sessions, by=by, metrics=[m[0] for m in SESSION_METRICS])
    done = sessions.groupby(by, sort=False)["completed"].agg(["sum", "count"])
    plural = "s" if runs != 1 else ""
    table = Table(title=f"sessions: mean ± 95 % CI over {runs} run{plural}", title_justify="left")
    for col in by:
        table.add_column(col)
    table.add_column("done", justify="right")
    for _, header, _, _ in SESSION_METRICS:
        table.add_column(header, justify="right")
    for key, group in stats.groupby(by, sort=False):
        by_metric = group.set_index("metric")
        cells = []
        for col, _, scale, digits in SESSION_METRICS:
            row = by_metric.loc[col]
            cells.append(fmt_ci(row["mean"] * scale, row["ci95"] * scale, int(row["n"]), digits))
        ok, count = done.loc[key]
        table.add_row(*(escape(str(k)) for k in key), f"{int(ok)}/{int(count)}", *cells)
    console().print(table)
