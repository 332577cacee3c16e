"""The LTE uplink's capacity against ns-3's at the Hu study's RSRPs (issue 26, 1c).

ns-3 (``validation/ns3/lte.cc``): one UE sends saturating UDP (100 Mbit/s into a
2 MiB RLC buffer) to the remote host for 5 s, static, 50 resource blocks, the eNB at
46 dBm (vtlab's default at 50 RBs, so that the RSRP ns-3 reports is the RSRP vtlab
is given), the UE at the distance whose COST-231 path loss gives the target RSRP
(measured in each run), ns-3's uplink power control (23 dBm here), the PF
scheduler, no interference. The uplink goodput is the remote host's.

vtlab: the channel model's uplink at the same RSRP, mean bytes per TTI over 5 s,
under ns-3's conditions (the whole band, no interference, no fading or shadowing,
no HARQ failures, 64QAM allowed: ``NS3_CONDITIONS``) and as ``lte-cabin`` uses it
(share 0.7, static: its defaults). The ns-3 runs are stored in
``validation/lte/uplink/ns3_uplink.json``; the comparison reruns vtlab only.

``python -m vtlab.validation.lte_uplink [--rerun-ns3] [--out validation/lte/uplink]``
writes ``uplink.md`` and ``uplink.csv``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vtlab.errors import CliError

__all__ = [
    "NS3_CONDITIONS",
    "POINTS",
    "compare",
    "load_ns3",
    "run_ns3",
    "vtlab_uplink_mbps",
    "write_tables",
]

#: (target RSRP dBm, UE distance m): COST-231 at ns-3's default EARFCN with the
#: eNB at 46 dBm; the RSRP each run measured is stored beside it.
POINTS: tuple[tuple[float, float], ...] = ((-81.0, 57.9), (-90.0, 106.8), (-110.0, 418.0))
#: Seconds per ns-3 run and per vtlab series.
DURATION_S = 5.0
#: ns-3's eNB power in these runs (dBm): vtlab's default at 50 RBs.
ENB_TX_POWER_DBM = 46.0
#: vtlab's channel model under ns-3's uplink conditions (one UE, no other cell).
NS3_CONDITIONS: dict[str, Any] = {
    "share": 1.0,
    "interference_dbm": -200.0,
    "fading": False,
    "shadowing_sigma_db": 0.0,
    "bler": 0.0,
    "max_itbs": 26,
}
#: Where ``--rerun-ns3`` stores the rows and the tables go (a checkout's folder).
_STORED = Path("validation/lte/uplink/ns3_uplink.json")


def _shipped() -> Path:
    """The stored rows vtlab ships (:func:`vtlab.packagedata.validation_dir`)."""
    from vtlab.packagedata import validation_dir

    return validation_dir() / "lte" / "uplink" / "ns3_uplink.json"


def _args(distance_m: float) -> list[str]:
    from vtlab.ns3.lte import CORE_DELAY_MS, PATHLOSS, UDP_RATE_MBPS

    return [
        "--direction=ul",
        "--app=udp",
        f"--udpRate={UDP_RATE_MBPS:g}",
        "--rlcBuffer=2097152",
        f"--duration={DURATION_S:g}",
        f"--distance={distance_m:g}",
        "--speed=0",
        f"--coreDelay={CORE_DELAY_MS:g}",
        f"--pathloss={PATHLOSS}",
        f"--enbTxPower={ENB_TX_POWER_DBM:g}",
        "--chanPeriod=100",
        "--run=1",
    ]


def run_ns3(path: Path = _STORED, log: Callable[[str], None] | None = None) -> list[dict]:
    """Run ns-3 at every point of :data:`POINTS` and store the rows in ``path``."""
    from vtlab.ns3.lte import ensure_lte_binary, run_lte

    binary = ensure_lte_binary(log=log)
    rows = []
    for rsrp, dist in POINTS:
        res = run_lte(_args(dist), binary=binary)
        mcs = sorted(res.get("tb_mcs") or [])
        rows.append(
            {
                "rsrp_target_dbm": rsrp,
                "distance_m": dist,
                "rsrp_dbm": (res.get("chan") or {}).get("rsrp_dbm", [None])[0],
                "goodput_mbps": (res.get("goodput_bps") or 0.0) / 1e6,
                "tb_mbps": sum(res["tb_bytes"]) * 8 / DURATION_S / 1e6,
                "mcs_median": mcs[len(mcs) // 2] if mcs else None,
                "wall_s": res.get("wall_s"),
                "args": [Path(res["args"][0]).name, *res["args"][1:]],
            }
        )
        if log is not None:
            log(f"ns-3 uplink at {rsrp:g} dBm: {rows[-1]['goodput_mbps']:.2f} Mbit/s")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, indent=1) + "\n")
    return rows


def load_ns3(path: Path | None = None) -> list[dict]:
    """The stored ns-3 rows (default: those vtlab ships)."""
    return json.loads(Path(path or _shipped()).read_text())


def vtlab_uplink_mbps(rsrp_dbm: float, conditions: dict[str, Any] | None) -> float:
    """The channel model's mean uplink capacity (Mbit/s) at ``rsrp_dbm`` over
    :data:`DURATION_S`, seed 1: under ``conditions`` (model fields), or ``lte-cabin``'s
    defaults for ``None``."""
    from vtlab.cellular import channel_series

    model = {"rsrp_dbm": float(rsrp_dbm), **(conditions or {})}
    spec = {"preset": "lte-cabin", "capacity_up": {"model": model}}
    df = channel_series(spec, DURATION_S, 1, "up")
    ok = df["bytes"][~df["lost"].astype(bool)]
    return float(ok.sum()) * 8 / DURATION_S / 1e6


def compare(ns3_rows: Sequence[dict]) -> list[dict]:
    """ns-3's uplink goodput beside vtlab's capacity at each stored point."""
    out = []
    for r in ns3_rows:
        ns3 = float(r["goodput_mbps"])
        like = vtlab_uplink_mbps(r["rsrp_target_dbm"], NS3_CONDITIONS)
        cabin = vtlab_uplink_mbps(r["rsrp_target_dbm"], None)
        out.append(
            {
                "rsrp_dbm": r["rsrp_target_dbm"],
                "ns3_rsrp_dbm": r["rsrp_dbm"],
                "ns3_goodput_mbps": ns3,
                "ns3_mcs_median": r["mcs_median"],
                "vtlab_ns3_conditions_mbps": like,
                "ratio": like / ns3 if ns3 > 0 else float("nan"),
                "vtlab_lte_cabin_mbps": cabin,
            }
        )
    return out


def write_tables(rows: Sequence[dict], out: Path) -> Path:
    """``uplink.md`` and ``uplink.csv`` in ``out``; returns the markdown's path."""
    import csv

    out.mkdir(parents=True, exist_ok=True)
    with (out / "uplink.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [
        "# LTE uplink capacity: vtlab's channel model against ns-3.44",
        "",
        "Saturating UDP uplink, static UE, 50 RBs; Mbit/s. vtlab under ns-3's "
        "conditions: share 1.0, no interference, no fading/shadowing/HARQ failures, "
        "I_TBS ≤ 26; `lte-cabin`: its defaults (share 0.7, BLER 0.1), static.",
        "",
        "| RSRP (dBm) | ns-3 goodput | ns-3 MCS (median) | vtlab, ns-3's conditions "
        "| ratio | vtlab, lte-cabin |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ratio = "–" if r["ratio"] != r["ratio"] else f"{r['ratio']:.3f}"
        mcs = "–" if r["ns3_mcs_median"] is None else str(r["ns3_mcs_median"])
        lines.append(
            f"| {r['rsrp_dbm']:g} | {r['ns3_goodput_mbps']:.2f} | {mcs} "
            f"| {r['vtlab_ns3_conditions_mbps']:.2f} | {ratio} "
            f"| {r['vtlab_lte_cabin_mbps']:.2f} |"
        )
    path = out / "uplink.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def _main(argv: Sequence[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m vtlab.validation.lte_uplink")
    ap.add_argument("--rerun-ns3", action="store_true", help="run ns-3 and store its rows")
    ap.add_argument("--out", type=Path, default=_STORED.parent)
    a = ap.parse_args(argv)
    from vtlab.ns3.program import Ns3Error

    try:
        ns3 = run_ns3(log=print) if a.rerun_ns3 else load_ns3()
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (Ns3Error, OSError, ValueError) as exc:
        where = "--rerun-ns3" if a.rerun_ns3 else "the stored ns-3 runs"
        print(f"error: {where}: {exc}", file=sys.stderr)
        return 2
    print(write_tables(compare(ns3), a.out))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
