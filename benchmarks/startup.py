"""Start-up time of the ``vtlab`` command line, as whole processes.

Runs each command N times as ``python -m vtlab ARGS`` (output discarded) and prints
the median, minimum and maximum wall time, the median CPU time (user + system, less
sensitive to other load on the machine than wall time) and the heavy libraries the
command imports (read from one extra run under ``python -X importtime``).

    python benchmarks/startup.py                  # this tree, N = 15
    python benchmarks/startup.py -n 30 --json
    python benchmarks/startup.py --tree /tmp/old/python   # another source tree

The child processes may write ``__pycache__`` (``PYTHONDONTWRITEBYTECODE`` is
removed from their environment) so that, as in an installed package, modules are
not recompiled on every start; one warm-up run per command comes first.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from vtlab.bench import (  # noqa: E402
    HEAVY_MODULES,
    _vtlab_env,
    heavy_imports,
    imported_modules,
)

#: Command lines measured by default (arguments after ``vtlab``).
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--help",),
    ("version",),
    ("run", "v2g", "--json"),
    ("run", "v2g", "--bytes", "1MB", "--json"),
    ("run", "v2g", "--bytes", "1MB"),
)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(args: tuple[str, ...], n: int, python: str, tree: Path) -> dict[str, object]:
    env = _vtlab_env(tree)
    cmd = [python, "-m", "vtlab", *args]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(n):
        cpu0 = _children_cpu()
        started = time.perf_counter()
        subprocess.run(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True
        )
        walls.append(time.perf_counter() - started)
        cpus.append(_children_cpu() - cpu0)
    modules = imported_modules(args, python=python, pythonpath=tree)
    return {
        "command": "vtlab " + " ".join(args),
        "n": n,
        "median_ms": statistics.median(walls) * 1e3,
        "min_ms": min(walls) * 1e3,
        "max_ms": max(walls) * 1e3,
        "median_cpu_ms": statistics.median(cpus) * 1e3,
        "heavy_imports": heavy_imports(modules),
        "heavy_import_ms": {m: round(modules[m] * 1e3, 1) for m in heavy_imports(modules)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=15, help="runs per command (default 15)")
    parser.add_argument("--python", default=sys.executable, help="interpreter to run")
    parser.add_argument(
        "--tree",
        type=Path,
        default=REPO / "python",
        help="directory holding the vtlab package to measure (default: this tree)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per command")
    opts = parser.parse_args()
    if opts.n < 1:
        parser.error("-n must be at least 1")
    if not opts.json:
        print(f"vtlab start-up, {opts.tree}, median of {opts.n} runs per command")
        print(f"heavy libraries watched: {', '.join(HEAVY_MODULES)}")
    for args in COMMANDS:
        row = measure(args, opts.n, opts.python, opts.tree)
        if opts.json:
            print(json.dumps(row))
            continue
        heavy = ", ".join(f"{m} {t:.0f} ms" for m, t in row["heavy_import_ms"].items())  # type: ignore[union-attr]
        print(
            f"{row['median_ms']:7.0f} ms wall (min {row['min_ms']:.0f}, max {row['max_ms']:.0f})"
            f" {row['median_cpu_ms']:5.0f} ms CPU  {row['command']}"
            f"\n{'':>10}heavy imports: {heavy or 'none'}"
        )


if __name__ == "__main__":
    main()
