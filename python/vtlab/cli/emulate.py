"""``vtlab emulate``: run real programs in two network namespaces joined through a
scenario's path in real time (docs/emulation.md)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from vtlab import _core
from vtlab.cli.options import (
    CcOpt,
    LossOpt,
    PresetArg,
    ProfileOpt,
    QdiscOpt,
    ScenarioOpt,
    SetOpt,
    quiet_option,
    scenario_from_cli,
    seed_option,
)
from vtlab.emulation import Emulation, format_counters
from vtlab.errors import EXIT_INTERRUPTED, CliError, cli_errors

__all__ = ["emulate_command", "register"]

#: Exit status after SIGTERM (128 + 15, as shells report it).
EXIT_TERMINATED = 143

FarOpt = Annotated[
    str | None,
    typer.Option(
        "--far",
        metavar="CMD",
        help="A shell command to run in the far namespace (the first flow's sender: the "
        "charger's backend in v2g, the server in lte-cabin), started first and ended "
        "when the near command ends.",
        show_default=False,
    ),
]
WaitOpt = Annotated[
    float,
    typer.Option(
        "--wait",
        metavar="SECONDS",
        help="Time between starting the far command and the near one (0 to 60).",
    ),
]
LogOpt = Annotated[
    Path | None,
    typer.Option(
        "--log",
        help="Write every decision of the links (CSV: time_ns, way, frame, link, "
        "direction, fate) to this file.",
        show_default=False,
    ),
]
PcapOpt = Annotated[
    Path | None,
    typer.Option(
        "--pcap",
        help="Capture both ends into this directory (near.pcap, far.pcap).",
        show_default=False,
    ),
]
RealtimeOpt = Annotated[
    bool,
    typer.Option(
        "--realtime/--no-realtime",
        help="Run the links at real-time priority (SCHED_FIFO 1, the default), so that "
        "busy programs do not delay the frames; --no-realtime: normal priority, frames "
        "late by milliseconds while other programs keep the CPUs busy. docs/emulation.md.",
    ),
]
CommandArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="-- CMD",
        help="The command to run in the near namespace (the first flow's receiver: the "
        "vehicle in v2g), after '--'; without one, an interactive shell.",
        show_default=False,
    ),
]


def register(app: typer.Typer) -> None:
    """Add ``vtlab emulate``."""
    app.command("emulate")(emulate_command)


@cli_errors
def emulate_command(
    preset: PresetArg = None,
    command: CommandArg = None,
    scenario: ScenarioOpt = None,
    cc: CcOpt = None,
    profile: ProfileOpt = None,
    qdisc: QdiscOpt = None,
    loss: LossOpt = None,
    set_: SetOpt = None,
    seed: Annotated[int, seed_option("Seed of the links' random streams (loss models).")] = 1,
    far: FarOpt = None,
    wait: WaitOpt = 0.5,
    log: LogOpt = None,
    pcap: PcapOpt = None,
    realtime: RealtimeOpt = True,
    quiet: Annotated[bool, quiet_option("Do not print the link counters at the end.")] = False,
) -> None:
    """Join two network namespaces through the scenario's path (every link, queue disc
    and loss model of the first flow's path, per direction) in real time; run CMD in the
    near one, --far CMD in the far one. Needs root. Exit status: the near command's."""
    if scenario is not None and preset is not None and preset not in _core.presets():
        command, preset = [preset, *(command or [])], None  # the command's first word
    if not 0 <= wait <= 60:
        raise CliError("--wait", f"{wait:g} is outside [0, 60] seconds")
    sc = scenario_from_cli(
        preset, scenario, cc=cc, loss=loss, sets=set_, profile=profile, qdisc=qdisc
    )
    em = Emulation(sc, seed=seed, log=log, pcap=pcap, realtime=realtime)
    previous = signal.signal(signal.SIGTERM, _terminated)
    status = EXIT_INTERRUPTED
    try:
        em.open()
        status = _run_commands(em, command, far, wait)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    except _Terminated:
        print("terminated", file=sys.stderr)
        status = EXIT_TERMINATED
    finally:
        signal.signal(signal.SIGTERM, previous)
        counters = em.close()
    if counters is not None and not quiet:
        print(format_counters(counters), file=sys.stderr)
    raise SystemExit(status)


class _Terminated(Exception):
    """SIGTERM arrived."""


def _terminated(signum: int, frame: Any) -> None:
    raise _Terminated


def _run_commands(em: Emulation, command: list[str] | None, far: str | None, wait: float) -> int:
    """Start the far command, then the near one (or a shell); the near one's status."""
    if far is not None:
        em.popen(far, "far")
        time.sleep(wait)
    if command:
        # As ssh does: the words joined by spaces, for the namespace's shell (so
        # that '$VTLAB_PEER' quoted on the command line is expanded there).
        proc = em.popen(" ".join(command), "near")
        return proc.wait()
    # Interactive: the shell shares the terminal (our process group) and gets its
    # Ctrl-C; the emulator ignores SIGINT meanwhile.
    shell = os.environ.get("SHELL") or "/bin/sh"
    print(
        f"vtlab emulate: a shell in {em.namespaces['near']} ({em.nodes['near']}); "
        f"the peer ({em.nodes['far']}) is $VTLAB_PEER / $VTLAB_PEER6; exit to end",
        file=sys.stderr,
    )
    # Started before SIGINT is ignored here: an ignored signal stays ignored across exec.
    proc = em.popen([shell], "near", start_new_session=False)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return proc.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
