"""``vtlab cc``: the congestion controls. ``cc list`` describes each (parameters,
ranges, source); ``cc table`` measures the goodput of every one on the V2G cable."""

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from vtlab import _core
from vtlab.cli.display import console, typed_command
from vtlab.cli.options import (
    BytesOpt,
    ForceOpt,
    check_jobs,
    check_runs_seed,
    jobs_option,
    json_option,
    out_option,
    runs_option,
    store_option,
)
from vtlab.errors import CliError, cli_errors
from vtlab.outputs import Output, check_output_dir, check_outputs, writing

__all__ = ["cc_app", "cc_list_command", "cc_table_command", "register"]

cc_app = typer.Typer(help="Congestion controls.", no_args_is_help=True, rich_markup_mode=None)

JsonOpt = Annotated[bool, json_option("Print the list as JSON.")]
RunsOpt = Annotated[int, runs_option("Seeds per cell.")]
LossesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--loss",
        help="Mean loss rates (repeatable; default 0.25%, 1%, 5%).",
        show_default=False,
    ),
]
ProfilesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--profile", help="Profiles (repeatable; default ns3 and linux).", show_default=False
    ),
]
CcsOpt = Annotated[
    list[str] | None,
    typer.Option("--cc", help="Algorithms (repeatable; default: all).", show_default=False),
]
StoreOpt = Annotated[Path | None, store_option("Campaign directory (resumable).")]
JobsOpt = Annotated[int | None, jobs_option("Parallel runs.")]
OutOpt = Annotated[
    Path | None, out_option("Write the Markdown table to this .md file (default: stdout).")
]


def register(app: typer.Typer) -> None:
    """Add the ``vtlab cc`` group (``cc list``, ``cc table``)."""
    app.add_typer(cc_app, name="cc")


@cc_app.command("list")
@cli_errors
def cc_list_command(json_out: JsonOpt = False) -> None:
    """List every congestion control with description, parameters and source."""
    ccs = _core.congestion_controls()
    if json_out:
        typer.echo(json.dumps(ccs, indent=2))
        return
    from rich.markup import escape
    from rich.table import Table

    out = console()
    for i, cc in enumerate(ccs):
        if i:
            out.print()
        out.print(f"[bold]{escape(cc['name'])}[/bold] — {escape(cc['description'])}")
        out.print(f"  source: {cc['source']}", markup=False)
        params = cc.get("params") or []
        if not params:
            out.print("  parameters: none")
            continue
        table = Table(box=None, padding=(0, 2), show_edge=False)
        table.add_column("parameter")
        table.add_column("default", justify="right")
        table.add_column("range")
        table.add_column("description")
        for p in params:
            bounds = f"[{_num(p.get('min'))}, {_num(p.get('max'))}]" if "min" in p else ""
            table.add_row(
                escape(str(p["name"])),
                escape(_num(p["default"])),
                escape(bounds),
                escape(str(p.get("doc", ""))),
            )
        out.print(table)


def _num(value: Any) -> str:
    """A parameter value for display: ``0.5``, ``3``, ``inf``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@cc_app.command("table")
@cli_errors
def cc_table_command(
    runs: RunsOpt = 6,
    bytes_: BytesOpt = None,
    loss: LossesOpt = None,
    profile: ProfilesOpt = None,
    cc: CcsOpt = None,
    store: StoreOpt = None,
    jobs: JobsOpt = None,
    out: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Goodput of every algorithm on the V2G cable, both profiles, as a Markdown table."""
    from vtlab.cctable import DEFAULT_LOSSES, DEFAULT_PROFILES, cc_table, to_markdown
    from vtlab.runstore import StoreError
    from vtlab.sweep import AxisError

    check_runs_seed(runs, 1)
    check_jobs(jobs)
    if store is not None:
        check_output_dir("--store", store)
    for option, values in (("--loss", loss), ("--profile", profile), ("--cc", cc)):
        for i, value in enumerate(values or ()):
            if value in (values or ())[:i]:
                raise CliError(option, f"value '{value}' is given more than once")
    if out is not None:
        check_outputs([Output("--out", out, "", (".md",))], force=force)
    size = bytes_ or "100MB"
    try:
        with writing({"--store": store}):
            table = cc_table(
                runs=runs,
                bytes_=size,
                losses=loss or DEFAULT_LOSSES,
                profiles=profile or DEFAULT_PROFILES,
                algorithms=cc,
                store=store,
                jobs=jobs,
            )
    except AxisError as e:  # e.g. --loss 1% --loss 0.01: one setting
        option = {"algorithm": "--cc", "tcp_profile": "--profile", "loss": "--loss"}
        raise CliError(option.get(e.axis, e.axis), e.problem) from None
    except StoreError as e:
        raise CliError("--store", str(e)) from None
    # As typed where this process is the vtlab program; else (called from Python) the
    # command's name alone.
    command = typed_command() or "vtlab cc table"
    text = to_markdown(table, runs=runs, bytes_=size, command=command)
    if out is None:
        typer.echo(text, nl=False)
    else:
        with writing({"--out": out}, remove=[out]):
            out.write_text(text)
        console(stderr=True).print(f"wrote {out}", markup=False)
