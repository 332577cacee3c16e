"""The ``vtlab`` command group: its parser errors as one ``error:`` line, ``--version``,
and every command, registered in the order ``vtlab --help`` lists them."""

import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

import vtlab.cli.advise as advise
import vtlab.cli.bench as bench
import vtlab.cli.cc as cc
import vtlab.cli.emulate as emulate
import vtlab.cli.expand as expand
import vtlab.cli.listings as listings
import vtlab.cli.load as load
import vtlab.cli.lte_trace as lte_trace
import vtlab.cli.plot as plot
import vtlab.cli.reproduce as reproduce
import vtlab.cli.run as run
import vtlab.cli.sweep as sweep
import vtlab.cli.validate as validate
import vtlab.cli.validate_iso15118 as validate_iso15118
import vtlab.cli.validate_kernel as validate_kernel
import vtlab.cli.validate_lte as validate_lte
import vtlab.cli.validate_wifi as validate_wifi
import vtlab.cli.validate_wifi_aodv as validate_wifi_aodv
from vtlab.errors import EXIT_USAGE, fail, one_line, usage_error_line

__all__ = ["VtlabGroup", "app", "main"]


try:  # typer ≥ 0.26 vendors click and names its exception base TyperException
    from typer import TyperException as _ParserError  # type: ignore[attr-defined]
except ImportError:  # typer < 0.26, on click (the version pyproject.toml pins)
    from click import ClickException as _ParserError


class VtlabGroup(TyperGroup):
    """The ``vtlab`` command group: the parser's own errors (unknown option or
    command, bad value or choice, missing argument) are printed like every other
    user error, as one ``error: <option>: <problem>`` line with exit status 2."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.Abort:
            print("Aborted!", file=sys.stderr)
            sys.exit(1)
        except _ParserError as exc:
            names = {cls.__name__ for cls in type(exc).__mro__}
            if "NoArgsIsHelpError" in names:  # the help has been shown
                text = str(getattr(exc, "message", "") or "")
                if text.strip():
                    print(text, file=sys.stderr)
                sys.exit(EXIT_USAGE)
            if "UsageError" in names:
                fail(usage_error_line(exc))
            format_message = getattr(exc, "format_message", None)
            message = format_message() if format_message is not None else str(exc)
            print(f"error: {one_line(message)}", file=sys.stderr)
            sys.exit(getattr(exc, "exit_code", 1))
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    name="vtlab",
    help="vtlab: packet-level TCP congestion-control simulator for vehicle links.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_show_locals=False,
    cls=VtlabGroup,
    # Plain help text: typer's rich help panels cost ~70 ms of start-up (rich and
    # markdown-it imported for every --help).
    rich_markup_mode=None,
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(listings.version_line())
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the vtlab version and exit.",
            callback=_show_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """vtlab: packet-level TCP congestion-control simulator for vehicle links."""


run.register(app)
sweep.register(app)
bench.register(app, run_vs_ns3=validate.bench_vs_ns3_command)
expand.register(app)
load.register(app)
lte_trace.register(app)
listings.register(app)
plot.register(app)
validate_group = validate.register(app)
validate_lte.register_lte(validate_group, app)
validate_wifi.register_wifi(validate_group, app)
validate_wifi_aodv.register_wifi_aodv(validate_group)
validate_iso15118.register_iso15118(validate_group, app)
validate_kernel.register_kernel(validate_group, app)
reproduce.register(app)
reproduce.register(app, "study")
emulate.register(app)
cc.register(app)
advise.register(app)


def main() -> None:
    """Run the ``vtlab`` command line on ``sys.argv``."""
    app(prog_name="vtlab")
