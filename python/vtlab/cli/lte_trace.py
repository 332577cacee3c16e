"""``vtlab lte-trace``: write the LTE channel model's capacity as a mahimahi trace (and,
optionally, its per-TTI series), as the run with ``--seed`` sees it (docs/cellular.md)."""

from pathlib import Path
from typing import Annotated

import typer

from vtlab.cli.options import (
    ForceOpt,
    ScenarioOpt,
    SetOpt,
    check_runs_seed,
    scenario_from_cli,
    seed_option,
)
from vtlab.errors import CliError, cli_errors
from vtlab.outputs import Output, check_outputs, writing

__all__ = ["lte_trace_command", "register"]

OutArg = Annotated[
    Path,
    typer.Argument(metavar="OUT", help="The mahimahi trace to write (one timestamp per line)."),
]
PresetOpt = Annotated[
    str | None, typer.Option("--preset", help="Scenario preset (default lte-cabin).")
]
SecondsOpt = Annotated[
    float, typer.Option("--seconds", help="Length of the trace, seconds (at most 3600).")
]
SeedOpt = Annotated[int, seed_option("Seed of the run whose channel it is.")]
DirectionOpt = Annotated[
    str, typer.Option("--direction", help="down (eNB to car) or up (car to eNB).")
]
SeriesOpt = Annotated[
    Path | None,
    typer.Option(
        "--series",
        metavar="FILE.parquet",
        help="Also write the per-TTI series (bytes, lost, rsrp_dbm, sinr_db, cqi, itbs).",
    ),
]


def register(app: typer.Typer) -> None:
    """Add ``vtlab lte-trace``."""
    app.command("lte-trace")(lte_trace_command)


@cli_errors
def lte_trace_command(
    out: OutArg,
    preset: PresetOpt = None,
    scenario: ScenarioOpt = None,
    set_: SetOpt = None,
    seconds: SecondsOpt = 60.0,
    seed: SeedOpt = 1,
    direction: DirectionOpt = "down",
    series: SeriesOpt = None,
    force: ForceOpt = False,
) -> None:
    """Write the LTE channel model's capacity as a mahimahi trace (lte-cabin's
    downlink or uplink, as the run with --seed sees it; docs/cellular.md)."""
    from vtlab.cellular import (
        DIRECTIONS,
        MAX_SECONDS,
        MIN_SECONDS,
        channel_series,
        to_mahimahi,
        write_mahimahi,
    )

    if direction not in DIRECTIONS:
        raise CliError("--direction", f"expected down or up, got {direction!r}")
    if not (MIN_SECONDS <= seconds <= MAX_SECONDS):
        raise CliError(
            "--seconds", f"{seconds:g} is outside [{MIN_SECONDS:g}, {MAX_SECONDS:g}] (1 ms to 1 h)"
        )
    check_runs_seed(1, seed)
    outputs = [Output("OUT", out)]
    if series is not None:
        outputs.append(Output("--series", series, suffixes=(".parquet",)))
    check_outputs(outputs, force=force)
    sc = scenario_from_cli(preset, scenario, sets=set_, default={"preset": "lte-cabin"})
    try:
        df = channel_series(sc, seconds, seed, direction)
    except ValueError as exc:
        field, _, problem = str(exc).partition(": ")
        if field != "scenario":
            raise
        raise CliError("--scenario" if scenario is not None else "--preset", problem) from None
    delivered = ~df["lost"].to_numpy()
    stamps = to_mahimahi(df["time_ms"].to_numpy()[delivered], df["bytes"].to_numpy()[delivered])
    if not stamps:
        raise CliError("--seconds", "the channel delivered less than one opportunity: no trace")
    with writing({"OUT": out}, remove=[out]):
        write_mahimahi(out, stamps)
    if series is not None:
        with writing({"--series": series}, remove=[series]):
            df.to_parquet(series, index=False)
    rate = df["bytes"].to_numpy()[delivered].sum() * 8 / seconds / 1e6
    typer.echo(
        f"wrote {out} ({len(stamps)} opportunities, {rate:.2f} Mbit/s mean, "
        f"RSRP {df['rsrp_dbm'].mean():.1f} dBm mean)" + (f" and {series}" if series else "")
    )
