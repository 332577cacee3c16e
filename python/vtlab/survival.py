"""Rare-event survival of a request/response session over a link with ns-3's burst
loss model: conditioning on the number of loss bursts.

Plain Monte Carlo cannot see one-in-a-million losses: a 30-minute DC session meets a
burst at that rate in about one run of thirty. This estimator splits the survival by
the number K of bursts that start among the packets a session can see:

  P(survive) = Σ_k P(K = k) · s_k,   s_k = P(survive | K = k).

**K's distribution.** ns-3's burst model (``net/loss.rs``) draws one U(0,1) per packet
at the loss point; a burst starts at a packet with probability p whatever happened
before (a start inside a burst restarts it), and its size is uniform on
``burst_min..=burst_max``. Burst starts are therefore independent Bernoulli(p) marks
on packet positions. Counting positions 0 … M−1 of each direction (M_loss toward
the vehicle, M_reverse toward the charger), K ~ Binomial(M_loss + M_reverse, p), and
given K = k the starts are a uniformly random k-subset of those positions with
independent sizes. p comes from the mean loss L by L = 1 − E[(1 − p)^S]
(docs/loss-models.md), solved by bisection.

**s_k** is estimated by simulating sessions whose losses are exactly such k bursts,
given to the ``replay`` loss model as the positions they lose: a burst starting at s
with size S loses s … min(s + S, next start) − 1 (the next start cuts it short,
ns-3's restart). M is the loss-free session's packets in that direction plus a
margin; a run that sees more than M packets in a direction (its retransmissions
went past the margin) is counted as a failure, so the estimate can only err low.
s_0 is the loss-free session's outcome (the link's other elements are deterministic).

**Interval.** Each s_k gets a Wilson interval at level 1 − α_k, α_k = 0.05 · 6 / (π² k²)
(Σ α_k = 0.05, so all hold together with probability ≥ 95 %: Bonferroni), and K
beyond the largest k simulated counts as failure in the lower end and as survival in
the upper end:

  lower = P(K = 0) s_0 + Σ_k P(K = k) lo_k,   upper = lower-terms with hi_k + P(K > k_max).

The point estimate uses ŝ_k and, beyond k_max, ŝ_{k_max} (survival does not grow
with more bursts). One set of conditional runs serves every loss rate: only the
weights P(K = k) depend on L.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

#: Σ α_k over k ≥ 1 (the family-wise error of the per-k intervals together).
ALPHA = 0.05
#: The most bursts per session the estimator simulates.
MAX_BURSTS = 60
#: Loss rates searched for the highest tolerable one: 10⁻⁸ … 10⁻², this many per decade.
GRID_PER_DECADE = 40


def start_probability(mean_loss: float, burst_min: int, burst_max: int) -> float:
    """ns-3's burst-start probability p for mean loss L with sizes uniform on
    ``burst_min..=burst_max``: the root of 1 − E[(1 − p)^S] = L (increasing in p)."""
    if mean_loss <= 0.0:
        return 0.0
    sizes = range(burst_min, burst_max + 1)

    def loss(p: float) -> float:
        return 1.0 - sum((1.0 - p) ** s for s in sizes) / len(sizes)

    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if loss(mid) < mean_loss else (lo, mid)
    return 0.5 * (lo + hi)


def binomial_pmf(k: int, n: int, p: float) -> float:
    """P(K = k) for K ~ Binomial(n, p), through logarithms (n is some 30 000)."""
    if p <= 0.0:
        return 1.0 if k == 0 else 0.0
    if k > n:
        return 0.0
    log = (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )
    return math.exp(log)


def alpha_k(k: int) -> float:
    """The error share of the k-th interval: α · 6 / (π² k²), summing to α over k ≥ 1."""
    return ALPHA * 6.0 / (math.pi**2 * k * k)


def z_k(k: int) -> float:
    """The normal quantile of the two-sided interval at level 1 − α_k."""
    return NormalDist().inv_cdf(1.0 - alpha_k(k) / 2.0)


def wilson(survived: int, n: int, z: float) -> tuple[float, float]:
    """The Wilson score interval of survived / n (docs/study-iso15118.md)."""
    if n <= 0:
        return 0.0, 1.0
    p = survived / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if survived == 0 else max(0.0, centre - half)
    hi = 1.0 if survived == n else min(1.0, centre + half)
    return lo, hi


def burst_drops(starts: Sequence[int], sizes: Sequence[int]) -> list[int]:
    """The positions lost by bursts starting at ``starts`` (increasing) with these
    sizes: each burst runs until its size is used up or the next burst starts."""
    lost: list[int] = []
    for i, (s, size) in enumerate(zip(starts, sizes, strict=True)):
        end = s + size
        if i + 1 < len(starts):
            end = min(end, starts[i + 1])
        lost.extend(range(s, end))
    return lost


@dataclass(frozen=True)
class Placement:
    """Where k bursts fall: drop positions per loss point (``loss``: toward the
    vehicle; ``reverse_loss``: toward the charger)."""

    loss: list[int]
    reverse_loss: list[int]


def place(k: int, m_loss: int, m_reverse: int, sizes: tuple[int, int], rng: random.Random):
    """k burst starts uniformly among the M_loss + M_reverse positions, sizes uniform."""
    chosen = sorted(rng.sample(range(m_loss + m_reverse), k))
    size = [rng.randint(*sizes) for _ in chosen]
    forward = [(s, z) for s, z in zip(chosen, size, strict=True) if s < m_loss]
    backward = [(s - m_loss, z) for s, z in zip(chosen, size, strict=True) if s >= m_loss]
    return Placement(
        burst_drops([s for s, _ in forward], [z for _, z in forward]),
        burst_drops([s for s, _ in backward], [z for _, z in backward]),
    )


@dataclass
class PerK:
    """The conditional runs with exactly k bursts."""

    k: int
    runs: int
    survived: int
    #: Runs that saw more than M packets in a direction (counted as failures).
    overruns: int = 0

    def interval(self) -> tuple[float, float]:
        if self.k == 0:
            return (1.0, 1.0) if self.survived == self.runs else (0.0, 0.0)
        return wilson(self.survived, self.runs, z_k(self.k))


@dataclass
class Estimate:
    """Conditional survival s_k for k = 0 … k_max of one link, session and setting."""

    positions: tuple[int, int]
    burst: tuple[int, int]
    per_k: list[PerK] = field(default_factory=list)

    @property
    def k_max(self) -> int:
        return self.per_k[-1].k

    @property
    def runs(self) -> int:
        return sum(p.runs for p in self.per_k)

    def weights(self, mean_loss: float) -> list[float]:
        """P(K = k) for k = 0 … k_max at this mean loss."""
        p = start_probability(mean_loss, *self.burst)
        n = sum(self.positions)
        return [binomial_pmf(pk.k, n, p) for pk in self.per_k]

    def at(self, mean_loss: float) -> tuple[float, float, float]:
        """Survival at ``mean_loss``: point estimate, lower and upper end."""
        w = self.weights(mean_loss)
        tail = max(0.0, 1.0 - sum(w))
        last = self.per_k[-1]
        point = sum(wk * pk.survived / pk.runs for wk, pk in zip(w, self.per_k, strict=True))
        point += tail * last.survived / last.runs
        bounds = [pk.interval() for pk in self.per_k]
        lower = sum(wk * lo for wk, (lo, _) in zip(w, bounds, strict=True))
        upper = sum(wk * hi for wk, (_, hi) in zip(w, bounds, strict=True)) + tail
        return point, lower, min(1.0, upper)

    def tail(self, mean_loss: float) -> float:
        """P(K > k_max): the share the simulated k do not cover."""
        return max(0.0, 1.0 - sum(self.weights(mean_loss)))

    def threshold(self, target: float) -> float:
        """The highest mean loss of the grid (10⁻⁸ … 10⁻², :data:`GRID_PER_DECADE` a
        decade) at which the lower end reaches ``target`` there and at every lower
        grid loss; 0 when even the lowest does not."""
        best = 0.0
        for i in range(6 * GRID_PER_DECADE + 1):
            loss = 10 ** (-8 + i / GRID_PER_DECADE)
            if self.at(loss)[1] < target:
                break
            best = loss
        return best


#: Runs one session with the given drops; returns (completed, packets seen per
#: direction (toward the vehicle, toward the charger)).
Runner = Callable[[Placement | None, int], tuple[bool, tuple[int, int]]]


def estimate(
    runner: Runner,
    burst: tuple[int, int],
    runs_per_k: int,
    enough: Callable[[Estimate], bool],
    seed: int = 1,
    margin: Callable[[int], int] = lambda n: 256 + n // 100,
    resume: Estimate | None = None,
) -> Estimate:
    """Simulate k = 0, 1, 2, … bursts (``runs_per_k`` sessions each) until
    ``enough(estimate)`` holds, every session of the last k failed, or k reaches
    :data:`MAX_BURSTS`. Run j with k bursts places them with the random stream
    ``(seed, k, j)``: every setting sees the same placements where M agrees, and an
    estimate stored earlier (``resume``, same runner, seed and runs) goes on from its
    largest k as if it had never stopped."""
    if resume is None:
        ok, seen = runner(None, seed)
        positions = (seen[0] + margin(seen[0]), seen[1] + margin(seen[1]))
        est = Estimate(positions, burst, [PerK(0, 1, int(ok))])
    else:
        est = Estimate(resume.positions, burst, list(resume.per_k))
    last = est.per_k[-1]
    if last.survived == 0 or enough(est):
        return est
    for k in range(last.k + 1, MAX_BURSTS + 1):
        survived = overruns = 0
        for j in range(runs_per_k):
            rng = random.Random(f"{seed}/{k}/{j}")
            placement = place(k, *est.positions, burst, rng)
            completed, used = runner(placement, seed + j)
            over = used[0] > est.positions[0] or used[1] > est.positions[1]
            overruns += int(over)
            survived += int(completed and not over)
        est.per_k.append(PerK(k, runs_per_k, survived, overruns))
        if survived == 0 or enough(est):
            break
    return est


def enough_for_threshold(target: float, tail: float = 1e-4) -> Callable[[Estimate], bool]:
    """Stop once K beyond k_max weighs less than ``tail`` at the current threshold
    (at most 1 % of a 99 % target's failure budget)."""

    def check(est: Estimate) -> bool:
        loss = est.threshold(target)
        return loss > 0 and est.tail(loss) < tail

    return check


def enough_at(mean_loss: float, target: float, tail: float = 1e-4) -> Callable[[Estimate], bool]:
    """Stop once the verdict at ``mean_loss`` is settled: the lower end reaches the
    target, the upper end cannot, or K beyond k_max weighs less than ``tail``."""

    def check(est: Estimate) -> bool:
        _, lower, upper = est.at(mean_loss)
        return lower >= target or upper < target or est.tail(mean_loss) < tail

    return check


def link_packets(links: Mapping[str, Sequence[Any]], direction: str) -> int:
    """Packets that reached the PLC's receiving end in ``direction`` (``secc->evcc``
    or ``evcc->secc``) in a result's link rows (a DataFrame or the core's columns),
    dropped ones included."""
    rows = zip(links["link"], links["direction"], links["packets_carried"], strict=True)
    return sum(int(n) for link, d, n in rows if link == "plc" and d == direction)


def with_replay(spec: Mapping[str, Any], placement: Placement | None) -> dict[str, Any]:
    """``spec`` with both PLC directions' losses replaced by the placement's drops."""
    out = dict(spec)
    out["loss"] = {"model": "replay", "drops": [] if placement is None else placement.loss}
    out["reverse_loss"] = {
        "model": "replay",
        "drops": [] if placement is None else placement.reverse_loss,
    }
    return out


def session_runner(spec: Mapping[str, Any]) -> Runner:
    """A :data:`Runner` for a scenario spec with one session over the ``plc`` link
    (the ``v2g`` preset's cable): its PLC losses replaced by the placement's drops.
    It reads the core's columns directly: building a result's tables
    (:func:`vtlab.run`) was 2.8 of a 30-minute session's 7.8 ms."""
    from vtlab import _core

    def run(placement: Placement | None, seed: int) -> tuple[bool, tuple[int, int]]:
        out = _core.run(json.dumps(with_replay(spec, placement)), seed, False)
        completed = all(bool(c) for c in out["sessions"]["completed"])
        links = out["links"]
        return completed, (link_packets(links, "secc->evcc"), link_packets(links, "evcc->secc"))

    return run


def plain_monte_carlo(
    spec: Mapping[str, Any], mean_loss: float, burst: tuple[int, int], seeds: Sequence[int]
) -> int:
    """Sessions that survive among runs with ns-3's burst model at ``mean_loss`` in
    both directions, one per seed: the plain estimate the conditional one is checked
    against."""
    from vtlab import api

    loss = {"model": "burst", "mean_loss": mean_loss, "burst_min": burst[0], "burst_max": burst[1]}
    survived = 0
    for seed in seeds:
        result = api.run({**spec, "loss": dict(loss), "reverse_loss": dict(loss)}, seed)
        survived += int(result.sessions["completed"].astype(bool).all())
    return survived


# -- the settings an engineer can change --------------------------------------------

#: The TCP stacks, as TCP settings: ns-3's, Linux's without and with RACK-TLP
#: (RFC 8985). The one place they are defined (the ISO 15118 study uses them too).
STACKS: dict[str, dict[str, Any]] = {
    "ns3": {"profile": "ns3"},
    "linux": {"profile": "linux", "tlp": False, "rack": False},
    "linux+rack-tlp": {"profile": "linux", "tlp": True, "rack": True},
}

#: Minimum RTOs tried per profile, the default first. Linux's per-route ``rto_min``
#: (``ip route change … rto_min 5ms``) floors the variance term of
#: srtt + max(rto_min, 4·rttvar); the ``linux`` profile expresses it as
#: ``clock_granularity`` (docs/tcp-model.md). ns-3's ``TcpSocketBase::MinRto`` is
#: ``rto_min`` (RTO = max(rto_min, srtt + max(1 ms, 4·rttvar))).
RTO_MINS_MS: dict[str, tuple[int, ...]] = {"ns3": (1000, 200, 5), "linux": (200, 20, 5)}

#: Application-level retries tried (``session.retries``).
RETRIES: tuple[int, ...] = (0, 1)


def rto_min_overrides(stack: str, ms: int) -> dict[str, Any]:
    """The spec paths that set the minimum RTO of ``stack`` to ``ms``."""
    key = "tcp.clock_granularity" if STACKS[stack]["profile"] == "linux" else "tcp.rto_min"
    return {key: f"{ms}ms"}


def settings(stacks: Sequence[str] = tuple(STACKS)) -> dict[str, dict[str, Any]]:
    """Every setting the advice and the study try, by name (``stack, rto_min=X`` and
    ``stack, rto_min=X, retries=N``), as spec paths."""
    out: dict[str, dict[str, Any]] = {}
    for stack in stacks:
        base = {f"tcp.{k}": v for k, v in STACKS[stack].items()}
        for ms in RTO_MINS_MS[STACKS[stack]["profile"]]:
            for retries in RETRIES:
                name = f"{stack}, rto_min={ms}ms" + (f", retries={retries}" if retries else "")
                extra = {"session.retries": retries} if retries else {}
                out[name] = {**base, **rto_min_overrides(stack, ms), **extra}
    return out


def set_path(spec: dict[str, Any], path: str, value: Any) -> None:
    """Set a dotted spec path (``tcp.rto_min``) in a nested dict, in place."""
    *parents, last = path.split(".")
    node = spec
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value


def apply(spec: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A deep-enough copy of ``spec`` with the overrides set."""
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in spec.items()}
    for path, value in overrides.items():
        set_path(out, path, value)
    return out
