"""ISO 15118-2 over a lossy charging cable: the rare-event part — survival per setting
down to one-in-a-million losses with the conditional estimator of
:mod:`vtlab.survival`, and its check against plain Monte Carlo.

* :func:`table`: per setting (stack × minimum RTO × application retries; on the
  default Linux stack also the charger's processing time, the loop period and
  ``TCP_USER_TIMEOUT``) and burst size, the highest mean loss at which a session
  survives with a lower bound of at least the target, and the survival at 10⁻⁶ and
  10⁻⁵ with its interval. The conditional runs' counts are stored in ``OUT/rare``
  (one JSON file per setting, as ``vtlab advise`` stores them) and reused.
* :func:`validation`: the estimator and plain Monte Carlo on cells where both are
  feasible (a session meets one or two bursts).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from vtlab import survival as sv
from vtlab.advice import estimate_settings
from vtlab.experiments.iso15118.plan import BURSTS, SURVIVAL_TARGET, Z95, Plan, vehicle_base

#: Changes tried on one stack: (base setting, name, spec paths).
VARIANTS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("linux, rto_min=200ms", "processing=20ms", {"session.processing": "20ms"}),
    ("linux, rto_min=200ms", "processing=50ms", {"session.processing": "50ms"}),
    ("linux, rto_min=200ms", "period=100ms", {"session.period": "100ms"}),
    ("linux, rto_min=5ms", "processing=50ms", {"session.processing": "50ms"}),
    ("linux, rto_min=5ms", "user_timeout=100ms", {"tcp.user_timeout": "100ms"}),
    ("linux, rto_min=5ms", "user_timeout=300ms", {"tcp.user_timeout": "300ms"}),
    ("linux, rto_min=5ms, retries=1", "user_timeout=300ms", {"tcp.user_timeout": "300ms"}),
)

#: The loss rates at which the table gives the survival with its interval.
SHOWN_LOSSES = (1e-6, 1e-5)

#: Cells of the validation: (setting, burst, mean loss).
VALIDATION_CELLS: tuple[tuple[str, str, float], ...] = (
    ("linux, rto_min=200ms", "1–4", 1e-4),
    ("ns3, rto_min=1000ms", "1", 1e-5),
    ("linux, rto_min=200ms", "4–8", 1e-4),
)


def study_settings() -> dict[str, dict[str, Any]]:
    """The settings of the table: :func:`vtlab.survival.settings` and :data:`VARIANTS`."""
    out = sv.settings()
    for base, name, extra in VARIANTS:
        out[f"{base}, {name}"] = {**out[base], **extra}
    return out


def table(
    plan: Plan,
    out: Path | None,
    jobs: int | None = None,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """One row per setting and burst size (see the module's docstring); the settings'
    estimates made up to ``jobs`` at once (:func:`vtlab.advice.estimate_settings`,
    ``log`` a line as each is done)."""
    every = study_settings()
    names = list(every) if plan.rare_settings is None else list(plan.rare_settings)
    stop = sv.enough_for_threshold(SURVIVAL_TARGET)
    cells = [(burst, name) for burst in plan.rare_bursts for name in names]
    base = vehicle_base(plan)
    questions = [
        (f"{name}, burst {b}", sv.apply(base, every[name]), BURSTS[b], plan.rare_runs, stop)
        for b, name in cells
    ]
    rows = []
    estimates = estimate_settings(questions, out, jobs, log)
    for (burst, name), (est, where) in zip(cells, estimates, strict=True):
        row: dict[str, Any] = {
            "setting": name,
            "burst": burst,
            "tolerable_loss": est.threshold(SURVIVAL_TARGET),
            # Every simulated session survived: the bound is the runs' limit, the
            # setting may tolerate more.
            "limited_by_runs": all(p.survived == p.runs for p in est.per_k[1:]),
        }
        for loss in SHOWN_LOSSES:
            point, lo, hi = est.at(loss)
            row |= {f"survival@{loss:g}": point, f"lower@{loss:g}": lo, f"upper@{loss:g}": hi}
        row |= {
            "survived_per_k": " ".join(f"{p.survived}/{p.runs}" for p in est.per_k[1:]),
            "runs": est.runs,
            "overruns": sum(p.overruns for p in est.per_k),
            "evidence": Path(where).name,
        }
        rows.append(row)
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
            sv.session_runner(spec),
            BURSTS[burst],
            runs_per_k,
            lambda e, at=loss: e.tail(at) < 1e-3,
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
