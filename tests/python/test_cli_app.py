"""The command line a call gets: a command line that names a command gets that
command's group alone (:data:`vtlab.cli.app.ALONE`), which must behave as the whole
command line does."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.main import get_command
from typer.testing import CliRunner

import vtlab
from vtlab.cli import app as cli_app

RUNNER = CliRunner()


def _outcome(group: object, args: list[str]) -> tuple[int, str, str]:
    res = RUNNER.invoke(group, args, catch_exceptions=False)  # type: ignore[arg-type]
    return res.exit_code, res.stdout, res.stderr


def _commands(group: object) -> dict[str, object]:
    return dict(get_command(group).commands)  # type: ignore[arg-type,attr-defined]


def test_the_groups_name_every_command_of_the_whole_line_once() -> None:
    whole = _commands(cli_app.app)
    names = [n for names, _ in cli_app.GROUPS for n in names]
    assert sorted(names) == sorted(whole)
    for names, _ in cli_app.GROUPS:
        for name in names:  # each group alone has the commands it names, no others
            assert sorted(_commands(cli_app.build(name))) == sorted(names)


@pytest.mark.parametrize("name", sorted(cli_app.ALONE))
def test_a_command_alone_has_the_whole_lines_help_and_errors(name: str) -> None:
    alone = cli_app.build(name)
    whole = cli_app.app
    calls = [[name, "--help"], [name, "--no-such-option"]]
    sub = _commands(whole)[name]
    for child in sorted(getattr(sub, "commands", {})):  # a group's commands (`cc list`)
        calls += [[name, child, "--help"], [name, child, "--no-such-option"]]
    for args in calls:
        got, want = _outcome(alone, args), _outcome(whole, args)
        assert got == want, args
    assert _outcome(whole, [name, "--no-such-option"])[0] == 2  # the check sees errors


@pytest.mark.parametrize("columns", ["40", "80", "200"])
@pytest.mark.parametrize("args", [[], ["--help"]])
def test_the_listing_prints_the_whole_lines_help(args: list[str], columns: str) -> None:
    # The help of `vtlab` and `vtlab --help` comes from LISTED's placeholders; it must
    # be the whole command line's, word for word, at every width (click shortens each
    # command's first paragraph to the width left of the names).
    env = {"COLUMNS": columns}
    got = RUNNER.invoke(cli_app.listing(), args, env=env)  # type: ignore[arg-type]
    want = RUNNER.invoke(cli_app.app, args, env=env)  # type: ignore[arg-type]
    assert (got.exit_code, got.stdout, got.stderr) == (want.exit_code, want.stdout, want.stderr)
    shown = want.stdout + want.stderr  # no arguments: the help on stderr, and status 2
    assert "lte-trace" in shown and "validate-lte" not in shown
    assert want.exit_code == (2 if args == [] else 0)


def test_the_listing_is_each_shown_commands_first_paragraph() -> None:
    # A command whose help changes fails here, naming it: update LISTED in
    # vtlab/cli/app.py to the first paragraph of its new help.
    whole = get_command(cli_app.app)
    commands = [whole.get_command(None, n) for n in whole.list_commands(None)]  # type: ignore[arg-type,attr-defined]
    shown = [(c.name, (c.help or "").split("\n\n")[0]) for c in commands if not c.hidden]
    assert list(cli_app.LISTED) == shown
    assert list(_commands(cli_app.listing())) == [name for name, _ in shown]


def test_the_group_a_command_line_gets() -> None:
    assert set(_commands(cli_app.command_line(["--help"]))) == {n for n, _ in cli_app.LISTED}
    assert cli_app.command_line(["--help", "run"]) is cli_app.app
    assert cli_app.command_line(["rn"]) is cli_app.app  # a typo: the whole line's hint
    validate = _commands(cli_app.command_line(["validate", "lte"]))["validate"]
    assert "lte" in validate.commands  # type: ignore[attr-defined]
    assert set(_commands(cli_app.command_line(["run", "v2g"]))) == {"run"}
    assert _commands(cli_app.command_line(["--version"])) == {}
    assert _outcome(cli_app.command_line(["--version"]), ["--version"]) == (
        0,
        f"vtlab {vtlab.__version__}\n",
        "",
    )


def test_shell_completion_gets_the_whole_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_VTLAB_COMPLETE", "bash_complete")
    assert cli_app.command_line(["run"]) is cli_app.app


def _modules_after(*cli_args: str) -> list[str]:
    code = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
        f"sys.argv = ['vtlab', *{list(cli_args)!r}]\n"
        "from vtlab.cli import main\n"
        "main()\n"
    )
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_vtlab_run_imports_no_other_command() -> None:
    mods = _modules_after("run", "v2g", "--bytes", "100kB", "--json")
    assert "vtlab.cli.run" in mods
    others = [
        m
        for m in mods
        if m.startswith(("vtlab.cli.validate", "vtlab.validation", "vtlab.cli.sweep"))
        or m in ("vtlab.advice", "vtlab.emulation", "vtlab.cli.reproduce")
    ]
    assert others == []
    # Control: a command that needs them does import them.
    assert "vtlab.cli.validate" in _modules_after("validate", "--help")


def test_vtlab_help_imports_no_command() -> None:
    mods = _modules_after("--help")
    assert [m for m in mods if m.startswith("vtlab.cli.")] == [
        "vtlab.cli.app",
        "vtlab.cli.listings",
    ]


def test_the_packages_lazy_attributes() -> None:
    from vtlab import advice, emulation

    assert vtlab.advise is advice.advise
    assert vtlab.Emulation is emulation.Emulation and vtlab.emulate is emulation.emulate
    assert {"advise", "Emulation", "emulate"} <= set(dir(vtlab))
    assert set(vtlab.__all__) <= set(dir(vtlab))
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = vtlab.no_such_thing  # type: ignore[attr-defined]


def test_the_typed_command_is_the_vtlab_programs_alone(tmp_path):
    """A report's command line is this process's only when it is the ``vtlab`` program
    (the script, or ``python -m vtlab``); under another program's ``__main__.py``
    (``python -m pytest ...``, as CI may start the tests) it is empty, not that
    program's arguments as a vtlab command."""
    import subprocess
    import sys

    code = "from vtlab.cli.display import typed_command; print(typed_command())"
    main = tmp_path / "__main__.py"  # another program's, run as python -m would
    main.write_text(code)
    script = tmp_path / "vtlab"  # the installed script's name
    script.write_text(code)

    def command(*argv: str) -> str:
        proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    assert command(str(main), "-q", "tests") == ""
    assert command(str(script), "validate", "lte", "--seeds", "2") == (
        "vtlab validate lte --seeds 2"
    )
    assert command("-c", code) == ""
