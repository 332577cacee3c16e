"""``vtlab expand``: print the fully resolved scenario as JSON or TOML (every default
filled in, base units), to check what a command line or scenario file means; the
output saved to a ``.json`` or ``.toml`` file runs again with ``--scenario``."""

import json
from typing import Annotated

import typer

from vtlab.cli.options import (
    BytesOpt,
    CcOpt,
    CcParamOpt,
    LossOpt,
    PresetArg,
    ScenarioOpt,
    SetOpt,
    scenario_from_cli,
)
from vtlab.errors import CliError, cli_errors

__all__ = ["expand_command", "register"]

CompactOpt = Annotated[
    bool,
    typer.Option("--compact", help="Print the core's canonical one-line JSON as is."),
]
ExpandFormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        help="json or toml (TOML leaves out unset fields, which it cannot write as null).",
    ),
]
EXPAND_FORMATS = ("json", "toml")


def register(app: typer.Typer) -> None:
    """Add ``vtlab expand``."""
    app.command("expand")(expand_command)


@cli_errors
def expand_command(
    preset: PresetArg = None,
    scenario: ScenarioOpt = None,
    cc: CcOpt = None,
    cc_param: CcParamOpt = None,
    loss: LossOpt = None,
    bytes_: BytesOpt = None,
    set_: SetOpt = None,
    compact: CompactOpt = False,
    fmt: ExpandFormatOpt = "json",
) -> None:
    """Print the fully resolved scenario as JSON or TOML (all defaults, base units)."""
    if fmt not in EXPAND_FORMATS:
        raise CliError("--format", f"{fmt!r} is not a format (one of: json, toml)")
    if compact and fmt != "json":
        raise CliError("--compact", "only with --format json")
    sc = scenario_from_cli(
        preset, scenario, cc=cc, cc_params=cc_param, loss=loss, bytes_=bytes_, sets=set_
    )
    text = sc.expanded_json()
    if fmt == "toml":
        import tomli_w

        typer.echo(tomli_w.dumps(_without_nulls(json.loads(text))), nl=False)
        return
    if not compact:
        text = json.dumps(json.loads(text), indent=2)
    typer.echo(text)


def _without_nulls(value: object) -> object:
    """``value`` without the object members that are ``null`` (an unset field, such as
    ``stop_ns``: TOML has no null, and a missing field reads back as unset)."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value
