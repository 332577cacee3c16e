"""What observing a run costs: engine wall time of one scenario with events and
traces off, with typed events on, with sampled traces and with change traces.

    python benchmarks/events.py [--repeat 7] [--baseline-core PATH]

``--baseline-core`` also times the same scenario (events off) with another build
of the compiled core (e.g. one from before events existed), to show that the
observer costs nothing when off. Prints the median engine time of each mode
(the core's own ``wall_s``, without Python start-up) and its ratio to "off".
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from _cores import SPEC, load_core  # noqa: E402 - beside this script


def median_wall(core, repeat: int, **opts) -> float:
    spec = json.dumps(SPEC)
    return statistics.median(core.run(spec, 1, **opts)["meta"]["wall_s"] for _ in range(repeat))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--baseline-core", default=None)
    args = ap.parse_args()
    core = load_core(None)
    modes = {
        "off": {},
        "events": {"events": True},
        "trace (sampled 10 ms)": {"trace": True},
        "trace (changes)": {"trace": True, "trace_changes": True},
    }
    off = median_wall(core, args.repeat)
    print(f"scenario: {json.dumps(SPEC)}, median of {args.repeat}")
    for name, opts in modes.items():
        t = off if name == "off" else median_wall(core, args.repeat, **opts)
        print(f"{name:24s} {t * 1e3:8.2f} ms  ×{t / off:.3f}")
    if args.baseline_core:
        base = median_wall(load_core(args.baseline_core), args.repeat)
        print(f"{'baseline core, off':24s} {base * 1e3:8.2f} ms  ×{base / off:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
