"""``vtlab plot``: a quick look at a run or a sweep as a PNG, SVG or PDF figure.

From a trace (``vtlab run --trace``) or events file (``vtlab run --events x.parquet``):
cwnd, ssthresh, RTT or sequence over time. From a flows table with axis columns
(``vtlab sweep --out``): a metric against an axis, means with 95 % confidence
intervals. matplotlib and pandas are imported only when the command runs."""

from pathlib import Path
from typing import Annotated, Any

import typer

from vtlab.errors import CliError, cli_errors

__all__ = ["plot_command", "register"]

FileArg = Annotated[
    Path,
    typer.Argument(help="Trace, events (.parquet/.csv) or sweep flows file, or a sweep store."),
]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Figure to write: .png, .svg or .pdf.")]
MetricOpt = Annotated[
    str,
    typer.Option(
        "--metric", help="Over time: comma-separated cwnd, ssthresh, rtt, seq (not with --x)."
    ),
]
FlowOpt = Annotated[list[str] | None, typer.Option("--flow", help="Only this flow (repeatable).")]
XOpt = Annotated[str | None, typer.Option("--x", help="Sweep axis column for the x axis.")]
YOpt = Annotated[
    str | None, typer.Option("--y", help="Metric column against --x (e.g. goodput_bps).")
]


def register(app: typer.Typer) -> None:
    """Add ``vtlab plot``."""
    app.command("plot")(plot_command)


def _store_flows(store: Path) -> Any:
    """The flows table of the sweep store ``store`` (:func:`vtlab.load`, each part
    verified), its parts at most :data:`vtlab.plot.MAX_FILE_BYTES` (1 GiB)."""
    from vtlab.plot import MAX_FILE_BYTES
    from vtlab.results import load
    from vtlab.runstore import StoredRunError, StoreError

    size = sum(f.stat().st_size for f in (store / "flows").glob("part-*.parquet"))
    if size > MAX_FILE_BYTES:
        raise CliError("FILE", f"{store}: {size:,} bytes of flows; at most {MAX_FILE_BYTES:,}")
    try:
        return load(store)
    except (StoreError, StoredRunError) as e:
        raise CliError("FILE", str(e)) from None


@cli_errors
def plot_command(
    file: FileArg,
    out: OutOpt,
    metric: MetricOpt = "cwnd,ssthresh",
    flow: FlowOpt = None,
    x: XOpt = None,
    y: YOpt = None,
) -> None:
    """Plot TCP state over time from a trace or events file, or a metric against a
    sweep axis with 95 % confidence intervals."""
    from vtlab.plot import FORMATS, axis_plot, read_table, save, time_plot

    if out.suffix.lower() not in FORMATS:
        raise CliError("--out", f"{out.name}: allowed endings: {', '.join(FORMATS)}")
    if (x is None) != (y is None):
        raise CliError("--x" if x is None else "--y", "--x and --y go together")
    frame = _store_flows(file) if file.is_dir() else read_table(file)
    if x is not None and y is not None:
        fig, data = axis_plot(frame, x, y)
    else:
        metrics = [m.strip() for m in metric.split(",") if m.strip()]
        if not metrics:
            raise CliError("--metric", "empty; allowed: cwnd, ssthresh, rtt, seq")
        fig, data = time_plot(frame, metrics, flows=flow or ())
    save(fig, out)
    print(f"wrote {out} ({len(data)} points)")
