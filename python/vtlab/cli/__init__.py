"""The ``vtlab`` command line (typer), one module per command group.

    app.py        the ``vtlab`` group (parser errors, ``--version``) and the list of
                  commands, in the order ``vtlab --help`` shows them
    options.py    the options several commands share, declared once; the scenario a
                  command line describes (:func:`~vtlab.cli.options.scenario_from_cli`);
                  the checks of ``--runs``/``--seed``, ``--jobs`` and the cluster options
    display.py    the tables and JSON rows ``run`` and ``sweep`` print
    run.py        ``vtlab run``
    sweep.py      ``vtlab sweep``
    bench.py      ``vtlab bench``
    expand.py     ``vtlab expand``
    lte_trace.py  ``vtlab lte-trace``
    listings.py   ``vtlab presets``, ``vtlab version``
    cc.py         ``vtlab cc list``, ``vtlab cc table``
    reproduce.py  ``vtlab reproduce``, ``vtlab study``
    emulate.py    ``vtlab emulate``

Adding a command group: a module here with a ``register(app)`` that adds its
commands, and in ``app.py`` the function that imports and registers it and its line
in ``GROUPS``. Each command function is decorated
with :func:`vtlab.errors.cli_errors`, so that bad input prints ``error: <field>:
<problem>`` and exits with status 2; it raises :class:`vtlab.errors.CliError`
``(field, problem)`` for bad input. Options come from :mod:`vtlab.cli.options` where
another command has them already; files to write are listed as
:class:`vtlab.outputs.Output` and checked with :func:`vtlab.outputs.check_outputs`
before anything runs.

Start-up time matters (every ``vtlab`` invocation pays it): no module of the command
line imports pandas, numpy, pyarrow, scipy, matplotlib or Dask at import time;
commands import what they need inside their function. Importing this package
imports none of the commands, so a module can use :mod:`vtlab.cli.options` without
building the whole command line; ``main`` builds only the named command's group where
the command line names one (:func:`vtlab.cli.app.command_line`).
"""

__all__ = ["main"]


def main() -> None:
    """Entry point of the ``vtlab`` script and of ``python -m vtlab``."""
    from vtlab.cli.app import main as run_command_line

    run_command_line()
