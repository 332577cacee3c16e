"""What packet captures cost: engine wall time of one scenario with captures off,
with headers-only captures and with full captures (every node, into a temporary
directory), and optionally with another build of the compiled core.

    python benchmarks/captures.py [--repeat 7] [--baseline-core PATH]

``--baseline-core`` times the same scenario with another build of the core (e.g.
one from before captures existed) to show that captures cost nothing when off.
Prints the median engine time of each mode (the core's own ``wall_s``) and its
ratio to "off".  Runs without captures alternate between the builds so that
machine load drifts affect both alike, and come before the runs that write files.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
from pathlib import Path

from _cores import SPEC, load_core  # noqa: E402 - beside this script


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--baseline-core", default=None)
    args = ap.parse_args()
    core = load_core(None)
    base = load_core(args.baseline_core) if args.baseline_core else None
    spec = json.dumps(SPEC)
    tmp = Path(tempfile.mkdtemp(prefix="vtlab-bench-pcap-"))
    times: dict[str, list[float]] = {"off": [], "headers only": [], "full": []}
    if base is not None:
        times["baseline core, off"] = []
    # Without captures first (alternating with the baseline build, so that load
    # drifts affect both alike), then with: writing hundreds of MB leaves the disk
    # busy for a while, which would slow the runs after it.
    for _ in range(args.repeat):
        times["off"].append(core.run(spec, 1)["meta"]["wall_s"])
        if base is not None:
            times["baseline core, off"].append(base.run(spec, 1)["meta"]["wall_s"])
    try:
        for _ in range(args.repeat):
            for name, payload in (("headers only", False), ("full", True)):
                out = core.run(spec, 1, pcap=str(tmp), pcap_payload=payload)
                times[name].append(out["meta"]["wall_s"])
                size = sum(f.stat().st_size for f in tmp.iterdir())
                times.setdefault(f"{name} bytes", []).append(size)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    off = statistics.median(times["off"])
    print(f"scenario: {json.dumps(SPEC)}, median of {args.repeat}")
    for name, values in times.items():
        if name.endswith("bytes"):
            continue
        t = statistics.median(values)
        extra = ""
        if f"{name} bytes" in times:
            extra = f"  ({statistics.median(times[f'{name} bytes']) / 1e6:.0f} MB written)"
        print(f"{name:24s} {t * 1e3:8.2f} ms  ×{t / off:.3f}{extra}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
