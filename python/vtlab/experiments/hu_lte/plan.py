"""Hu et al. (LTE in moving vehicles): the plan — the schemes, the campaign's scale
(full and quick) and the grids, all on the ``lte-cabin`` preset.

Choices where the paper is silent or where vtlab differs (also stated in the report):

* **Stack.** Every run uses the ``linux`` profile (the paper modified Linux CUBIC),
  whatever ``--profile`` says: a grid-level axis ``stack`` sets it after the
  campaign's profile.
* **"Static".** Table I's static car is speed 0 at the preset's default RSRP
  (:data:`STATIC_RSRP`): its downlink capacity is close to the paper's ARWND+ACWND
  downlink and to the testbed's 13 Mbit/s average. Table I is also run over
  :data:`TABLE1_RSRPS` (the paper's good-channel −81 dBm of Fig. 9 among them),
  because the gain depends on the channel.
* **Schemes.** CUBIC = the preset's default (Linux CUBIC, fixed 128 KiB receive
  window). ARWND+ACWND = ``adaptive = true`` at the paper's ends (the laptop's: ARWND
  at its receiver on the DL within a 6 MiB buffer, ACWND at its sender on the UL; the
  server unmodified; λ by the preset's rule unless set). "CUBIC, 6 MiB" =
  CUBIC with a receive window that never throttles: the capacity reference and the
  bufferbloat case.
* **The ACK path of the λ-vs-RSRP runs.** At −110 dBm the channel model's uplink is
  a power-limited UE on a few RBs (about 0.5 Mbit/s static, less in a fade). Those
  runs give the uplink a fixed schedule (:data:`ACK_PATH`: one mahimahi opportunity
  per ms, granted on request as the model's uplink is) at every RSRP, so that the λ
  comparison does not depend on the uplink's fades; ``ack_path`` checks at −81 and
  −90 dBm that this changes the downlink results by little.
* **λ** is set explicitly (``tcp.rwnd.lambda`` and ``tcp.cc_params.lambda``) in the λ
  grids, with ARWND's two readings of growth (``window``: W ← W + λ·W;
  ``increment``: W ← W + λ·MSS).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vtlab import _core
from vtlab.experiments.common import Config, Grid
from vtlab.sweep import Axis

PRESET = "lte-cabin"
#: The paper's stack; forced on every run (see the module doc).
PROFILE = "linux"

CUBIC = "CUBIC"
ADAPTIVE = "ARWND+ACWND"
CUBIC_6M = "CUBIC, 6 MiB window"
#: Table I's two schemes and the unthrottled reference.
SCHEMES: dict[str, dict[str, Any]] = {
    CUBIC: {"adaptive": False},
    ADAPTIVE: {"adaptive": True},
    CUBIC_6M: {"adaptive": False, "tcp.recv_buffer": 6 << 20},
}
#: Table I's directions: label → the preset's ``direction``.
DIRECTIONS: dict[str, str] = {"DL": "downlink", "UL": "uplink"}

#: RSRP (dBm) of Table I's static car: the preset's default.
STATIC_RSRP = -90.0
#: Fig. 9's channels: good (−81 dBm) and poor (−110 dBm).
GOOD_RSRP, POOR_RSRP = -81.0, -110.0
#: The uplink of the λ-vs-RSRP runs: one 1504-byte opportunity every ms, served on
#: request with ns-3's timing like the model's uplink (``lte-cabin``'s
#: ``uplink_grant``).
ACK_PATH: dict[str, Any] = {"trace_ms": [1], "grant": True}
ACK_PATH_MBPS = 1504 * 8 / 1e-3 / 1e6
#: ARWND's growth readings: label → ``tcp.rwnd.mode``.
MODES: dict[str, str] = {"window": "window", "increment": "increment"}

KiB, MiB = 1 << 10, 1 << 20
#: The preset's fixed receive window of CUBIC (the tests check it against the
#: resolved scenario).
DEFAULT_RWND = 128 * KiB


@dataclass(frozen=True)
class Plan:
    """The scale of a campaign."""

    runs: int
    stop_s: float
    table1_rsrps: tuple[float, ...]
    lambdas: tuple[float, ...]
    modes: tuple[str, ...]
    speeds_kmh: tuple[float, ...]
    sens_speeds_kmh: tuple[float, ...]
    gamma_highs: tuple[float, ...]
    rtt_multiples: tuple[float, ...]
    rm_windows_s: tuple[float, ...]
    recv_buffers: tuple[int, ...]
    buffers: tuple[int, ...]
    lambda_rsrps: tuple[float, ...] = (GOOD_RSRP, POOR_RSRP)
    ack_rsrps: tuple[float, ...] = (GOOD_RSRP, STATIC_RSRP)
    #: RSRP of the λ-vs-speed runs (the paper gives none): the static car's.
    speed_rsrp: float = STATIC_RSRP
    #: Speeds of the RTT-over-time traces.
    trace_speeds_kmh: tuple[float, ...] = (0.0, 60.0)
    trace_interval: str = "20ms"

    @property
    def stop(self) -> str:
        return f"{self.stop_s:g}s"


FULL = Plan(
    runs=20,
    stop_s=60.0,
    table1_rsrps=(-75.0, GOOD_RSRP, -85.0, STATIC_RSRP, -95.0),
    lambdas=(1.0, 2.0, 3.0),
    modes=("window", "increment"),
    speeds_kmh=(10.0, 60.0, 120.0),
    sens_speeds_kmh=(0.0, 60.0),
    gamma_highs=(0.6, 0.7, 0.9, 0.95),
    rtt_multiples=(1.5, 3.0, 4.0),
    rm_windows_s=(1.0, 60.0),
    recv_buffers=(64 * KiB, DEFAULT_RWND, 256 * KiB, 6 * MiB),
    buffers=(256_000, 2_000_000, 8_000_000),
)

QUICK = Plan(
    runs=3,
    stop_s=20.0,
    table1_rsrps=(GOOD_RSRP, STATIC_RSRP),
    lambdas=(1.0, 2.0, 3.0),
    modes=("window",),
    speeds_kmh=(10.0, 120.0),
    sens_speeds_kmh=(0.0,),
    gamma_highs=(0.9,),
    rtt_multiples=(3.0,),
    rm_windows_s=(1.0,),
    recv_buffers=(DEFAULT_RWND, 6 * MiB),
    buffers=(256_000, 2_000_000),
    trace_speeds_kmh=(0.0,),
)


def plan_for(config: Config) -> Plan:
    return QUICK if config.quick else FULL


# -- what the core offers --------------------------------------------------------------


def cc_names() -> list[str]:
    return [c["name"] for c in _core.congestion_controls()]


def bbr_available() -> bool:
    """Whether the core has BBR (the paper's era's delay-aware alternative)."""
    return "bbr" in cc_names()


def lte_link(spec: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The resolved LTE link of a ``lte-cabin`` scenario."""
    return next(x for x in resolved(**(spec or {}))["links"] if x["name"] == "lte")


def aqm_available() -> bool:
    """Whether links have a queue discipline other than drop-tail (a field naming
    one in the resolved link)."""
    return any(k in lte_link() for k in ("qdisc", "aqm", "queue_discipline"))


def preset_lambda(speed_kmh: float, rsrp_dbm: float) -> float:
    """The λ the preset picks (its rule, mirrored here for the report and checked
    against the resolved scenario by the tests): 1 above 100 km/h, 3 at RSRP ≥ −95
    dBm and ≤ 40 km/h, else 2."""
    if speed_kmh > 100.0:
        return 1.0
    if rsrp_dbm >= -95.0 and speed_kmh <= 40.0:
        return 3.0
    return 2.0


# -- variants --------------------------------------------------------------------------


def lambda_label(lam: float, mode: str) -> str:
    return f"λ={lam:g} ({mode})"


def lambda_variants(plan: Plan) -> dict[str, dict[str, Any]]:
    """CUBIC, the unthrottled CUBIC and ARWND+ACWND at every λ and growth reading."""
    out: dict[str, dict[str, Any]] = {CUBIC: SCHEMES[CUBIC], CUBIC_6M: SCHEMES[CUBIC_6M]}
    for mode in plan.modes:
        for lam in plan.lambdas:
            out[lambda_label(lam, mode)] = {
                "adaptive": True,
                "tcp.rwnd.lambda": lam,
                "tcp.cc_params.lambda": lam,
                "tcp.rwnd.mode": MODES[mode],
            }
    return out


def lambda_info(plan: Plan) -> dict[str, tuple[float, str]]:
    """λ-variant label → (λ, growth reading)."""
    return {lambda_label(lam, m): (lam, m) for m in plan.modes for lam in plan.lambdas}


def sensitivity_settings(plan: Plan) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """One-at-a-time changes of ARWND+ACWND's unstated parameters: label →
    (parameter, value, assignments). The defaults are the row ``default``; a
    default value is never listed again (it would be the same scenario)."""
    out: dict[str, tuple[str, str, dict[str, Any]]] = {"default": ("default", "", {})}
    for g in plan.gamma_highs:
        sets = {"tcp.rwnd.gamma_high": g, "tcp.cc_params.gamma_high": g}
        out[f"gamma_high={g:g}"] = ("gamma_high", f"{g:g}", sets)
    for m in plan.rtt_multiples:
        out[f"rtt_multiple={m:g}"] = ("rtt_multiple", f"{m:g}", {"tcp.rwnd.rtt_multiple": m})
    for w in plan.rm_windows_s:
        sets = {"tcp.rwnd.rm_window": f"{w:g}s", "tcp.cc_params.rm_window_s": w}
        out[f"rm_window={w:g}s"] = ("rm_window", f"{w:g} s", sets)
    out["mode=increment"] = ("mode", "increment", {"tcp.rwnd.mode": "increment"})
    return out


def decomposition(speed_kmh: float, rsrp_dbm: float) -> dict[str, dict[str, Any]]:
    """ARWND alone (CUBIC sender) and ACWND alone (fixed 128 KiB window), λ by the
    preset's rule: which half brings the gain."""
    lam = preset_lambda(speed_kmh, rsrp_dbm)
    return {
        "ARWND only": {
            "adaptive": False,
            "tcp.cc": "cubic",
            "tcp.recv_buffer": 6 * MiB,
            "tcp.rwnd.control": "arwnd",
            "tcp.rwnd.lambda": lam,
        },
        "ACWND only": {"adaptive": False, "tcp.cc": "acwnd", "tcp.cc_params.lambda": lam},
    }


def size_label(n: int) -> str:
    """A buffer size as written: MiB/MB, kB, else KiB."""
    if n % MiB == 0:
        return f"{n // MiB} MiB"
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000} MB"
    if n % 1000 == 0:
        return f"{n // 1000} kB"
    if n % KiB == 0:
        return f"{n // KiB} KiB"
    return f"{n} B"


def resolved(**spec: Any) -> dict[str, Any]:
    """The resolved ``lte-cabin`` scenario of ``spec``."""
    return json.loads(_core.expand(json.dumps({"preset": PRESET, **spec})))


def setup_numbers() -> dict[str, Any]:
    """The preset's numbers the report quotes, from the resolved scenarios."""
    cubic = resolved(rsrp_dbm=STATIC_RSRP)
    adaptive = resolved(rsrp_dbm=STATIC_RSRP, adaptive=True)
    links = {x["name"]: x for x in cubic["links"]}
    core, lte, cabin = links["core"], links["lte"], links["cabin"]
    dl, ul = lte["capacity_ab"]["channel"], lte["capacity_ba"]["channel"]
    tcp, atcp = cubic["flows"][0]["tcp"], adaptive["flows"][0]["tcp"]
    base_rtt_ms = 2 * sum(x["delay_ns"] for x in (core, lte, cabin)) / 1e6
    params = next(c for c in _core.congestion_controls() if c["name"] == "acwnd")["params"]
    return {
        "core": f"{core['rate_bps'] / 1e9:g} Gbit/s, {core['delay_ns'] / 1e6:g} ms",
        "radio_delay": f"{lte['delay_ns'] / 1e6:g} ms",
        "cabin": f"{cabin['rate_bps'] / 1e6:g} Mbit/s, {cabin['delay_ns'] / 1e6:g} ms",
        "base_rtt_ms": base_rtt_ms,
        "buffer": size_label(int(lte["queue_bytes"])),
        "rb": dl["bandwidth_rb"],
        "mhz": dl["bandwidth_rb"] / 5,
        "share": dl["share"],
        "bler": dl["bler"],
        "harq": dl["harq_max_tx"],
        "interference": (dl["interference_dbm"], ul["interference_dbm"]),
        "shadowing": (dl["shadowing_sigma_db"], dl["shadowing_decorrelation_m"]),
        "itbs": (dl["max_itbs"], ul["max_itbs"]),
        "recv_buffer": size_label(int(tcp["recv_buffer"])),
        "recv_buffer_bytes": int(tcp["recv_buffer"]),
        "send_buffer": size_label(int(tcp["send_buffer"])),
        "arwnd_buffer": size_label(int(atcp["recv_buffer"])),
        "rwnd": atcp["rwnd"],
        "acwnd": {p["name"]: p["default_linux"] for p in params[:5]},
        "mss": tcp["mss"],
    }


# -- grids -----------------------------------------------------------------------------


def _stack() -> Axis:
    return Axis.variants("stack", {PROFILE: {"tcp.profile": PROFILE}})


def _base(plan: Plan, **extra: Any) -> dict[str, Any]:
    return {"preset": PRESET, "stop": plan.stop, "rsrp_dbm": STATIC_RSRP, **extra}


def _schemes(names: Sequence[str]) -> Axis:
    return Axis.variants("variant", {n: SCHEMES[n] for n in names})


def _speeds(speeds: Sequence[float]) -> Axis:
    return Axis.values("speed_kmh", list(speeds))


def _paper_grids(plan: Plan) -> dict[str, Grid]:
    schemes = [CUBIC, ADAPTIVE, CUBIC_6M]
    variants = {n: SCHEMES[n] for n in schemes}
    if bbr_available():
        variants["BBR"] = {"adaptive": False, "tcp.cc": "bbr", "tcp.recv_buffer": 6 * MiB}
    return {
        "table1": Grid(
            "table1",
            "Table I: UL and DL, CUBIC vs ARWND+ACWND (and unthrottled CUBIC), static, by RSRP",
            _base(plan),
            (
                Axis.variants("dir", {k: {"direction": v} for k, v in DIRECTIONS.items()}),
                Axis.values("rsrp_dbm", list(plan.table1_rsrps), name="rsrp"),
                Axis.variants("variant", variants),
                _stack(),
            ),
        ),
        "rtt_trace": Grid(
            "rtt_trace",
            "RTT over time: DL, one seed, traced",
            _base(plan, trace_interval=plan.trace_interval),
            (_speeds(plan.trace_speeds_kmh), _schemes(schemes), _stack()),
            runs=1,
            trace=True,
        ),
    }


def _lambda_grids(plan: Plan) -> dict[str, Grid]:
    variants = Axis.variants("variant", lambda_variants(plan))
    return {
        "lambda_rsrp": Grid(
            "lambda_rsrp",
            "Fig. 9: DL, λ × growth reading at −81 and −110 dBm, static, fixed ACK path",
            _base(plan, capacity_up=ACK_PATH),
            (Axis.values("rsrp_dbm", list(plan.lambda_rsrps), name="rsrp"), variants, _stack()),
        ),
        "lambda_speed": Grid(
            "lambda_speed",
            "Fig. 10: DL, λ × growth reading by speed",
            _base(plan, rsrp_dbm=plan.speed_rsrp),
            (_speeds(plan.speeds_kmh), variants, _stack()),
        ),
        "ack_path": Grid(
            "ack_path",
            "check: the fixed ACK path against the channel model's uplink",
            _base(plan),
            (
                Axis.values("rsrp_dbm", list(plan.ack_rsrps), name="rsrp"),
                Axis.variants("ack_path", {"model": {}, "fixed": {"capacity_up": ACK_PATH}}),
                _schemes([CUBIC, ADAPTIVE]),
                _stack(),
            ),
        ),
    }


def _sensitivity_grids(plan: Plan) -> dict[str, Grid]:
    settings = {k: v[2] for k, v in sensitivity_settings(plan).items()}
    settings = {k: {"adaptive": True, **v} for k, v in settings.items()}
    speeds = _speeds(plan.sens_speeds_kmh)
    decomp = [
        Grid(
            f"decomposition_{v:g}",
            f"sensitivity: ARWND alone and ACWND alone, DL, {v:g} km/h",
            _base(plan, speed_kmh=v),
            (Axis.variants("setting", decomposition(v, STATIC_RSRP)), _stack()),
        )
        for v in plan.sens_speeds_kmh
    ]
    return {
        "sens_arwnd": Grid(
            "sens_arwnd",
            "sensitivity: ARWND+ACWND's unstated parameters, one at a time, DL",
            _base(plan),
            (speeds, Axis.variants("setting", settings), _stack()),
        ),
        **{g.name: g for g in decomp},
        "sens_rwnd": Grid(
            "sens_rwnd",
            "sensitivity: CUBIC's fixed receive window, DL",
            _base(plan),
            (
                speeds,
                Axis.variants(
                    "recv_buffer", {b: {"tcp.recv_buffer": b} for b in plan.recv_buffers}
                ),
                _schemes([CUBIC]),
                _stack(),
            ),
        ),
        "sens_buffer": Grid(
            "sens_buffer",
            "sensitivity: the eNB's per-user buffer, DL",
            _base(plan),
            (
                speeds,
                Axis.values("buffer", list(plan.buffers)),
                _schemes([CUBIC, ADAPTIVE, CUBIC_6M]),
                _stack(),
            ),
        ),
    }


def grids(plan: Plan, profile: str = PROFILE, runs: int | None = None) -> dict[str, Grid]:
    """Every sweep of the reproduction. ``profile`` is not used: the paper's stack is
    Linux (see the module doc)."""
    return {**_paper_grids(plan), **_lambda_grids(plan), **_sensitivity_grids(plan)}
