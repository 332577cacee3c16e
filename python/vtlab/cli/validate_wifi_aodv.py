"""``vtlab validate wifi-aodv``: the AODV family (:mod:`vtlab.validation.wifi_aodv`) on
the command line."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from vtlab.cli.validate_options import (
    JobsOpt,
    OutOpt,
    QuietOpt,
    RerunNs3Opt,
    out_dir,
    quick_option,
    seeds_option,
)
from vtlab.cli.validate_wifi import run_chain_family
from vtlab.errors import user_errors
from vtlab.outputs import check_output_dir
from vtlab.validation import wifi_aodv
from vtlab.validation.units import at_least

__all__ = ["register_wifi_aodv", "wifi_aodv_command"]

CaseOpt = Annotated[
    list[str] | None,
    typer.Option("--case", help="Cells to run (repeatable or comma-separated; default all 8)."),
]
QuickOpt = quick_option(f"two cells ({', '.join(wifi_aodv.QUICK)}), {wifi_aodv.QUICK_SEEDS} seeds")
SeedsOpt = seeds_option(str(wifi_aodv.DEFAULT_SEEDS))
StoreNs3Opt = Annotated[
    bool,
    typer.Option(
        "--store-ns3",
        help="Afterwards merge the grid's ns-3 runs into the stored runs "
        "validation/wifi-aodv/ns3/runs.jsonl.gz (reused while wifi.cc and wifi_aodv.cc "
        "are the same).",
    ),
]


def wifi_aodv_command(
    case: CaseOpt = None,
    quick: QuickOpt = False,
    seeds: SeedsOpt = None,
    rerun_ns3: RerunNs3Opt = False,
    store_ns3: StoreNs3Opt = False,
    out: OutOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Validate vtlab's AODV against ns-3's aodv module on the 802.11 chain (1-8 hops,
    RTS/CTS on and off): goodput within ±10 % per cell, ns-3's control traffic beside."""
    with user_errors():
        grid = wifi_aodv.make_grid(case, seeds, rerun_ns3, quick)
        n_jobs = at_least("--jobs", jobs if jobs is not None else (os.cpu_count() or 1))
        out = out_dir(out, "validation/wifi-aodv", quick)
        check_output_dir("--out", out)
    run_chain_family(wifi_aodv, grid, out, n_jobs, quiet, store_ns3)


def register_wifi_aodv(group: typer.Typer) -> None:
    """Add ``wifi-aodv`` to the ``validate`` group."""
    group.command("wifi-aodv")(wifi_aodv_command)
