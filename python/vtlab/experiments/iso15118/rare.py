"""ISO 15118-2 over a lossy charging cable: the rare-event part — survival per setting
down to one-in-a-million losses with the conditional estimator of
:mod:`vtlab.survival`, and its check against plain Monte Carlo.

* :func:`survival_table`: per setting (stack × minimum RTO × application retries, and
  the charger's processing time and the loop period on the default Linux stack) and
  burst size, the highest mean loss at which a session survives with a lower bound of
  at least the target, and the survival at 10⁻⁶ with its interval.
* :func:`validation`: the estimator and plain Monte Carlo on cells where both are
  feasible (a session meets one or two bursts).
"""

from __future__ import annotations

from typing import Any

from vtlab import survival as sv
from vtlab.experiments.iso15118.plan import BURSTS, SURVIVAL_TARGET, Z95, Plan, vehicle_base

#: Changes of the charger and the loop tried on the default Linux stack.
SESSION_VARIANTS: dict[str, dict[str, Any]] = {
    "processing=20ms": {"session.processing": "20ms"},
    "processing=50ms": {"session.processing": "50ms"},
    "period=100ms": {"session.period": "100ms"},
}

#: Cells of the validation: (setting, burst, mean loss).
VALIDATION_CELLS: tuple[tuple[str, str, float], ...] = (
    ("linux, rto_min=200ms", "1–4", 1e-4),
    ("ns3, rto_min=1000ms", "1", 1e-5),
    ("linux, rto_min=200ms", "4–8", 1e-4),
)


def study_settings() -> dict[str, dict[str, Any]]:
    """The settings of the table: :func:`vtlab.survival.settings` and the session
    variants on ``linux, rto_min=200ms``."""
    out = sv.settings()
    base = out["linux, rto_min=200ms"]
    for name, extra in SESSION_VARIANTS.items():
        out[f"linux, rto_min=200ms, {name}"] = {**base, **extra}
    return out


def survival_table(
    plan: Plan, runs_per_k: int, bursts: tuple[str, ...] | None = None
) -> list[dict[str, Any]]:
    """One row per setting and burst size (see the module's docstring)."""
    rows = []
    for burst in bursts or tuple(BURSTS):
        sizes = BURSTS[burst]
        for name, overrides in study_settings().items():
            spec = sv.apply(vehicle_base(plan), overrides)
            stop = sv.enough_for_threshold(SURVIVAL_TARGET)
            est = sv.estimate(sv.session_runner(spec), sizes, runs_per_k, stop)
            point, lo, hi = est.at(1e-6)
            rows.append(
                {
                    "setting": name,
                    "burst": burst,
                    "tolerable_loss": est.threshold(SURVIVAL_TARGET),
                    "survival_1e-6": point,
                    "lower_1e-6": lo,
                    "upper_1e-6": hi,
                    "per_k": " ".join(f"{p.survived}/{p.runs}" for p in est.per_k[1:]),
                    "runs": est.runs,
                }
            )
    return rows


def validation(plan: Plan, mc_runs: int, runs_per_k: int) -> list[dict[str, Any]]:
    """The estimator against plain Monte Carlo on :data:`VALIDATION_CELLS`."""
    settings = sv.settings()
    rows = []
    for name, burst, loss in VALIDATION_CELLS:
        spec = sv.apply(vehicle_base(plan), settings[name])
        survived = sv.plain_monte_carlo(spec, loss, BURSTS[burst], range(1, mc_runs + 1))
        mc_lo, mc_hi = sv.wilson(survived, mc_runs, Z95)
        est = sv.estimate(
            sv.session_runner(spec), BURSTS[burst], runs_per_k, lambda e, at=loss: e.tail(at) < 1e-3
        )
        point, lo, hi = est.at(loss)
        rows.append(
            {
                "setting": name,
                "burst": burst,
                "loss": loss,
                "mc": survived / mc_runs,
                "mc_lower": mc_lo,
                "mc_upper": mc_hi,
                "mc_runs": mc_runs,
                "estimate": point,
                "lower": lo,
                "upper": hi,
                "runs": est.runs,
                "k_max": est.k_max,
            }
        )
    return rows
