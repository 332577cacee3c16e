"""The options of ``vtlab validate FAMILY ...``, declared once for every family (and,
hidden, for the old spellings: :func:`hidden`).

Every family takes the same spellings for what they all have (docs/cli.md): ``--quick``
(:func:`quick_option`: the family's CI subset), ``--seeds``/``-n``/``--runs``
(:func:`seeds_option`), ``--out``/``-o`` (:data:`OutOpt`) and ``--quiet``/``-q``
(:data:`QuietOpt`); the families that run in parallel also ``--jobs``/``-j``
(:data:`JobsOpt`)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import typer

from vtlab.validation.v2g import DEFAULT_CCS

__all__ = [
    "BytesOpt",
    "CcOpt",
    "JobsOpt",
    "LossOpt",
    "OnlyOpt",
    "OutOpt",
    "out_dir",
    "ProfileOpt",
    "QdiscOpt",
    "QuickOpt",
    "QuietLinesOpt",
    "QuietOpt",
    "ReplayOpt",
    "ReplayToleranceOpt",
    "RerunNs3Opt",
    "RunsOpt",
    "StoreNs3Opt",
    "TopologyOpt",
    "VehiclesOpt",
    "hidden",
    "quick_option",
    "seeds_option",
]

#: The spellings of the seeds option, the same in every family.
SEEDS_NAMES = ("--seeds", "-n", "--runs")


def seeds_option(default: str) -> Any:
    """``--seeds`` (also ``-n``, ``--runs``): vtlab seeds 1..N per cell; ``default`` is
    the family's default, as the help says it."""
    return Annotated[
        int | None,
        typer.Option(
            *SEEDS_NAMES,
            metavar="N",
            help=f"Seeds 1..N per cell (default {default}).",
            show_default=False,
        ),
    ]


def quick_option(subset: str) -> Any:
    """``--quick``: the family's reduced grid, the one CI runs (``subset`` says what)."""
    return Annotated[bool, typer.Option("--quick", help=f"CI subset: {subset}.")]


def hidden(option: Any) -> Any:
    """The same option, left out of ``--help`` (the old command spellings)."""
    base, info = get_args(option)
    twin = copy.copy(info)
    twin.hidden = True
    return Annotated[base, twin]


CcOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--cc",
        metavar="NAME",
        help="Algorithm (vtlab name); repeatable. Default: every algorithm both "
        "implement (" + ", ".join(DEFAULT_CCS) + ").",
        show_default=False,
    ),
]

LossOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--loss",
        metavar="LOSS",
        help="Mean loss of the PLC link, e.g. 5% or 0.05; repeatable. Default: 0, 0.25%, 1%, 5%.",
        show_default=False,
    ),
]

RunsOpt = seeds_option("10; ns-3 --run=k")

BytesOpt = Annotated[
    str | None,
    typer.Option("--bytes", help="Transfer size, e.g. 100MB (default).", show_default=False),
]

TopologyOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--topology",
        metavar="VEHICLES",
        help="Vehicles: 1 (default, the V2G cable) or N >= 2 (the charging "
        "station, 3 per PLC segment, e.g. 21); repeatable.",
        show_default=False,
    ),
]

VehiclesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--vehicles",
        metavar="N",
        help="Vehicles at the charging station, 3 per PLC segment (default 21; 1 is the "
        "V2G cable); repeatable.",
        show_default=False,
    ),
]

OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Directory for report.md, agreement.csv and runs.jsonl [default: the "
        "family's folder under validation/; with --quick its quick/ subfolder].",
        show_default=False,
    ),
]


def out_dir(out: Path | None, default: str, quick: bool) -> Path:
    """Where a family writes: ``--out`` as given, else ``default`` (its folder under
    validation/, which holds the stored report of the full grid), and with ``--quick``
    that folder's ``quick/``, so that the CI subset never replaces the full report."""
    if out is not None:
        return out
    return Path(default) / "quick" if quick else Path(default)


JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        help="Parallel runs on this machine (with --scheduler or --cluster: the "
        "ns-3 runs); default: all cores.",
        show_default=False,
    ),
]

ProfileOpt = Annotated[
    Literal["ns3", "linux"],
    typer.Option(
        "--profile",
        help="vtlab's TCP implementation profile: ns3 (default) or linux "
        "(how far the Linux profile is from ns-3).",
    ),
]

QuickOpt = quick_option(
    "newreno, illinois, cubic at 0 and 5 %, 5 MB, 2 seeds (explicit options override)"
)

QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or status lines.")]

QdiscOpt = Annotated[
    Literal["stock", "none"],
    typer.Option(
        "--qdisc",
        help="Queueing on every device: stock (default: ns-3's FqCoDel root queue disc "
        "over the 100-packet device queue with flow control; vtlab qdisc fq_codel) or "
        "none (the 100-packet drop-tail device queue alone).",
    ),
]

OnlyOpt = Annotated[
    Literal["ns3", "vtlab"] | None,
    typer.Option(
        "--only",
        help="Run one side of the grid into OUT/runs.jsonl and write no report (e.g. "
        "the ns-3 reference campaign: --only ns3 needs no vtlab algorithm).",
        show_default=False,
    ),
]

StoreNs3Opt = Annotated[
    bool,
    typer.Option(
        "--store-ns3",
        help="Afterwards merge the grid's ns-3 runs into the stored runs "
        "validation/ns3/results/v2g-runs.jsonl.gz (committed; reused by every "
        "validation whose ns-3 program is the same).",
    ),
]

ReplayToleranceOpt = Annotated[
    float,
    typer.Option(
        "--replay-tolerance",
        metavar="SECONDS",
        help="--replay: two key events agree when their times differ by at most this "
        "(default 0.001; a large value compares the sequence of decisions only).",
    ),
]

ReplayOpt = Annotated[
    str | None,
    typer.Option(
        "--replay",
        metavar="CELL",
        help="Paired replay of one run instead of the grid: ALGORITHM:LOSS:SEED (e.g. "
        "westwood-plus:5%:3; --qdisc applies, one vehicle): ns-3's loss decisions fed "
        "to vtlab, then both congestion-control timelines up to their first divergence.",
        show_default=False,
    ),
]

#: ``--rerun-ns3`` of the validators that compare with stored ns-3 runs.
RerunNs3Opt = Annotated[
    bool,
    typer.Option(
        "--rerun-ns3", help="Run ns-3 (the ns3 wheel and g++) instead of using the stored runs."
    ),
]
#: ``--quiet`` of the validators that print progress lines (no progress bar).
QuietLinesOpt = Annotated[bool, typer.Option("--quiet", help="No progress lines.")]
