"""``vtlab validate iso15118``: the ISO 15118 family (:mod:`vtlab.validation.iso15118`,
with ``--replay``: :mod:`vtlab.validation.iso15118_replay`) on the command line, and
its old spelling ``vtlab validate-iso15118`` (hidden, for one release)."""

from __future__ import annotations

import os
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
from vtlab.errors import fail, user_errors
from vtlab.outputs import check_output_dir
from vtlab.validation import iso15118
from vtlab.validation import iso15118_replay as replay
from vtlab.validation.errors import Ns3Error
from vtlab.validation.units import at_least

__all__ = ["iso15118_command", "register_iso15118"]

QuickOpt = quick_option(f"{iso15118.QUICK_SEEDS} seeds per cell")
SeedsOpt = seeds_option(str(iso15118.SEEDS))
ReplayOpt = Annotated[
    str | None,
    typer.Option(
        "--replay",
        metavar="LOSS:SEED",
        help="Paired replay of one run instead (e.g. 5%:3): ns-3's loss decisions fed to "
        "vtlab, the first exchange that differs (needs the ns3 wheel and g++).",
        show_default=False,
    ),
]

StoreNs3Opt = Annotated[
    bool,
    typer.Option(
        "--store-ns3",
        help="Afterwards merge the grid's ns-3 runs into the stored runs "
        "validation/iso15118/ns3/runs.jsonl.gz (committed; reused while iso15118.cc is the same).",
    ),
]


def _replay(cell: str, quiet: bool) -> None:
    """``--replay LOSS:SEED``: print the paired replay of one run."""
    with user_errors():
        loss, seed = replay.parse_cell(cell)
    log = logger(console(), quiet)
    try:
        rep = replay.paired_replay(loss, seed, log=log)
    except Ns3Error as exc:
        fail(str(exc))
    typer.echo("\n".join(rep.lines()))


def iso15118_command(
    quick: QuickOpt = False,
    seeds: SeedsOpt = None,
    rerun_ns3: RerunNs3Opt = False,
    store_ns3: StoreNs3Opt = False,
    out: OutOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    replay_cell: ReplayOpt = None,
) -> None:
    """Validate vtlab's request/response sessions against ns-3: CurrentDemand
    response-time percentiles within ±10 % at 0, 1 and 5 % loss, paired."""
    if replay_cell is not None:
        _replay(replay_cell, quiet)
        return
    with user_errors():
        grid = iso15118.make_grid(seeds, quick, rerun_ns3)
        n_jobs = at_least("--jobs", jobs if jobs is not None else (os.cpu_count() or 1))
        out = out_dir(out, "validation/iso15118", quick)
        check_output_dir("--out", out)
    con = console()

    def call() -> Any:
        return iso15118.validate(
            grid,
            out,
            jobs=n_jobs,
            progress=not quiet,
            command=typed_command(),
            log=logger(con, quiet),
            console=con,
            store_ns3=iso15118.stored_ns3_runs_path() if store_ns3 else None,
        )

    def summary(res: Any) -> str:
        agree = sum(r["verdict"] == "agree" for r in res.table)
        return f"{agree} of {len(res.table)} cells agree within ±{iso15118.TOLERANCE * 100:g} %"

    run_family(call, out, con, summary)


def register_iso15118(group: typer.Typer, app: typer.Typer) -> None:
    """Add ``iso15118`` to the ``validate`` group and the hidden ``validate-iso15118``
    to ``app``."""
    group.command("iso15118")(iso15118_command)
    app.command("validate-iso15118", hidden=True)(iso15118_command)
