#!/usr/bin/env bash
# Build the ns-3 V2G reference program against the ns3==3.44 PyPI wheel.
# Usage: validation/ns3/build.sh [BUILD_DIR]   (default: validation/ns3/build)
#
# The compile command lives in python/vtlab/ns3/program.py, shared with `vtlab validate` and
# `vtlab bench --vs-ns3` (which compile into ~/.cache/vtlab/ns3/<hash>/v2g on demand).
# That module imports only the standard library, so it runs here as a plain script
# with $PYTHON (default python3), which must have the ns3 wheel installed.
# Idempotent: recompiles only when v2g.cc, the compile command or ns-3 changed
# (BUILD_DIR/v2g.hash holds the build hash). Prints the path of the binary.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE/build}"
PY="${PYTHON:-python3}"
exec "$PY" "$HERE/../../python/vtlab/ns3/program.py" build --out "$OUT" --source "$HERE/v2g.cc"
