"""The options several ``vtlab`` commands share, declared once, and what they build.

* The scenario options (``PRESET``, ``--scenario``, ``--cc``, ``--cc-param``,
  ``--profile``, ``--qdisc``, ``--loss``, ``--bytes``, ``--set``) as typer ``Annotated``
  aliases, and :func:`scenario_from_cli`, which turns them into a :class:`Scenario`.
* The options whose name is shared but whose help depends on the command (``--runs``,
  ``--seed``, ``--jobs``, ``--out``, ``--quiet``, ``--json``, ``--store``) as functions
  that take the help text: ``runs: Annotated[int, runs_option("Seeds per cell.")] = 6``.
* The cluster options (``--scheduler``, ``--cluster``, ``--task-runs``,
  ``--connect-timeout``) and :func:`check_cluster_options`.
* The checks of ``--runs``/``--seed`` and ``--jobs``.

Imports nothing heavy (start-up time): no pandas, numpy, pyarrow, matplotlib or Dask.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from vtlab import _core
from vtlab.api import MAX_RUNS, MAX_SEED
from vtlab.cluster import check_connect_timeout, parse_cluster
from vtlab.errors import CliError, remember_text
from vtlab.scenario import Scenario, apply_assignment, parse_assignment, parse_value, set_path

__all__ = [
    "SESSION_PRESETS",
    "BytesOpt",
    "CcOpt",
    "CcParamOpt",
    "ClusterOpt",
    "ConnectTimeoutOpt",
    "ColumnsOpt",
    "ForceOpt",
    "FormatOpt",
    "JobsOpt",
    "LossOpt",
    "PresetArg",
    "ProfileOpt",
    "QdiscOpt",
    "ScenarioOpt",
    "SchedulerOpt",
    "SetOpt",
    "TaskRunsOpt",
    "check_cluster_options",
    "check_jobs",
    "check_runs_seed",
    "has_sessions",
    "jobs_option",
    "json_option",
    "out_option",
    "quiet_option",
    "runs_option",
    "scenario_from_cli",
    "seed_option",
    "store_option",
]

# -- the scenario options ---------------------------------------------------------------

PresetArg = Annotated[
    str | None,
    typer.Argument(
        metavar="PRESET",
        help="Preset name (see `vtlab presets`); omit when using --scenario.",
        show_default=False,
    ),
]
ScenarioOpt = Annotated[
    Path | None,
    typer.Option(
        "--scenario",
        "-s",
        help="Scenario file: TOML or JSON (.json) holding the spec, or vtlab expand's output.",
        show_default=False,
        dir_okay=False,
    ),
]
CcOpt = Annotated[
    str | None,
    typer.Option("--cc", help="Congestion control (sets tcp.cc).", show_default=False),
]
CcParamOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--cc-param",
        metavar="NAME=VALUE",
        help="Congestion-control parameter (sets tcp.cc_params.NAME); repeatable.",
        show_default=False,
    ),
]
LossOpt = Annotated[
    str | None,
    typer.Option(
        "--loss",
        help="Mean loss of the lossy link, e.g. 5% or 0.05 (sets loss.mean_loss).",
        show_default=False,
    ),
]
BytesOpt = Annotated[
    str | None,
    typer.Option(
        "--bytes", help="Transfer size per flow, e.g. 100MB or 128KiB.", show_default=False
    ),
]
ProfileOpt = Annotated[
    Literal["ns3", "linux", "ns2"] | None,
    typer.Option(
        "--profile",
        help="TCP implementation profile: ns3, linux or ns2 (sets tcp.profile).",
        show_default=False,
    ),
]
QdiscOpt = Annotated[
    str | None,
    typer.Option(
        "--qdisc",
        metavar="NAME",
        help="Root queue disc of every link: none, pfifo_fast, fq_codel, codel, red or pie "
        "(sets qdisc; for attributes use --set qdisc.kind=codel --set qdisc.target=3ms "
        "instead; default: the profile's, fq_codel for ns3 as stock ns-3.44, none for "
        "linux).",
        show_default=False,
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="PATH=VALUE",
        help="Set any spec field by dotted path (value parsed as TOML, else a string); "
        "repeatable, applied after the other options.",
        show_default=False,
    ),
]

# -- options shared by name, with the command's own help --------------------------------


def runs_option(help: str, **kwargs: Any) -> Any:
    """``--runs``/``-n``: how many runs (seeds)."""
    return typer.Option("--runs", "-n", help=help, **kwargs)


def seed_option(help: str) -> Any:
    """``--seed``: the (first) seed."""
    return typer.Option("--seed", help=help)


def jobs_option(help: str) -> Any:
    """``--jobs``/``-j``: parallel runs."""
    return typer.Option("--jobs", "-j", help=help, show_default=False)


def out_option(help: str) -> Any:
    """``--out``/``-o``: the file or folder a command writes."""
    return typer.Option("--out", "-o", help=help, show_default=False)


def quiet_option(help: str) -> Any:
    """``--quiet``/``-q``: less output."""
    return typer.Option("--quiet", "-q", help=help)


def json_option(help: str) -> Any:
    """``--json``: JSON instead of a table."""
    return typer.Option("--json", help=help)


def store_option(help: str) -> Any:
    """``--store``: a campaign directory of finished runs (resumable)."""
    return typer.Option("--store", help=help, show_default=False)


JobsOpt = Annotated[int | None, jobs_option("Parallel runs (default: one per core).")]
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="FORMAT",
        help="The summary as table (default: for a terminal, fits 80 columns), csv (every "
        "metric: mean, ci95 and n in base units), markdown, or json (one object per row).",
    ),
]
ColumnsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--columns",
        metavar="NAME,...",
        help="The table's metric columns, by result-column name or header (e.g. "
        "goodput_bps,RTO,drops_aqm; repeatable). Default: goodput and completion time, "
        "then the counts that are not all zero.",
        show_default=False,
    ),
]
ForceOpt = Annotated[
    bool,
    typer.Option("--force", help="Overwrite output files that already exist."),
]

# -- the cluster options (sweep, reproduce, study, validate) -----------------------------

SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="ADDRESS",
        help="Run on the Dask cluster of this scheduler (e.g. tcp://scheduler-host:8786); runs "
        "come back here and are stored by this process. Needs vtlab[cluster].",
        show_default=False,
    ),
]
ClusterOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        metavar="local:N",
        help="Start a local Dask cluster of N worker processes (one thread each) for "
        "this command; N at most 4 per core. Needs vtlab[cluster].",
        show_default=False,
    ),
]
TaskRunsOpt = Annotated[
    int | None,
    typer.Option(
        "--task-runs",
        metavar="K",
        help="Runs per cluster task (default: sized to about 1 s of work per task).",
        show_default=False,
    ),
]
ConnectTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--connect-timeout",
        metavar="SECONDS",
        help="How long to wait for the --scheduler to answer (at most 3600; a refused "
        "connection fails at once).",
    ),
]


def check_cluster_options(
    scheduler: str | None,
    cluster: str | None,
    jobs: int | None,
    task_runs: int | None,
    connect_timeout: float,
) -> bool:
    """Check the cluster options (before anything runs, without importing Dask);
    return whether the runs go to a cluster."""
    if scheduler is not None and cluster is not None:
        raise CliError("--cluster", "give either --scheduler or --cluster, not both")
    on_cluster = scheduler is not None or cluster is not None
    if cluster is not None:
        parse_cluster(cluster)
    if scheduler is not None and not scheduler.strip():
        raise CliError("--scheduler", "needs an address, e.g. tcp://scheduler-host:8786")
    if on_cluster and jobs is not None:
        which = "--scheduler" if scheduler is not None else "--cluster"
        raise CliError("--jobs", f"not used with {which} (the cluster's workers run the runs)")
    if task_runs is not None:
        if not on_cluster:
            raise CliError("--task-runs", "only used with --scheduler or --cluster")
        if task_runs < 1:
            raise CliError("--task-runs", f"must be at least 1, got {task_runs}")
    check_connect_timeout(connect_timeout)
    return on_cluster


# -- checks ------------------------------------------------------------------------------


def check_runs_seed(runs: int, seed: int) -> None:
    """``--runs`` in ``1..MAX_RUNS``; seeds ``SEED..SEED+RUNS-1`` within ``0..MAX_SEED``."""
    if runs < 1:
        raise CliError("--runs", f"must be at least 1, got {runs}")
    if runs > MAX_RUNS:
        raise CliError(
            "--runs", f"must be at most {MAX_RUNS} (the most runs of one call), got {runs}"
        )
    if seed < 0:
        raise CliError("--seed", f"must be a non-negative integer (0 to 2**64-1), got {seed}")
    if seed + runs - 1 > MAX_SEED:
        raise CliError("--seed", f"{seed} with --runs {runs} goes past the largest seed {MAX_SEED}")


def check_jobs(jobs: int | None) -> None:
    """``--jobs``, when given, at least 1."""
    if jobs is not None and jobs < 1:
        raise CliError("--jobs", f"must be at least 1, got {jobs}")


# -- the scenario a command line describes -----------------------------------------------

#: Presets with a ``session`` table (request/response sessions, docs/scenarios.md).
SESSION_PRESETS = ("v2g", "station")


def scenario_from_cli(
    preset: str | None,
    scenario_file: Path | None,
    *,
    cc: str | None = None,
    cc_params: Sequence[str] | None = None,
    loss: str | None = None,
    bytes_: str | None = None,
    sets: Sequence[str] | None = None,
    default: dict[str, Any] | None = None,
    profile: str | None = None,
    session: str | None = None,
    qdisc: str | None = None,
) -> Scenario:
    """Build the scenario a command line describes.

    Starts from ``{"preset": PRESET}``, the ``--scenario`` file, or (when neither is
    given and the command has one) a copy of ``default``; then applies, in
    order: ``--bytes``, ``--cc``, ``--profile``, ``--cc-param``, ``--loss``,
    ``--qdisc``, ``--session`` (``session.profile``; v2g and station only) and finally every
    ``--set`` (so ``--set session.duration=5min`` adds to it).  Raises
    :class:`CliError`/:class:`ScenarioError` on bad input; the text of every value is
    remembered so that error messages echo numbers as the user wrote them
    (:func:`vtlab.errors.remember_text`).
    """
    if preset is not None and scenario_file is not None:
        raise CliError("PRESET", "give either a PRESET or --scenario FILE, not both")
    if preset is None and scenario_file is None and default is None:
        allowed = ", ".join(_core.presets())
        raise CliError("PRESET", f"give a PRESET (one of: {allowed}) or --scenario FILE")
    if scenario_file is not None:
        sc = Scenario.from_toml(scenario_file)
    elif preset is None:
        sc = Scenario(json.loads(json.dumps(default)))
    else:
        sc = Scenario({"preset": preset})
    if bytes_ is not None:
        remember_text("bytes", bytes_, "--bytes")
        set_path(sc.spec, "bytes", parse_value(bytes_))
    if cc is not None:
        remember_text("tcp.cc", cc, "--cc")
        set_path(sc.spec, "tcp.cc", cc)
    if profile is not None:
        remember_text("tcp.profile", profile, "--profile")
        set_path(sc.spec, "tcp.profile", profile)
    for item in cc_params or ():
        key, _ = parse_assignment(item, option="--cc-param")
        remember_text(f"tcp.cc_params.{key}", item.partition("=")[2], f"--cc-param {key}")
        apply_assignment(_cc_params_table(sc), item, option="--cc-param")
    if loss is not None:
        remember_text("loss.mean_loss", loss, "--loss")
        set_path(sc.spec, "loss.mean_loss", parse_value(loss))
    if qdisc is not None:
        remember_text("qdisc", qdisc, "--qdisc")
        set_path(sc.spec, "qdisc", qdisc)
    if session is not None:
        name = sc.spec.get("preset")
        if name not in SESSION_PRESETS:
            raise CliError(
                "--session",
                f"only the {' and '.join(SESSION_PRESETS)} presets have request/response "
                f"sessions (the scenario's preset is {name!r})",
            )
        remember_text("session.profile", session, "--session")
        set_path(sc.spec, "session.profile", session)
    for item in sets or ():
        key, _ = parse_assignment(item, option="--set")
        remember_text(key, item.partition("=")[2])
        apply_assignment(sc.spec, item, option="--set")
    return sc


def _cc_params_table(sc: Scenario) -> dict[str, Any]:
    """The ``tcp.cc_params`` table, created if missing."""
    tcp = sc.spec.get("tcp")
    params = tcp.get("cc_params") if isinstance(tcp, dict) else None
    if not isinstance(params, dict):
        set_path(sc.spec, "tcp.cc_params", {})
        params = sc.spec["tcp"]["cc_params"]
    return params


def has_sessions(sc: Scenario) -> bool:
    """Whether the scenario has request/response sessions (resolved by the core)."""
    return bool(sc.expanded().get("sessions"))
