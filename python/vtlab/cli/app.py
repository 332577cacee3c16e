"""The ``vtlab`` command group: its parser errors as one ``error:`` line, ``--version``,
and every command, registered in the order ``vtlab --help`` lists them.

A command line that names a command (``vtlab run ...``) gets a group of that
command's group only (:data:`ALONE`): its module is the only one of the command line
imported, which takes about 45 ms off every such call (``vtlab run v2g --bytes 1MB
--json``: 114 → 69 ms; docs/cli.md, "Start-up"). Its help, options and errors are the
whole command line's (a test compares them). ``vtlab`` and ``vtlab --help`` alone print
the whole command line's help from :data:`LISTED` (:func:`listing`), importing no
command. ``app`` is the whole command line, built when first used (a mistyped command,
shell completion)."""

import os
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

import vtlab.cli.listings as listings
from vtlab.errors import EXIT_USAGE, fail, one_line, usage_error_line

__all__ = ["ALONE", "VtlabGroup", "build", "command_line", "main", "new_group"]  # and `app`


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


def new_group() -> typer.Typer:
    """The ``vtlab`` group without its commands."""
    group = typer.Typer(
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
    group.callback()(_root)
    return group


def _show_version(value: bool) -> None:
    if value:
        typer.echo(listings.version_line())
        raise typer.Exit(0)


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


def _run(app: typer.Typer) -> None:
    import vtlab.cli.run as run

    run.register(app)


def _sweep(app: typer.Typer) -> None:
    import vtlab.cli.sweep as sweep

    sweep.register(app)


def _bench(app: typer.Typer) -> None:
    import vtlab.cli.bench as bench
    import vtlab.cli.validate as validate

    bench.register(app, run_vs_ns3=validate.bench_vs_ns3_command)


def _expand(app: typer.Typer) -> None:
    import vtlab.cli.expand as expand

    expand.register(app)


def _load(app: typer.Typer) -> None:
    import vtlab.cli.load as load

    load.register(app)


def _lte_trace(app: typer.Typer) -> None:
    import vtlab.cli.lte_trace as lte_trace

    lte_trace.register(app)


def _listings(app: typer.Typer) -> None:
    listings.register(app)


def _plot(app: typer.Typer) -> None:
    import vtlab.cli.plot as plot

    plot.register(app)


def _validate(app: typer.Typer) -> None:
    """``vtlab validate`` and its families, some also top-level (``validate-lte``)."""
    import vtlab.cli.validate as validate
    import vtlab.cli.validate_iso15118 as validate_iso15118
    import vtlab.cli.validate_kernel as validate_kernel
    import vtlab.cli.validate_lte as validate_lte
    import vtlab.cli.validate_wifi as validate_wifi
    import vtlab.cli.validate_wifi_aodv as validate_wifi_aodv

    group = validate.register(app)
    validate_lte.register_lte(group, app)
    validate_wifi.register_wifi(group, app)
    validate_wifi_aodv.register_wifi_aodv(group)
    validate_iso15118.register_iso15118(group, app)
    validate_kernel.register_kernel(group, app)


def _reproduce(app: typer.Typer) -> None:
    import vtlab.cli.reproduce as reproduce

    reproduce.register(app)


def _study(app: typer.Typer) -> None:
    import vtlab.cli.reproduce as reproduce

    reproduce.register(app, "study")


def _emulate(app: typer.Typer) -> None:
    import vtlab.cli.emulate as emulate

    emulate.register(app)


def _cc(app: typer.Typer) -> None:
    import vtlab.cli.cc as cc

    cc.register(app)


def _advise(app: typer.Typer) -> None:
    import vtlab.cli.advise as advise

    advise.register(app)


#: Every command group, in the order ``vtlab --help`` lists them: the top-level
#: commands its registration adds, and the registration. Adding a group is one line
#: here and the function that imports and registers its module.
GROUPS: tuple[tuple[tuple[str, ...], Callable[[typer.Typer], None]], ...] = (
    (("run",), _run),
    (("sweep",), _sweep),
    (("bench",), _bench),
    (("expand",), _expand),
    (("load",), _load),
    (("lte-trace",), _lte_trace),
    (("presets", "version"), _listings),
    (("plot",), _plot),
    (("validate", "validate-lte", "validate-wifi", "validate-iso15118"), _validate),
    (("reproduce",), _reproduce),
    (("study",), _study),
    (("emulate",), _emulate),
    (("cc",), _cc),
    (("advise",), _advise),
)

#: What ``vtlab --help`` lists, in its order: each command it shows and the first
#: paragraph of that command's help. ``vtlab --help`` alone is printed from these, so
#: that it imports no command's module (about 100 ms of its start-up; docs/cli.md,
#: "Start-up"); ``tests/python/test_cli_app.py`` checks it is the whole command line's
#: help, word for word, at several terminal widths.
LISTED: tuple[tuple[str, str], ...] = (
    (
        "run",
        "Run a scenario RUNS times and report mean ± 95 % confidence interval per flow\n"
        "(and per request/response session).",
    ),
    (
        "sweep",
        "Run a grid of scenario variations × seeds in parallel; report mean ± 95 % CI per point.",
    ),
    (
        "bench",
        "Time the engine on a scenario (default: NewReno, 100 MB, V2G, 5 % mean loss,\n"
        "with the default FQ-CoDel queue discs, and also without queue discs).",
    ),
    ("expand", "Print the fully resolved scenario as JSON or TOML (all defaults, base units)."),
    ("load", "Print or write one table of a sweep store, the axis values as columns."),
    (
        "lte-trace",
        "Write the LTE channel model's capacity as a mahimahi trace (lte-cabin's\n"
        "downlink or uplink, as the run with --seed sees it; docs/cellular.md).",
    ),
    ("presets", "List the scenario presets."),
    ("version", "Print the vtlab version."),
    (
        "plot",
        "Plot TCP state over time from a trace or events file, or a metric against a\n"
        "sweep axis with 95 % confidence intervals.",
    ),
    (
        "reproduce",
        "Reproduce a paper's tables and figures, with a report comparing them to the\n"
        "published numbers.",
    ),
    (
        "study",
        "Run one of vtlab's own studies (no paper: its findings are its own):\n"
        "tables, figures and a report.",
    ),
    (
        "emulate",
        "Join two network namespaces through the scenario's path (every link, queue disc\n"
        "and loss model of the first flow's path, per direction) in real time; run CMD in "
        "the\nnear one, --far CMD in the far one. Needs root. Exit status: the near "
        "command's.",
    ),
    (
        "advise",
        "Print the settings that keep a charging session's survival at or above --target.",
    ),
    (
        "validate",
        "Cross-validate vtlab against ns-3 and write OUT/report.md and OUT/agreement.csv "
        "(needs the ns-3 wheel: the ns3 extra of vtlab, and g++).",
    ),
    ("cc", "Congestion controls."),
)

#: The registration that adds each top-level command.
ALONE: dict[str, Callable[[typer.Typer], None]] = {
    name: register for names, register in GROUPS for name in names
}


def build(command: str | None = None) -> typer.Typer:
    """The command line: every command, or with ``command`` (a key of
    :data:`ALONE`) that command alone (with those its group's registration adds)."""
    group = new_group()
    registrations = [ALONE[command]] if command is not None else [r for _, r in GROUPS]
    for register in registrations:
        register(group)
    return group


_WHOLE: list[typer.Typer] = []


def _listed_only() -> None:  # pragma: no cover - the listing's commands never run
    raise AssertionError("a command of the listing ran")


def listing() -> typer.Typer:
    """The group ``vtlab --help`` alone is printed from: the ``vtlab`` group with each
    command of :data:`LISTED` as a placeholder carrying its help, no module imported."""
    group = new_group()
    for name, text in LISTED:
        group.command(name, help=text)(_listed_only)
    return group


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole command line, built once, when first used
        if not _WHOLE:
            _WHOLE.append(build())
        return _WHOLE[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def command_line(argv: Sequence[str]) -> typer.Typer:
    """The group that runs ``argv`` (the arguments after ``vtlab``): the named
    command's group of commands alone, none for ``--version`` alone, the listing for
    ``--help`` alone or nothing, else the whole command line (a mistyped command,
    ``--help`` with more, shell completion)."""
    if "_VTLAB_COMPLETE" in os.environ:
        return __getattr__("app")
    if list(argv) == ["--version"]:
        return new_group()
    if list(argv) in ([], ["--help"]):
        return listing()
    if argv and argv[0] in ALONE:
        return build(argv[0])
    return __getattr__("app")


def main() -> None:
    """Run the ``vtlab`` command line on ``sys.argv``."""
    command_line(sys.argv[1:])(prog_name="vtlab")
