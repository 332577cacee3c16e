"""Converting a store of the earlier layout (one file pair per run in ``DIR/runs/``,
:mod:`vtlab.runstore`) into the columnar store (:mod:`vtlab.store`), in place:
``vtlab load DIR --convert``.

The old ``runs/`` folder is first renamed ``runs.v1/``; each of its runs is read and
verified as before (checksums, the identity inside each file) and committed to the
new layout in parts. A run that fails its checks is left out with a warning (a sweep
simulates it again). Conversion can be interrupted and started again: committed runs
are not converted twice. ``runs.v1/`` is kept; delete it once the store is checked.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from vtlab.api import Result
from vtlab.runstore import STORE_KEY, StoredRunError, StoreError, read_table
from vtlab.store import Store, StoreWriter

__all__ = ["OLD_RUNS", "convert"]

#: Where the old layout's ``runs/`` folder is moved during conversion.
OLD_RUNS = "runs.v1"

#: An old flows file's name: ``<scenario hash>-<seed>-<version>-<core build>.parquet``.
_FLOWS_NAME = re.compile(r"^([0-9a-f]{16}-[0-9]+-.+-[0-9a-f]+)\.parquet$")


def _old_keys(run_dir: Path) -> list[str]:
    keys = [m.group(1) for e in os.scandir(run_dir) if (m := _FLOWS_NAME.match(e.name))]
    return sorted(keys)


def _inside(run_dir: Path, key: str) -> dict[str, Any]:
    """The run metadata an old flows file carries (read after its checks passed)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(run_dir / f"{key}.parquet").metadata or {}
    return dict(json.loads(meta[STORE_KEY]))


def convert(store: str | os.PathLike[str]) -> tuple[int, int]:
    """Convert the old-layout store ``store`` in place; returns (runs converted, runs
    left out because they failed their checks). :class:`StoreError` for a folder
    that is not an old-layout store."""
    root = Path(store)
    old = root / OLD_RUNS
    if not old.is_dir():
        runs = root / "runs"
        if not runs.is_dir() or not any(e.name.endswith(".sha256") for e in os.scandir(runs)):
            raise StoreError(root, "not a store of the earlier layout (no runs/*.sha256)")
        os.replace(runs, old)
    target = Store.open(root, create=True)
    done = target.index()
    writers: dict[tuple[str, bool], StoreWriter] = {}
    converted = failed = 0
    try:
        for key in _old_keys(old):
            if key in done:
                continue
            try:
                tables = {
                    t: read_table(old, key, t)
                    for t in ("flows", "links", "sessions", "messages", "traces")
                }
                inside = _inside(old, key)
            except StoredRunError as e:
                print(f"warning: {e}; not converted", file=sys.stderr)
                failed += 1
                continue
            traced = tables["traces"] is not None
            form = str(inside.get("messages", "rows"))
            writer = writers.setdefault(
                (form, traced), StoreWriter(target, messages=form, traces=traced)
            )
            res = Result(
                flows=tables["flows"],
                links=tables["links"],
                traces=tables["traces"],
                sessions=tables["sessions"],
                messages=tables["messages"],
            )
            described = {k: inside[k] for k in ("spec", "scenario") if k in inside}
            writer.add([(key, described)], res)
            converted += 1
    finally:
        for writer in writers.values():
            writer.flush()
    return converted, failed
