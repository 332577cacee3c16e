"""``vtlab study iso15118 --real [--quick]``: real ISO 15118 sessions over the
emulated cable, each paired with vtlab's session model on the same losses
(:mod:`.real`, :mod:`.real_pair`; docs/study-iso15118.md, "The real stack").

Cases (:func:`cases`): ``--quick`` runs one ISO 15118-2 session without loss and one
whose cable loses the 10th and 11th frames the vehicle sends (positions 9 and 10 of
the replay model toward the SECC: in the setup phase, where every message is
acknowledged at once, two consecutive frames of the vehicle include at least one
request, and the 2 s timeouts leave room for two retransmission timeouts). The full
run adds DIN SPEC 70121, Plug & Charge over TLS (loss-free and with the quick
run's loss) and ``seeds`` sessions per protocol with burst losses of
:data:`FULL_LOSS` in both directions of the cable. Each session's files are kept in
``OUT/sessions/<case>/``; a case whose ``session.json`` exists is read back instead
of run again (an interrupted study resumes, a finished one re-renders).
"""

from __future__ import annotations

import csv
import json
import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import vtlab.experiments.iso15118.real as real
import vtlab.experiments.iso15118.real_pair as real_pair
import vtlab.experiments.iso15118.real_report as real_report
from vtlab import _core
from vtlab.experiments.iso15118.analysis import wilson
from vtlab.validation.verdict import mean_ci

__all__ = ["FULL_LOSS", "RealCase", "RealOutcome", "cases", "run_real"]

#: Burst loss of the full run's lossy sessions, each direction of the cable.
FULL_LOSS = {"model": "burst", "mean_loss": 0.01, "burst_min": 1, "burst_max": 4}
#: The quick run's lossy session: the vehicle's 10th and 11th frames are lost.
QUICK_DROPS = [9, 10]
#: CurrentDemand exchanges per session (the EVCC simulator's ``chargeLoopCycle``
#: counts the PowerDelivery that starts the loop as its first cycle).
CYCLES = 10
DEFAULT_SEEDS = 10


@dataclass(frozen=True)
class RealCase:
    """One real session to run: its protocol, seed and the cable's loss."""

    name: str
    protocol: str
    seed: int
    loss: dict[str, Any] | None
    pnc: bool = False  #: Plug & Charge over TLS (certificates from :func:`real.make_pki`)


@dataclass
class RealOutcome:
    """What ``run_real`` wrote and how long it took."""

    out: Path
    files: list[Path]
    wall_s: float
    ran: int
    loaded: int


def cases(quick: bool, seeds: int | None = None) -> list[RealCase]:
    """The sessions of the quick or the full run."""
    lossy = {"reverse": {"model": "replay", "drops": QUICK_DROPS}}
    out = [
        RealCase("iso15118-2-lossfree", "iso15118-2", 1, None),
        RealCase("iso15118-2-replay-9-10", "iso15118-2", 1, lossy),
    ]
    if quick:
        return out
    out.append(RealCase("din70121-lossfree", "din70121", 1, None))
    out.append(RealCase("iso15118-2-pnc-tls-lossfree", "iso15118-2", 1, None, pnc=True))
    out.append(RealCase("iso15118-2-pnc-tls-replay-9-10", "iso15118-2", 1, lossy, pnc=True))
    both = {"forward": dict(FULL_LOSS), "reverse": dict(FULL_LOSS)}
    for protocol in real.PROTOCOLS:
        for seed in range(1, (seeds or DEFAULT_SEEDS) + 1):
            out.append(RealCase(f"{protocol}-burst1pct-s{seed}", protocol, seed, both))
    return out


def _session(case: RealCase, out: Path) -> tuple[real.RealSession, bool]:
    """The case's session: read back when its folder has one, else run."""
    folder = out / "sessions" / case.name
    if (folder / "session.json").exists():
        return real.load_session(folder), False
    pki = real.make_pki(out) if case.pnc else None
    sess = real.run_session(case.protocol, folder, seed=case.seed, loss=case.loss,
                            cycles=CYCLES, pki=pki)  # fmt: skip
    return sess, True


def run_real(
    out: Path,
    *,
    quick: bool = False,
    seeds: int | None = None,
    log: Callable[[str], None] | None = None,
) -> RealOutcome:
    """Run (or resume) the real sessions into ``out`` and write the report."""
    real.check_real()
    say = log or (lambda line: None)
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    records, ran = [], 0
    todo = cases(quick, seeds)
    for i, case in enumerate(todo, 1):
        sess, fresh = _session(case, out)
        ran += fresh
        rows = real.exchanges(sess)
        paired = real_pair.pair(rows, sess.frames)
        records.append({"case": case, "session": sess, "rows": rows, "paired": paired})
        say(f"[{i}/{len(todo)}] {case.name}: real {_outcome(sess.completed)}, "
            f"vtlab {_outcome(paired['sim_completed'])} ({sess.wall_s:.1f} s)")  # fmt: skip
    files = write_outputs(out, records, quick)
    wall = time.perf_counter() - started
    return RealOutcome(out, files, wall, ran, len(todo) - ran)


def _outcome(completed: bool) -> str:
    return "completed" if completed else "ended"


def label(case: RealCase) -> str:
    """The stack setting a case runs: the protocol, with ``+pnc-tls``."""
    return case.protocol + ("+pnc-tls" if case.pnc else "")


def profile_steps(
    protocol: str, pnc: bool = False, ecog: bool = False
) -> dict[str, tuple[int, int, float | None]]:
    """The built-in session profile's wire sizes per message (V2GTP header
    included; in TLS records with ``pnc``) and its timeout (s, the first of the
    message's steps): ``iso15118-2-dc`` or ``din70121-dc`` (the standard's
    V2G_EVCC_Msg_Timeout), with ``ecog`` ``iso15118-2-dc-ecog`` (this stack's)."""
    name = "din70121-dc" if protocol == "din70121" else "iso15118-2-dc"
    name += "-ecog" if ecog else ""
    session = {"profile": name, "duration": "1s"} | ({"payment": "pnc"} if pnc else {})
    spec = {"preset": "v2g", "session": session}
    steps = json.loads(_core.expand(json.dumps(spec)))["sessions"][0]["steps"]
    # A timeout of 0 is the model's "no deadline" (the TLS handshake): none here.
    out: dict[str, tuple[int, int, float | None]] = {}
    for st in steps:
        timeout = st["timeout_ns"] / 1e9 or None
        out.setdefault(st["name"], (st["request_bytes"], st["response_bytes"], timeout))
    return out


def exchange_table(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per exchange of every case: the real stack at the cable and the
    paired simulation side by side."""
    table = []
    for rec in records:
        case, sess = rec["case"], rec["session"]
        standard = profile_steps(case.protocol, case.pnc)
        for r, p in zip(rec["rows"], rec["paired"]["rows"], strict=True):
            std = standard.get(r["message"], (0, 0, None))[2]
            table.append({
                "case": case.name, "stack": label(case), "seed": case.seed,
                "index": r["index"], "message": r["message"],
                "request_bytes": r["request_bytes"], "response_bytes": r["response_bytes"],
                "timeout_s": r["timeout_s"], "processing_s": r["processing_s"],
                **{k: v for k, v in p.items() if k not in ("index", "message")},
                "standard_timeout_s": std,
                "standard_missed": _late(r["response_time_s"], standard.get(r["message"])),
                "real_completed": sess.completed,
            })  # fmt: skip
    return table


def session_table(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per case: both outcomes, the first missed deadline of each, the lost
    frames and how many the simulation has a counterpart for."""
    table = []
    for rec in records:
        case, sess, p = rec["case"], rec["session"], rec["paired"]
        lost = p["lost"]
        standard = profile_steps(case.protocol, case.pnc)
        late = [_late(r["response_time_s"], standard.get(r["message"])) for r in rec["rows"]]
        std_miss = late.index(True) if True in late else None
        table.append({
            "case": case.name, "stack": label(case), "seed": case.seed,
            "exchanges_real": len(rec["rows"]), "exchanges_sim": p["sim_exchanges"],
            "real_completed": sess.completed, "sim_completed": p["sim_completed"],
            "real_reason": sess.reason, "sim_reason": p["sim_abort_reason"],
            "real_first_miss": p["real_first_miss"], "sim_first_miss": p["sim_first_miss"],
            "standard_first_miss": std_miss,
            "lost_frames": len(lost),
            "lost_tcp": sum(x["kind"] in ("data", "ack", "syn") for x in lost),
            "mapped": sum(x["position"] is not None for x in lost),
            "processing_median_ms": p["processing_s"] * 1e3,
            "wall_s": sess.wall_s,
        })  # fmt: skip
    return table


def _late(response_s: float | None, step: tuple[int, int, float | None] | None) -> bool:
    """Whether a response misses the profile's deadline (none: it cannot)."""
    if step is None or step[2] is None:
        return False
    return response_s is None or response_s > step[2]


def size_table(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per protocol and message: the captured wire sizes (every instance the same,
    else the range) against the built-in profile's."""
    seen: dict[tuple[str, str], dict[str, set[int]]] = {}
    cases_by = {label(rec["case"]): rec["case"] for rec in records}
    for rec in records:
        for r in rec["rows"]:
            key = (label(rec["case"]), r["message"])
            d = seen.setdefault(key, {"req": set(), "resp": set()})
            d["req"].add(r["request_bytes"])
            if r["response_bytes"] is not None:
                d["resp"].add(r["response_bytes"])
    table = []
    for (stack, message), d in seen.items():
        case = cases_by[stack]
        prof = profile_steps(case.protocol, case.pnc).get(message)
        own = profile_steps(case.protocol, case.pnc, ecog=True).get(message) if (
            case.protocol == "iso15118-2") else None  # fmt: skip
        table.append({
            "stack": stack, "message": message,
            "request_bytes": _span(d["req"]), "response_bytes": _span(d["resp"]),
            "profile_request_bytes": prof[0] if prof else None,
            "profile_response_bytes": prof[1] if prof else None,
            "ecog_request_bytes": own[0] if own else None,
            "ecog_response_bytes": own[1] if own else None,
        })  # fmt: skip
    return table


def _span(xs: set[int]) -> str:
    if not xs:
        return ""
    lo, hi = min(xs), max(xs)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def timing_table(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per protocol and message, over the exchanges without a retransmission: the
    median and the largest response time at the cable, the charger's processing
    time and what remains (the network), in ms."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for rec in records:
        for r in rec["rows"]:
            clean = not (r["request_retransmissions"] or r["response_retransmissions"])
            if clean and r["response_time_s"] is not None and r["processing_s"] is not None:
                groups.setdefault((label(rec["case"]), r["message"]), []).append(r)
    table = []
    for (stack, message), rs in groups.items():
        rt = [r["response_time_s"] * 1e3 for r in rs]
        pr = [r["processing_s"] * 1e3 for r in rs]
        net = [(r["response_time_s"] - r["processing_s"]) * 1e3 for r in rs]
        table.append({
            "stack": stack, "message": message, "n": len(rs),
            "response_p50_ms": statistics.median(rt), "response_max_ms": max(rt),
            "processing_p50_ms": statistics.median(pr), "processing_max_ms": max(pr),
            "network_p50_ms": statistics.median(net), "network_max_ms": max(net),
        })  # fmt: skip
    return table


def summary(sessions: Sequence[Mapping[str, Any]], exch: Sequence[Mapping[str, Any]]) -> dict:
    """The paired comparison in numbers, with 95 % intervals: survival of each side
    and their agreement (Wilson), the difference of the network times vtlab − real
    (Student), over undisturbed exchanges and over those that met a retransmission
    on either side, and the agreement on retransmissions and first misses."""
    n = len(sessions)
    real_ok = sum(s["real_completed"] for s in sessions)
    sim_ok = sum(s["sim_completed"] for s in sessions)
    agree = sum(s["real_completed"] == s["sim_completed"] for s in sessions)
    first = sum(s["real_first_miss"] == s["sim_first_miss"] for s in sessions)
    # Under the standard's timers a session survives when it completed and no
    # response came later than the standard allows.
    std_ok = sum(s["real_completed"] and s["standard_first_miss"] is None for s in sessions)
    both = [e for e in exch if e["real_network_s"] is not None and e["sim_network_s"] is not None]
    clean = [e for e in both if not (e["real_retransmissions"] or e["sim_retransmissions"])]
    hit = [e for e in both if e["real_retransmissions"] or e["sim_retransmissions"]]
    out: dict[str, Any] = {
        "sessions": n, "real_completed": real_ok, "sim_completed": sim_ok,
        "real_survival_ci": wilson(real_ok, n), "sim_survival_ci": wilson(sim_ok, n),
        "outcome_agree": agree, "outcome_agree_ci": wilson(agree, n),
        "first_miss_agree": first,
        "standard_survived": std_ok, "standard_survival_ci": wilson(std_ok, n),
        "retransmissions_equal": sum(e["real_retransmissions"] == e["sim_retransmissions"]
                                     for e in both),  # fmt: skip
        "exchanges_compared": len(both),
    }  # fmt: skip
    for label, group in (("clean", clean), ("retransmitted", hit)):
        diff = [(e["sim_network_s"] - e["real_network_s"]) * 1e3 for e in group]
        mean, half, k = mean_ci(diff)
        out[f"{label}_n"] = k
        out[f"{label}_diff_ms"] = (mean, half)
        out[f"{label}_real_p50_ms"] = _median([e["real_network_s"] * 1e3 for e in group])
        out[f"{label}_sim_p50_ms"] = _median([e["sim_network_s"] * 1e3 for e in group])
    return out


def _median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else math.nan


def _write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    with path.open("w", newline="") as fh:
        if rows:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return path


def write_outputs(out: Path, records: Sequence[Mapping[str, Any]], quick: bool) -> list[Path]:
    """``exchanges.csv``, ``sessions.csv``, ``sizes.csv``, ``timing.csv``,
    ``summary.json`` and ``report.md``."""
    exch, sess = exchange_table(records), session_table(records)
    sizes, timing = size_table(records), timing_table(records)
    summ = summary(sess, exch)
    files = [
        _write_csv(out / "exchanges.csv", exch),
        _write_csv(out / "sessions.csv", sess),
        _write_csv(out / "sizes.csv", sizes),
        _write_csv(out / "timing.csv", timing),
    ]
    (out / "summary.json").write_text(json.dumps(summ, indent=1, default=str))
    report = real_report.render(summ, sess, sizes, timing, quick=quick)
    (out / "report.md").write_text(report)
    return [*files, out / "summary.json", out / "report.md"]
