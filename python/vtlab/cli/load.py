"""``vtlab load``: one table of a sweep store, verified and filtered by axis values, as
CSV or JSON on stdout or as a CSV, JSON or Parquet file (:func:`vtlab.results.load`)."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from vtlab.cli.options import ForceOpt, out_option
from vtlab.errors import CliError, cli_errors
from vtlab.outputs import Output, check_outputs, writing

__all__ = ["load_command", "register"]

#: The formats ``vtlab load`` writes, and the file-name ending of each.
LOAD_FORMATS = {"csv": ".csv", "json": ".json", "parquet": ".parquet"}

StoreArg = Annotated[
    Path, typer.Argument(metavar="STORE", help="The folder of a vtlab sweep --store.")
]
TableOpt = Annotated[
    str,
    typer.Option("--table", help="flows, links, sessions, messages, traces, events or runs."),
]
WhereOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--where",
        help="Keep the rows whose axis has this value: AXIS=VALUE (repeatable).",
        show_default=False,
    ),
]
LoadFormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        help="csv, json or parquet (default: from --out's name, else csv).",
        show_default=False,
    ),
]
ConvertOpt = Annotated[
    bool,
    typer.Option(
        "--convert",
        help="Convert a store of the earlier layout (one file pair per run) in place.",
    ),
]
LoadOutOpt = Annotated[
    Path | None, out_option("Write the rows to this file (.csv, .json or .parquet).")
]


def register(app: typer.Typer) -> None:
    """Add ``vtlab load``."""
    app.command("load")(load_command)


def _format(fmt: str | None, out: Path | None) -> str:
    """The output format: ``--format``, else the one ``--out``'s name ends in, else csv."""
    if fmt is not None:
        if fmt not in LOAD_FORMATS:
            raise CliError("--format", f"{fmt!r} is not a format (one of: csv, json, parquet)")
        return fmt
    if out is not None:
        for name, ending in LOAD_FORMATS.items():
            if out.name.lower().endswith(ending):
                return name
    return "csv"


def _where(items: list[str]) -> dict[str, str]:
    wanted: dict[str, list[str]] = {}
    for item in items:
        axis, sep, value = item.partition("=")
        if not sep or not axis:
            raise CliError("--where", f"{item!r}: expected AXIS=VALUE")
        wanted.setdefault(axis, []).append(value)
    return {axis: values[0] if len(values) == 1 else values for axis, values in wanted.items()}


@cli_errors
def load_command(
    store: StoreArg,
    table: TableOpt = "flows",
    where: WhereOpt = None,
    fmt: LoadFormatOpt = None,
    out: LoadOutOpt = None,
    force: ForceOpt = False,
    convert: ConvertOpt = False,
) -> None:
    """Print or write one table of a sweep store, the axis values as columns."""
    from vtlab.results import TABLES, load
    from vtlab.runstore import StoredRunError, StoreError

    if convert:
        from vtlab.storeconvert import OLD_RUNS
        from vtlab.storeconvert import convert as convert_store

        try:
            done, failed = convert_store(store)
        except (StoreError, OSError) as e:
            raise CliError("STORE", str(e)) from None
        left = f", {failed} left out (failed their checks)" if failed else ""
        typer.echo(
            f"converted {done} runs{left}; the old files are in {store / OLD_RUNS}", err=True
        )
        return

    chosen = _format(fmt, out)
    if table not in TABLES:
        raise CliError("--table", f"{table!r} is not a table (one of: {', '.join(TABLES)})")
    if out is not None:
        check_outputs([Output("--out", out, "", (LOAD_FORMATS[chosen],))], force=force)
    elif chosen == "parquet":
        raise CliError("--format", "parquet needs --out FILE.parquet")
    wanted = _where(where or [])
    try:
        frame = load(store, table, where=wanted)
    except (StoreError, StoredRunError) as e:
        raise CliError("STORE", str(e)) from None
    except ValueError as e:
        raise CliError("--where", str(e).removeprefix("where: ")) from None
    if out is None:
        if chosen == "json":
            frame.to_json(sys.stdout, orient="records", lines=True)
        else:
            frame.to_csv(sys.stdout, index=False)
        return
    with writing({"--out": out}, remove=[out]):
        if chosen == "parquet":
            frame.to_parquet(out, index=False)
        elif chosen == "json":
            frame.to_json(out, orient="records", lines=True)
        else:
            frame.to_csv(out, index=False)
    typer.echo(f"wrote {out} ({len(frame)} rows)", err=True)
