"""vtlab against the stored ns-3 runs of the V2G bulk transfer without SACK
(docs/validation.md, "802.11", "The same rules on the V2G cable").

``validation/ns3/results/classic_nosack.jsonl`` holds ns-3.44 runs of
``validation/ns3/v2g.cc`` with ``--sack=false --recovery=classic`` (100 MB, 5 % loss
on the data direction, no queue disc, runs 1-6) for four algorithms. This runs vtlab's
side of the same cells (``recovery = "newreno"``, seeds 1-6; the seeds are not paired
with ns-3's runs) and prints mean goodput, retransmissions, timeouts (every expiry of
the timer, and the loss episodes they start) and fast recoveries side by side. No ns-3
needed; about 2 s.

    PYTHONPATH=python python validation/ns3/v2g_nosack.py [RESULTS.jsonl]
"""

from __future__ import annotations

import json
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from vtlab import _core
from vtlab.validation.v2g import vtlab_spec

RESULTS = Path(__file__).with_name("results") / "classic_nosack.jsonl"
NAMES = {
    "TcpNewReno": "newreno",
    "TcpIllinois": "illinois",
    "TcpHybla": "hybla",
    "TcpScalable": "scalable",
}
SEEDS = range(1, 7)


def vtlab_run(cell: tuple[str, int]) -> tuple[str, float, int, int, int]:
    cc, seed = cell
    spec = vtlab_spec(cc, 0.05, 100_000_000, "1", "ns3", "none")
    spec["tcp"]["recovery"] = "newreno"
    f = _core.run(json.dumps(spec), seed, False)["flows"]
    return (
        cc,
        f["goodput_bps"][0],
        f["retransmissions"][0],
        f["rto_count"][0],
        f["fast_recoveries"][0],
        f["slow_starts_after_loss"][0],
    )


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else RESULTS
    ns3: dict[str, list[dict]] = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        ns3.setdefault(NAMES[r["cc"]], []).append(r)
    with ProcessPoolExecutor(2) as ex:
        runs = list(ex.map(vtlab_run, [(cc, s) for cc in ns3 for s in SEEDS]))
    # Timeouts two ways, as `vtlab validate v2g` pairs them: every expiry of the timer
    # (ns-3's rto_expiries, vtlab's rto_count: backoff repeats included) and the loss
    # episodes they start (ns-3's rto_count, entries into CA_LOSS; vtlab's
    # slow_starts_after_loss, a timeout outside state Loss).
    print(
        "cc         ns-3 kbit/s  vtlab  ratio   retx ns-3/vtlab  RTO expiries  episodes"
        "  fast recoveries"
    )
    for cc, rows in ns3.items():
        vt = [r for r in runs if r[0] == cc]

        def mean(xs):
            return statistics.mean(xs)

        g3 = mean([r["goodput_bps"] for r in rows]) / 1e3
        gv = mean([r[1] for r in vt]) / 1e3
        print(
            f"{cc:10s} {g3:10.1f} {gv:7.1f} {gv / g3:6.3f}"
            f"  {mean([r['retransmissions'] for r in rows]):7.0f}/{mean([r[2] for r in vt]):6.0f}"
            f"  {mean([r['rto_expiries'] for r in rows]):6.0f}/{mean([r[3] for r in vt]):5.0f}"
            f"  {mean([r['rto_count'] for r in rows]):4.0f}/{mean([r[5] for r in vt]):4.0f}"
            f"  {mean([r['fast_recoveries'] for r in rows]):5.0f}/{mean([r[4] for r in vt]):5.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
