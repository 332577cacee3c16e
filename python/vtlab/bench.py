"""Speed benchmark: wall time, events/s and simulated packets/s of one scenario.

Speed is measured here, never in unit tests. The wall time is the engine's own
(measured inside Rust around the event loop), so Python overhead is excluded; the
median over repetitions is reported, after one warm-up run.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vtlab import _core
from vtlab.scenario import Scenario

#: The benchmark the engine issue names: NewReno, 100 MB over the V2G cable at 5 % loss,
#: in the default configuration (the ns3 profile's FQ-CoDel root queue disc on every
#: link, as stock ns-3.44 installs it); :func:`bench` times it without a queue disc too.
DEFAULT_BENCH_SPEC: dict[str, Any] = {
    "preset": "v2g",
    "bytes": "100MB",
    "loss": {"mean_loss": "5%"},
    "tcp": {"cc": "newreno"},
}


@dataclass
class BenchResult:
    """Timings of repeated runs of one scenario (same seed each time)."""

    scenario_hash: str
    seed: int
    version: str
    events: int
    packets: int
    sim_time_s: float
    wall_s: list[float] = field(default_factory=list)
    peak_rss_mib: float = 0.0
    #: Command line → whole-process wall times of ``vtlab`` start-up (see
    #: :func:`startup_times`); empty unless measured.
    startup_s: dict[str, list[float]] = field(default_factory=dict)
    #: Engine wall times of the same scenario with no queue disc (``qdisc = "none"``:
    #: drop-tail device queues alone), when the scenario has one; else empty.
    droptail_wall_s: list[float] = field(default_factory=list)

    @property
    def droptail_ratio(self) -> float | None:
        """Wall time with the scenario's queue discs over that without any: the median
        of each repetition's ratio (the two runs of a repetition back to back, so that
        the machine's drift meets both alike), or of the medians where the two lists
        differ in length."""
        if not self.droptail_wall_s:
            return None
        if len(self.droptail_wall_s) != len(self.wall_s):
            return self.median_wall_s / statistics.median(self.droptail_wall_s)
        pairs = zip(self.wall_s, self.droptail_wall_s, strict=True)
        return statistics.median(a / b for a, b in pairs)

    @property
    def median_wall_s(self) -> float:
        return statistics.median(self.wall_s)

    @property
    def events_per_s(self) -> float:
        return self.events / self.median_wall_s

    @property
    def packets_per_s(self) -> float:
        return self.packets / self.median_wall_s

    @property
    def speedup(self) -> float:
        """Simulated seconds per wall-clock second."""
        return self.sim_time_s / self.median_wall_s

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            droptail_ratio=self.droptail_ratio,
            median_wall_s=self.median_wall_s,
            events_per_s=self.events_per_s,
            packets_per_s=self.packets_per_s,
            speedup=self.speedup,
        )
        return d


def _peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def bench(
    scenario: Scenario | dict[str, Any] | None = None,
    *,
    seed: int = 1,
    repeat: int = 5,
    warmup: int = 1,
) -> BenchResult:
    """Run `scenario` `warmup + repeat` times with the same seed and time the engine;
    if it has root queue discs, time it likewise without them (``qdisc = "none"``,
    :attr:`BenchResult.droptail_wall_s`), each repetition running one and then the
    other (timed one phase after the other, the machine's drift between the phases
    gave 1.27× where alternated pairs gave 1.19–1.20×).

    Every repetition must produce the same event count (the engine is deterministic);
    a mismatch raises RuntimeError.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    if warmup < 0:
        raise ValueError(f"warmup must be at least 0, got {warmup}")
    sc = Scenario.coerce(scenario if scenario is not None else dict(DEFAULT_BENCH_SPEC))
    specs = [sc.to_json()]
    droptail = sc.copy()
    droptail.spec["qdisc"] = "none"
    if _has_qdisc(sc) and not _has_qdisc(droptail):  # (a link's own queue disc stays)
        specs.append(droptail.to_json())
    timed = _timed(specs, seed, repeat, warmup)
    result = timed[0]
    if len(timed) > 1:
        result.droptail_wall_s = timed[1].wall_s
    result.peak_rss_mib = _peak_rss_mib()
    return result


def _has_qdisc(sc: Scenario) -> bool:
    """Whether any link of the resolved scenario has a root queue disc."""
    links = json.loads(_core.expand(sc.to_json())).get("links", [])
    return any(link.get("qdisc") is not None for link in links)


def _timed(specs: list[str], seed: int, repeat: int, warmup: int) -> list[BenchResult]:
    """`warmup + repeat` runs of each scenario of `specs`, in turn within each
    repetition, the last `repeat` timed."""
    results: list[BenchResult | None] = [None] * len(specs)
    for i in range(warmup + repeat):
        for k, spec_json in enumerate(specs):
            meta = _core.run(spec_json, seed, False)["meta"]
            result = results[k]
            if result is None:
                result = results[k] = BenchResult(
                    scenario_hash=meta["scenario_hash"],
                    seed=seed,
                    version=meta["version"],
                    events=meta["events"],
                    packets=meta["packets"],
                    sim_time_s=meta["sim_time_s"],
                )
            elif meta["events"] != result.events:
                raise RuntimeError(
                    f"non-deterministic run: {meta['events']} events vs {result.events}"
                )
            if i >= warmup:
                result.wall_s.append(meta["wall_s"])
    return [r for r in results if r is not None]


# -- start-up of the command line ------------------------------------------------------

#: The command lines whose start-up `vtlab bench` reports (arguments after `vtlab`).
STARTUP_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--help",),
    ("run", "v2g", "--bytes", "1MB", "--json"),
)

#: Libraries that dominate import time; the light commands must not import them.
HEAVY_MODULES: tuple[str, ...] = ("pandas", "pyarrow", "matplotlib", "scipy", "numpy")


def _vtlab_env(pythonpath: str | os.PathLike[str] | None) -> dict[str, str]:
    """The environment of a child ``python -m vtlab``: this package (or the tree at
    ``pythonpath``) first on the path."""
    env = dict(os.environ)
    # An installed package has its bytecode compiled; let the source tree get its
    # __pycache__ too, so that start-up is not measured with every module compiled.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    root = Path(pythonpath) if pythonpath is not None else Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join(
        [str(root), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    )
    return env


def time_command(
    args: Sequence[str],
    *,
    repeat: int = 5,
    warmup: int = 1,
    python: str = sys.executable,
    pythonpath: str | os.PathLike[str] | None = None,
) -> list[float]:
    """Wall times (s) of ``repeat`` runs of ``python -m vtlab ARGS`` as whole processes,
    after ``warmup`` untimed runs (output discarded; a failing command raises
    ``CalledProcessError``)."""
    env = _vtlab_env(pythonpath)
    walls: list[float] = []
    for i in range(warmup + repeat):
        started = time.perf_counter()
        subprocess.run(
            [python, "-m", "vtlab", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            check=True,
        )
        if i >= warmup:
            walls.append(time.perf_counter() - started)
    return walls


def imported_modules(
    args: Sequence[str],
    *,
    python: str = sys.executable,
    pythonpath: str | os.PathLike[str] | None = None,
) -> dict[str, float]:
    """Top-level packages ``python -X importtime -m vtlab ARGS`` imports, with the
    cumulative import time (s) of each, read from the ``-X importtime`` report."""
    proc = subprocess.run(
        [python, "-X", "importtime", "-m", "vtlab", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_vtlab_env(pythonpath),
        check=False,
    )
    return parse_importtime(proc.stderr)


def parse_importtime(report: str) -> dict[str, float]:
    """``{package: cumulative seconds}`` from a ``-X importtime`` report: for each
    top-level package, the largest cumulative time of any of its modules."""
    found: dict[str, float] = {}
    for line in report.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue  # the header line
        top = parts[2].strip().split(".")[0]
        found[top] = max(found.get(top, 0.0), int(parts[1]) / 1e6)
    return found


def startup_times(
    commands: Sequence[Sequence[str]] = STARTUP_COMMANDS, *, repeat: int = 5
) -> dict[str, list[float]]:
    """``{"vtlab ARGS": [wall s, ...]}`` for each command line (see :func:`time_command`)."""
    return {"vtlab " + " ".join(args): time_command(args, repeat=repeat) for args in commands}


def heavy_imports(modules: Mapping[str, float]) -> list[str]:
    """The :data:`HEAVY_MODULES` among ``modules``."""
    return [m for m in HEAVY_MODULES if m in modules]
