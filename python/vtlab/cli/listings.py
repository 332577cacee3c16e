"""``vtlab presets`` and ``vtlab version``: what this build of vtlab has."""

import typer

from vtlab import _core
from vtlab.errors import cli_errors

__all__ = ["presets_command", "register", "version_command", "version_line"]


def register(app: typer.Typer) -> None:
    """Add ``vtlab presets`` and ``vtlab version``."""
    app.command("presets")(presets_command)
    app.command("version")(version_command)


def version_line() -> str:
    """``vtlab <version>``, as ``vtlab version`` and ``vtlab --version`` print it."""
    return f"vtlab {_core.version()}"


@cli_errors
def presets_command() -> None:
    """List the scenario presets."""
    for name in _core.presets():
        typer.echo(name)


def version_command() -> None:
    """Print the vtlab version."""
    typer.echo(version_line())
