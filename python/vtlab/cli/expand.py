"""``vtlab expand``: print the fully resolved scenario as JSON (every default filled
in, base units), to check what a command line or scenario file means."""

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
from vtlab.errors import cli_errors

__all__ = ["expand_command", "register"]

CompactOpt = Annotated[
    bool,
    typer.Option("--compact", help="Print the core's canonical one-line JSON as is."),
]


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
) -> None:
    """Print the fully resolved scenario as JSON (all defaults, base units)."""
    sc = scenario_from_cli(
        preset, scenario, cc=cc, cc_params=cc_param, loss=loss, bytes_=bytes_, sets=set_
    )
    text = sc.expanded_json()
    if not compact:
        text = json.dumps(json.loads(text), indent=2)
    typer.echo(text)
