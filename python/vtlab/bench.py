"""Speed benchmark: wall time, events/s and simulated packets/s of one scenario.

Speed is measured here, never in unit tests. The wall time is the engine's own
(measured inside Rust around the event loop), so Python overhead is excluded; the
median over repetitions is reported, after one warm-up run.
"""

from __future__ import annotations

import resource
import statistics
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from vtlab import _core
from vtlab.scenario import Scenario

#: The benchmark the engine issue names: NewReno, 100 MB over the V2G cable at 5 % loss.
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
    """Run `scenario` `warmup + repeat` times with the same seed and time the engine.

    Every repetition must produce the same event count (the engine is deterministic);
    a mismatch raises RuntimeError.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    if warmup < 0:
        raise ValueError(f"warmup must be at least 0, got {warmup}")
    sc = Scenario.coerce(scenario if scenario is not None else dict(DEFAULT_BENCH_SPEC))
    spec_json = sc.to_json()
    result: BenchResult | None = None
    for i in range(warmup + repeat):
        meta = _core.run(spec_json, seed, False)["meta"]
        if result is None:
            result = BenchResult(
                scenario_hash=meta["scenario_hash"],
                seed=seed,
                version=meta["version"],
                events=meta["events"],
                packets=meta["packets"],
                sim_time_s=meta["sim_time_s"],
            )
        elif meta["events"] != result.events:
            raise RuntimeError(f"non-deterministic run: {meta['events']} events vs {result.events}")
        if i >= warmup:
            result.wall_s.append(meta["wall_s"])
    assert result is not None
    result.peak_rss_mib = _peak_rss_mib()
    return result
