"""``vtlab validate wifi``: the 802.11 family (:mod:`vtlab.validation.wifi`) on the command
line, and its old spelling ``vtlab validate-wifi`` (hidden, for one release)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from vtlab.cli.display import typed_command
from vtlab.cli.validate_options import (
    JobsOpt,
    OutOpt,
    QuietOpt,
    RerunNs3Opt,
    out_dir,
    quick_option,
    seeds_option,
)
from vtlab.cli.validate_run import console, logger, run_family
from vtlab.errors import user_errors
from vtlab.outputs import check_output_dir
from vtlab.validation import wifi
from vtlab.validation.units import at_least

__all__ = ["register_wifi", "run_chain_family", "wifi_command"]

CaseOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--case",
        help=f"Cells to run (repeatable or comma-separated; default all {len(wifi.CELLS)}).",
    ),
]
QuickOpt = quick_option(
    f"{len(wifi.QUICK)} cells ({', '.join(wifi.QUICK)}), {wifi.QUICK_SEEDS} seeds"
)
SeedsOpt = seeds_option(str(wifi.DEFAULT_SEEDS))
DurationOpt = Annotated[
    float,
    typer.Option(
        "--duration",
        help=f"Flow time per run, s (other than {wifi.DEFAULT_DURATION_S:g} needs --rerun-ns3).",
    ),
]

StoreNs3Opt = Annotated[
    bool,
    typer.Option(
        "--store-ns3",
        help="Afterwards merge the grid's ns-3 runs into the stored runs "
        "validation/wifi/ns3/runs.jsonl.gz (committed; reused while wifi.cc is the same).",
    ),
]


def wifi_command(
    case: CaseOpt = None,
    quick: QuickOpt = False,
    seeds: SeedsOpt = None,
    duration: DurationOpt = wifi.DEFAULT_DURATION_S,
    rerun_ns3: RerunNs3Opt = False,
    store_ns3: StoreNs3Opt = False,
    out: OutOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Validate vtlab's 802.11 medium and DCF against ns-3's wifi module: goodput
    within ±10 % per cell, the orders of the cells, MAC counters side by side."""
    with user_errors():
        grid = wifi.make_grid(case, seeds, duration, rerun_ns3, quick)
        n_jobs = at_least("--jobs", jobs if jobs is not None else (os.cpu_count() or 1))
        out = out_dir(out, "validation/wifi", quick)
        check_output_dir("--out", out)
    run_chain_family(wifi, grid, out, n_jobs, quiet, store_ns3)


def run_chain_family(
    module: Any, grid: Any, out: Path, jobs: int, quiet: bool, store_ns3: bool
) -> None:
    """Run a family of the 802.11 chain (``module``: :mod:`vtlab.validation.wifi` or
    :mod:`vtlab.validation.wifi_aodv`) and print how many cells agree."""
    con = console()

    def call() -> Any:
        return module.validate(
            grid,
            out,
            jobs=jobs,
            progress=not quiet,
            command=typed_command(),
            log=logger(con, quiet),
            console=con,
            store_ns3=module.stored_ns3_runs_path() if store_ns3 else None,
        )

    def summary(res: Any) -> str:
        agree = sum(r["verdict"] == "agree" for r in res.table)
        return f"{agree} of {len(res.table)} cells agree within ±{module.TOLERANCE * 100:g} %"

    run_family(call, out, con, summary)


def register_wifi(group: typer.Typer, app: typer.Typer) -> None:
    """Add ``wifi`` to the ``validate`` group and the hidden ``validate-wifi`` to
    ``app``."""
    group.command("wifi")(wifi_command)
    app.command("validate-wifi", hidden=True)(wifi_command)
