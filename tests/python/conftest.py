"""Shared fixtures for the Python tests (they need the compiled ``vtlab._core``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata

import pytest
from hypothesis import settings
from typer.testing import CliRunner, Result

from vtlab.cli.app import app

# Property tests draw the same examples on every run, so the suite (and CI) is
# reproducible; `pytest --hypothesis-profile=explore` draws new ones.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile("repeatable")

#: Small transfer used throughout to keep the suite fast.
SMALL = "2MB"

#: Ideal loss-free goodput of the v2g preset: 10 Mbit/s PLC, 1460 B payload per
#: 1502 B frame on the wire.
#: Loss-free bound with 40 B headers and 2 B framing (timestamps off).
V2G_IDEAL_GOODPUT = 10e6 * 1460 / 1502
#: ns-3's default (timestamps on): 1512 B packets fragment into 1502 + 34 B frames.
V2G_NS3_FRAGMENTED_GOODPUT = 10e6 * 1460 / 1536


def ns3_available() -> bool:
    """Whether the ns3 wheel and a C++ compiler are here (the ns-3 reference programs)."""
    try:
        metadata.distribution("ns3")
    except metadata.PackageNotFoundError:
        return False
    return shutil.which(os.environ.get("CXX", "g++")) is not None


def preset_qdisc_available() -> bool:
    """Whether vtlab's presets take the ``qdisc`` key (``vtlab validate`` always sets it)."""
    import json

    from vtlab import _core

    try:
        _core.expand(json.dumps({"preset": "v2g", "qdisc": "none"}))
    except Exception:  # noqa: BLE001 - ScenarioError until the key exists
        return False
    return True


#: Tests that run vtlab through ``vtlab validate`` (which puts ``qdisc`` in the preset).
requires_preset_qdisc = pytest.mark.skipif(
    not preset_qdisc_available(), reason="vtlab's presets have no `qdisc` key yet"
)

#: Marks a test that compiles or runs an ns-3 reference program.
requires_ns3 = pytest.mark.skipif(
    not ns3_available(), reason="needs the ns3 wheel (pip install 'vtlab[ns3]') and g++"
)


@pytest.fixture(autouse=True)
def _fresh_workers() -> Iterator[None]:
    """Each test forks its own sweep workers: a sweep's workers outlive it
    (:mod:`vtlab.workers`) and would not see what a later test patches here."""
    from vtlab import workers

    workers.close()
    yield
    workers.close()


@pytest.fixture(scope="session")
def runner() -> CliRunner:
    try:  # click < 8.2 mixes stderr into stdout unless told not to
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:  # click >= 8.2 and typer's own runner always keep them apart
        return CliRunner()


@pytest.fixture(scope="session")
def cli(runner: CliRunner) -> Callable[..., Result]:
    """Invoke the CLI in-process: ``cli("run", "v2g", "--bytes", "1MB")``."""

    def invoke(*args: str | Sequence[str]) -> Result:
        flat: list[str] = []
        for a in args:
            flat.extend([a] if isinstance(a, str) else a)
        return runner.invoke(app, flat, catch_exceptions=True)

    return invoke


def assert_usage_error(result: Result, *needles: str) -> str:
    """Check a CLI result is a clean ``error: ...`` exit 2; return the stderr text."""
    output = result.output
    err = result.stderr
    assert result.exit_code == 2, f"exit {result.exit_code}, output:\n{output}\n{err}"
    assert "Traceback" not in output and "Traceback" not in err
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    return lines[0]
