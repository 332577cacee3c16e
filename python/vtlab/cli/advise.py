"""``vtlab advise``: the settings that keep a charging session alive on a cable, with
the estimated survival and its interval each, and where the runs behind them are
stored (docs/cli.md#vtlab-advise)."""

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from vtlab.cli.options import jobs_option, quiet_option
from vtlab.errors import cli_errors, fail

if TYPE_CHECKING:  # the advice module is imported when the command runs
    from vtlab.advice import Advice

__all__ = ["advise_command", "register"]


def register(app: typer.Typer) -> None:
    """Add ``vtlab advise``."""
    app.command("advise")(advise_command)


def _fraction(text: str, field: str) -> float:
    """``0.0001`` or ``"0.01%"`` → a fraction."""
    raw = text.strip()
    try:
        return float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        fail(f"{field}: '{text}' is not a number or a percentage")


def _progress(line: str) -> None:
    """A line on stderr (a terminal's) as each setting's estimate is done."""
    typer.echo(f"estimated {line}", err=True)


@cli_errors
def advise_command(
    link: Annotated[
        str, typer.Argument(help="Preset (v2g) or scenario file with the PLC cable.")
    ] = "v2g",
    loss: Annotated[
        str | None, typer.Option("--loss", help="Mean loss each way (0.0001 or 0.01%).")
    ] = None,
    burst: Annotated[str, typer.Option("--burst", help="Burst size N or MIN-MAX packets.")] = "1-4",
    loss_trace: Annotated[
        str | None, typer.Option("--loss-trace", help="Measured losses: 0/1 per packet.")
    ] = None,
    session: Annotated[str, typer.Option("--session", help="Session profile.")] = "iso15118-2-dc",
    duration: Annotated[str, typer.Option("--duration", help="Charging loop length.")] = "30min",
    processing: Annotated[
        str | None, typer.Option("--processing", help="The charger's processing time.")
    ] = None,
    period: Annotated[str | None, typer.Option("--period", help="Loop period.")] = None,
    target: Annotated[str, typer.Option("--target", help="Survival to reach, in (0, 1).")] = "0.99",
    runs: Annotated[int, typer.Option("--runs", "-n", help="Sessions per number of bursts.")] = 200,
    stack: Annotated[
        list[str] | None, typer.Option("--stack", help="Stacks to try (default: all).")
    ] = None,
    out: Annotated[
        str, typer.Option("--out", "-o", help="Where the runs are stored.")
    ] = "out/advise",
    jobs: Annotated[
        int | None, jobs_option("Settings estimated at once (default: one per core).")
    ] = None,
    quiet: Annotated[
        bool, quiet_option("No line on a terminal's stderr as each setting is estimated.")
    ] = False,
) -> None:
    """Print the settings that keep a charging session's survival at or above --target."""
    from vtlab import survival
    from vtlab.advice import advise

    goal = _fraction(target, "--target")
    mean = None if loss is None else _fraction(loss, "--loss")
    stacks = tuple(stack) if stack else tuple(survival.STACKS)
    advice = advise(
        link,
        loss=mean,
        burst=burst,
        loss_trace=loss_trace,
        session=session,
        duration=duration,
        processing=processing,
        period=period,
        target=goal,
        runs=runs,
        stacks=stacks,
        out=out,
        jobs=jobs,
        log=None if quiet or not sys.stderr.isatty() else _progress,
    )
    _print(advice, session, duration, goal)


def _print(advice: "Advice", session: str, duration: str, goal: float) -> None:
    """The settings that reach ``goal``, best first, and the runs behind each; none:
    one line naming the best setting found, exit 2."""
    keeping = advice.keeping
    if not keeping:
        b = advice.best
        fail(
            f"no listed setting reaches survival {goal:g}; the best is '{b.setting}': "
            f"{b.survival:.6f} [{b.lower:.6f}, {b.upper:.6f}] ({b.runs} runs, {b.evidence})"
            + (
                "; all its sessions survived: more --runs narrows the interval"
                if all(s == n for k, n, s in b.per_k if k > 0) and b.upper >= goal
                else ""
            )
        )
    lo, hi = advice.burst
    typer.echo(
        f"{session}, {duration} loop, mean loss {advice.mean_loss * 100:.6g} % each way, "
        f"bursts of {lo}–{hi} packets; target survival {goal:g} (lower end of a 95 % interval)"
    )
    typer.echo(f"{'setting':<42} {'survival':>10} {'95 % interval':>23} {'runs':>6}  k≤")
    for v in keeping:
        typer.echo(
            f"{v.setting:<42} {v.survival:>10.6f} [{v.lower:.6f}, {v.upper:.6f}] "
            f"{v.runs:>6}  {v.k_max}"
        )
    typer.echo("evidence (sessions with exactly k bursts: survived/runs):")
    for v in keeping:
        counts = ", ".join(f"k={k}: {s}/{n}" for k, n, s in v.per_k)
        typer.echo(f"  {v.setting}: {counts}; {v.evidence}")
