"""Refactoring goldens: every result row of a grid of scenarios, recorded once and
compared bit for bit after each change that must not change results.

These are *not* correctness tests (the expected values come from the simulator
itself); they pin behaviour across refactorings, so that a redesign that claims
to change no result can prove it. Correctness is tested elsewhere against hand
computations, RFC examples and ns-3.

    python tests/goldens/goldens.py record   # write tests/goldens/runs.json.gz
    python tests/goldens/goldens.py check    # compare; exit 1 naming the first difference

A deliberate change of results re-records the file in the same commit and says
why in its message.
"""

from __future__ import annotations

import gzip
import json
import math
import sys
from pathlib import Path

from vtlab import _core

PATH = Path(__file__).with_name("runs.json.gz")

CCS = [c["name"] for c in _core.congestion_controls()]
#: Trace columns renamed since the goldens were recorded: new name -> old name.
RENAMED: dict[str, str] = {"flight_size_bytes": "bytes_in_flight"}


def cases() -> list[tuple[str, dict, int, bool]]:
    """(label, spec, seed, trace) for every golden run."""
    out: list[tuple[str, dict, int, bool]] = []
    for profile in ("ns3", "linux"):
        for cc in CCS:
            if cc in ("tahoe", "reno", "sack"):
                continue  # recovery variants are covered below by tcp.recovery
            for loss in ("1%", "5%"):
                for seed in (1, 2):
                    spec = {
                        "preset": "v2g",
                        "bytes": "3MB",
                        "loss": {"mean_loss": loss},
                        "tcp": {"cc": cc, "profile": profile},
                    }
                    out.append((f"v2g/{profile}/{cc}/{loss}/{seed}", spec, seed, False))
        for recovery, prr in (
            ("tahoe", False),
            ("reno", False),
            ("newreno", False),
            ("sack", False),
        ):
            for ts in (True, False):
                for seed in (1, 2, 3):
                    spec = {
                        "preset": "v2g",
                        "bytes": "3MB",
                        "loss": {"mean_loss": "3%"},
                        "tcp": {
                            "cc": "newreno",
                            "profile": profile,
                            "recovery": recovery,
                            "prr": prr,
                            "timestamps": ts,
                        },
                    }
                    out.append((f"v2g/{profile}/{recovery}/ts={ts}/{seed}", spec, seed, False))
        for cc in ("newreno", "cubic", "illinois-aa", "newreno-sc"):
            spec = {
                "preset": "station",
                "bytes": "1MB",
                "loss": {"mean_loss": "2%"},
                "tcp": {"cc": cc, "profile": profile},
            }
            out.append((f"station/{profile}/{cc}", spec, 7, False))
        for lossmodel in (
            {"model": "bernoulli", "mean_loss": "1%"},
            {"model": "gilbert-elliott", "mean_good": 1.0, "mean_bad": 0.05, "loss_bad": 0.3},
        ):
            spec = {
                "preset": "wired-wireless",
                "bytes": "2MB",
                "loss": lossmodel,
                "tcp": {"profile": profile},
                "groups": [
                    {"cc": "newreno-lp", "flows": 2},
                    {"cc": "newreno", "flows": 2, "stagger": "100ms"},
                    {"cc": "newreno-ideal-lp", "flows": 1, "bytes": "200KB"},
                ],
            }
            out.append((f"ww/{profile}/{lossmodel['model']}", spec, 3, False))
        for cc in ("newreno", "cubic", "westwood-plus"):
            spec = {
                "preset": "v2g",
                "bytes": "1MB",
                "loss": {"mean_loss": "5%"},
                "tcp": {"cc": cc, "profile": profile},
            }
            out.append((f"trace/{profile}/{cc}", spec, 5, True))
    # Every queue disc in front of the links (the ns3 cases above run the
    # profile's default, fq_codel), and the device queue alone.
    for qdisc in ("none", "pfifo_fast", "codel", "red", "pie"):
        for cc in ("newreno", "cubic"):
            spec = {
                "preset": "v2g",
                "bytes": "3MB",
                "loss": {"mean_loss": "1%"},
                "qdisc": qdisc,
                "tcp": {"cc": cc},
            }
            out.append((f"qdisc/{qdisc}/{cc}", spec, 1, False))
    # The 802.11 chain: both reception rules, RTS on and off, the error model.
    for hops, rts, reception, error in (
        (1, True, "threshold", "0%"),
        (8, True, "threshold", "0%"),
        (8, False, "dsss-ber", "0%"),
        (3, True, "threshold", "10%"),
    ):
        rule = {"model": "threshold", "sinr_db": 10.0}
        if reception == "dsss-ber":
            rule = {"model": "dsss-ber", "preamble_snr_db": 4.0}
        spec = {
            "preset": "vanet-chain",
            "hops": hops,
            "rts": rts,
            "error_rate": error,
            "stop": "21s",
            "wifi": {"reception": rule},
        }
        out.append((f"wifi/h{hops}/rts={rts}/{reception}/{error}", spec, 2, False))
    return out


def _canon(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v.hex()
    return v


def run_case(spec: dict, seed: int, trace: bool) -> dict:
    r = _core.run(json.dumps(spec), seed, trace)
    out = {}
    for table in ("flows", "links", "traces"):
        cols = r[table]
        if cols is None:
            continue
        out[table] = {RENAMED.get(k, k): [_canon(x) for x in v] for k, v in cols.items()}
    return out


def record() -> None:
    data = {label: run_case(spec, seed, trace) for label, spec, seed, trace in cases()}
    with gzip.open(PATH, "wt") as fh:
        json.dump(data, fh, sort_keys=True)
    print(f"recorded {len(data)} runs to {PATH}")


def check() -> int:
    with gzip.open(PATH, "rt") as fh:
        golden = json.load(fh)
    n = 0
    for label, spec, seed, trace in cases():
        if label not in golden:
            continue  # a case added after the recording
        got = run_case(spec, seed, trace)
        want = golden[label]
        for table, cols in want.items():
            for col, values in cols.items():
                have = got.get(table, {}).get(col)
                if have != values:
                    idx = next(
                        (
                            i
                            for i, (a, b) in enumerate(zip(values, have or [], strict=False))
                            if a != b
                        ),
                        None,
                    )
                    print(
                        f"{label}: {table}.{col} differs"
                        + (
                            f" at row {idx}: golden {values[idx]!r}, now {have[idx]!r}"
                            if idx is not None and have
                            else f": now {have!r}"
                        )
                    )
                    return 1
        n += 1
    print(f"{n} golden runs identical")
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "check"
    if cmd == "record":
        record()
    else:
        sys.exit(check())
