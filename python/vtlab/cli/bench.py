"""``vtlab bench``: time the engine on a scenario (and the command line's start-up), or,
with ``--vs-ns3``, compare it with ns-3 on the same scenario."""

import json
import statistics
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from vtlab.api import MAX_SEED
from vtlab.cli.options import (
    BytesOpt,
    CcOpt,
    CcParamOpt,
    LossOpt,
    PresetArg,
    ProfileOpt,
    QdiscOpt,
    ScenarioOpt,
    SetOpt,
    json_option,
    scenario_from_cli,
    seed_option,
)
from vtlab.errors import CliError, cli_errors

if TYPE_CHECKING:
    from vtlab.bench import BenchResult

__all__ = ["register"]

RepeatOpt = Annotated[
    int | None,
    typer.Option(
        "--repeat",
        "-r",
        help="Timed repetitions (default 5; 3 with --vs-ns3).",
        show_default=False,
    ),
]
SeedOpt = Annotated[int, seed_option("Seed of every repetition.")]
VsNs3Opt = Annotated[
    bool,
    typer.Option(
        "--vs-ns3",
        help="Also run the scenario in ns-3 (needs the ns3 extra) and compare wall time "
        "and peak memory per run.",
    ),
]
JsonOpt = Annotated[bool, json_option("Print the measurements as one JSON object.")]
StartupOpt = Annotated[
    bool,
    typer.Option(
        "--startup/--no-startup",
        help="Also time the start-up of the command line: `vtlab --help` and "
        "`vtlab run v2g --bytes 1MB --json` as whole processes (median of REPEAT).",
    ),
]


def register(app: typer.Typer, *, run_vs_ns3: Callable[..., None]) -> None:
    """Add ``vtlab bench``; ``--vs-ns3`` calls ``run_vs_ns3(scenario, seed=, repeat=,
    json_out=)`` (``repeat`` None: its own default)."""

    @app.command("bench")
    @cli_errors
    def bench_command(
        preset: PresetArg = None,
        scenario: ScenarioOpt = None,
        cc: CcOpt = None,
        cc_param: CcParamOpt = None,
        profile: ProfileOpt = None,
        qdisc: QdiscOpt = None,
        loss: LossOpt = None,
        bytes_: BytesOpt = None,
        set_: SetOpt = None,
        repeat: RepeatOpt = None,
        seed: SeedOpt = 1,
        vs_ns3: VsNs3Opt = False,
        json_out: JsonOpt = False,
        startup: StartupOpt = True,
    ) -> None:
        """Time the engine on a scenario (default: NewReno, 100 MB, V2G, 5 % mean loss,
        with the default FQ-CoDel queue discs, and also without queue discs)."""
        from vtlab.bench import DEFAULT_BENCH_SPEC, bench, startup_times

        if repeat is not None and repeat < 1:
            raise CliError("--repeat", f"must be at least 1, got {repeat}")
        if seed < 0 or seed > MAX_SEED:
            raise CliError("--seed", f"must be in [0, {MAX_SEED}], got {seed}")
        sc = scenario_from_cli(
            preset,
            scenario,
            cc=cc,
            cc_params=cc_param,
            loss=loss,
            bytes_=bytes_,
            sets=set_,
            default=DEFAULT_BENCH_SPEC,
            profile=profile,
            qdisc=qdisc,
        )
        if vs_ns3:
            run_vs_ns3(sc, seed=seed, repeat=repeat, json_out=json_out)
            return
        repeat = 5 if repeat is None else repeat
        res = bench(sc, seed=seed, repeat=repeat)
        if startup:
            res.startup_s = startup_times(repeat=repeat)
        if json_out:
            typer.echo(json.dumps(res.as_dict()))
            return
        _print_bench(res, repeat)


def _print_bench(res: "BenchResult", repeat: int) -> None:
    """The measurements, one line each."""
    walls = ", ".join(f"{w * 1e3:.1f}" for w in res.wall_s)
    typer.echo(f"scenario {res.scenario_hash} · seed {res.seed} · vtlab {res.version}")
    typer.echo(f"wall time     {res.median_wall_s * 1e3:.1f} ms median of {repeat} ({walls} ms)")
    if res.droptail_ratio is not None:
        droptail_ms = statistics.median(res.droptail_wall_s) * 1e3
        typer.echo(
            f"no qdisc      {droptail_ms:.1f} ms median of {repeat} with drop-tail device "
            f"queues alone: the queue discs cost {res.droptail_ratio:.2f}×"
        )
    typer.echo(f"events        {res.events:,} ({res.events_per_s / 1e6:.2f} M events/s)")
    typer.echo(
        f"packets       {res.packets:,} link transmissions ({res.packets_per_s / 1e6:.2f} M/s)"
    )
    typer.echo(f"simulated     {res.sim_time_s:.1f} s ({res.speedup:,.0f}× real time)")
    typer.echo(f"peak RSS      {res.peak_rss_mib:.1f} MiB (whole Python process)")
    for name, walls_s in res.startup_s.items():
        median_ms = statistics.median(walls_s) * 1e3
        typer.echo(f"start-up      {median_ms:.0f} ms median of {len(walls_s)}: {name}")
