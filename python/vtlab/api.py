"""Running simulations: :func:`run`, :func:`run_many` and :class:`Result`."""

from __future__ import annotations

import functools
import itertools
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtlab import _core, gcpause
from vtlab.progress import run_progress
from vtlab.rawtables import alike_without_rows, joined_table
from vtlab.resultfiles import (
    MAX_CARRIED_SCENARIO_BYTES,
    META_KEY,
    SCENARIO_KEY,
    json_default,
    scenario_metadata,
    sibling_paths,
    write_parquet,
)
from vtlab.scenario import Scenario, ScenarioLike
from vtlab.seeds import MAX_RUNS, MAX_SEED, MAX_SWEEP_RUNS, check_seed, check_seeds
from vtlab.stats import DEFAULT_METRICS

if TYPE_CHECKING:  # pandas is imported only when a DataFrame is first needed
    import pandas as pd

__all__ = [
    "EVENT_COLUMNS",
    "FLOW_COLUMNS",
    "Interrupted",
    "SCHEMA",
    "LINK_COLUMNS",
    "MAX_RUNS",
    "MAX_CARRIED_SCENARIO_BYTES",
    "MAX_SEED",
    "MAX_SWEEP_RUNS",
    "MESSAGE_COLUMNS",
    "SESSION_COLUMNS",
    "TRACE_COLUMNS",
    "Result",
    "check_seed",
    "check_seeds",
    "core_build",
    "pcap_dir",
    "run",
    "run_many",
    "scenario_metadata",
    "sibling_paths",
]

#: The declared columns of every result table, from the core's one declaration
#: (``vtlab._core.schema()``): table -> list of {name, kind, unit, doc}.
SCHEMA: dict[str, list[dict[str, str]]] = _core.schema()

#: Columns of :attr:`Result.flows`, one row per flow per run.
FLOW_COLUMNS: tuple[str, ...] = tuple(c["name"] for c in SCHEMA["flows"])

#: Columns of :attr:`Result.links`, one row per link direction per run.
LINK_COLUMNS: tuple[str, ...] = tuple(c["name"] for c in SCHEMA["links"])

#: Columns of :attr:`Result.sessions`, one row per request/response session per run.
SESSION_COLUMNS: tuple[str, ...] = tuple(c["name"] for c in SCHEMA["sessions"])

#: Columns of :attr:`Result.messages`, one row per exchange of a session.
MESSAGE_COLUMNS: tuple[str, ...] = tuple(c["name"] for c in SCHEMA["messages"])

#: Columns of :attr:`Result.traces`.
TRACE_COLUMNS: tuple[str, ...] = tuple(c["name"] for c in SCHEMA["traces"])

#: Flow columns :meth:`Result._repr_html_` shows in a notebook.
HTML_COLUMNS = (
    "seed", "flow", "cc", "completed", "goodput_bps", "completion_s",
    "retransmissions", "rto_count", "rtt_mean_s",
)  # fmt: skip

#: Columns of :attr:`Result.events`.
EVENT_COLUMNS: tuple[str, ...] = tuple(c["name"] for c in SCHEMA["events"])

#: Accepted values of ``trace``: off, sampled every ``trace_interval``, or a row at
#: every change of cwnd, ssthresh or congestion state.
TRACE_MODES = (False, True, "sampled", "changes")


def trace_flags(trace: Any) -> tuple[bool, bool]:
    """(trace, trace_changes) for the core from a ``trace`` argument."""
    if trace is False or trace is None:
        return False, False
    if trace is True or trace == "sampled":
        return True, False
    if trace == "changes":
        return True, True
    raise ValueError(f"trace: {trace!r} is not one of False, True, 'sampled', 'changes'")


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_many`: ``partial`` holds the runs that completed
    (``None`` if none did)."""

    def __init__(self, partial: Result | None) -> None:
        super().__init__("interrupted")
        self.partial = partial


@functools.lru_cache(maxsize=1)
def core_build() -> str:
    """Fingerprint of the compiled simulator core: the first 16 hex digits of the
    SHA-256 of the extension module. Stored runs are keyed by it, so a rebuilt
    engine never reuses results of an earlier build."""
    import hashlib  # loads OpenSSL: imported when first needed

    digest = hashlib.sha256()
    with open(_core.__file__, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


#: The tables that are always present (empty when a run has none of their rows), in
#: :meth:`Result.to_parquet`'s order, and their contract columns.
_ORDER: dict[str, tuple[str, ...]] = {
    "flows": FLOW_COLUMNS,
    "links": LINK_COLUMNS,
    "sessions": SESSION_COLUMNS,
    "messages": MESSAGE_COLUMNS,
    "traces": TRACE_COLUMNS,
    "events": EVENT_COLUMNS,
}


def _ordered(columns: Mapping[str, Sequence[Any]], order: Sequence[str]) -> list[str]:
    """Column names, contract columns first (in contract order), extra columns after."""
    return [c for c in order if c in columns] + [c for c in columns if c not in order]


def table_order(columns: Mapping[str, Sequence[Any]], table: str) -> list[str]:
    """The columns of the table ``table`` (``"flows"``, ...) built from the core's
    ``columns``, in the order of its frame: contract columns first, extra ones after."""
    return _ordered(columns, _ORDER[table])


def _frame(columns: Mapping[str, Sequence[Any]], order: Sequence[str]) -> pd.DataFrame:
    """A DataFrame from column lists, contract columns first, extra columns after."""
    import pandas as pd

    return pd.DataFrame({k: list(columns[k]) for k in _ordered(columns, order)})


def _records(columns: Mapping[str, Sequence[Any]], order: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of column lists as dicts, columns in the same order as :func:`_frame`."""
    names = _ordered(columns, order)
    return [
        dict(zip(names, row, strict=True)) for row in zip(*(columns[k] for k in names), strict=True)
    ]


def concat_meta(metas: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The metadata of results of several runs together (:meth:`Result.concat`), from
    each result's :attr:`Result.meta` (of one run, or of several with ``runs``)."""
    runs: list[Any] = []
    for m in metas:
        runs.extend(m.get("runs", [m]))
    hashes = sorted({m.get("scenario_hash") for m in runs}, key=str)
    return {
        "scenario_hash": hashes[0] if len(hashes) == 1 else hashes,
        "version": runs[0].get("version"),
        "seeds": [m.get("seed") for m in runs],
        "events": sum(int(m.get("events", 0)) for m in runs),
        "packets": sum(int(m.get("packets", 0)) for m in runs),
        "wall_s": sum(float(m.get("wall_s", 0.0)) for m in runs),
        "sim_time_s": sum(float(m.get("sim_time_s", 0.0)) for m in runs),
        "runs": runs,
    }


def concat_rows(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The rows of ``frames``, one after the other. A seed column is int64 where every
    seed is below 2^63 and uint64 where one is not (seeds are unsigned 64-bit), and
    pandas makes int64 and uint64 meet as float64, which rounds those seeds: so where
    one frame's seeds are uint64, the others' are made uint64 first."""
    import pandas as pd

    if any(f["seed"].dtype == "uint64" for f in frames if "seed" in f.columns):
        frames = [
            f.astype({"seed": "uint64"})
            if "seed" in f.columns and f["seed"].dtype == "int64"
            else f
            for f in frames
        ]
    return pd.concat(frames, ignore_index=True)


#: Marks a table that is built from the core's columns (or the parts) on first access.
_LAZY: Any = object()


def _raw_parts_table(parts: Sequence[Result], name: str) -> Any:
    """The table ``name`` of ``parts`` concatenated, built at once from their raw
    columns where every part still has them and has not built (or been given) that
    table (:func:`vtlab.rawtables.joined_table`: the frame concatenating the parts'
    own would give); else ``_LAZY``, to build it part by part."""
    raws = [p._raw for p in parts]
    if any(raw is None for raw in raws) or any(getattr(p, f"_{name}") is not _LAZY for p in parts):
        return _LAZY
    columns = [raw.get(name) for raw in raws if raw is not None]
    if all(c is None for c in columns):
        return None
    labels = [()] * len(columns)
    frame = joined_table(name, columns, labels, lambda c: table_order(c, name))
    if frame is not None:
        return frame
    if alike_without_rows(columns, labels):  # no rows in any: the first part's frame
        first = columns[0]
        assert first is not None
        return _frame(first, _ORDER[name])
    return _LAZY


class Result:
    """The outcome of one or more simulation runs.

    Attributes:
        flows: one row per flow per run (columns :data:`FLOW_COLUMNS`).
        links: one row per link direction per run (columns :data:`LINK_COLUMNS`).
        sessions: one row per request/response session per run (columns
            :data:`SESSION_COLUMNS`); empty when the scenario has no session.
        messages: one row per exchange of those sessions, in session order then time
            order (columns :data:`MESSAGE_COLUMNS`); empty without sessions.
        traces: TCP state over time (columns :data:`TRACE_COLUMNS`), or ``None`` when
            the run(s) were made with ``trace=False``.
        events: typed events (columns :data:`EVENT_COLUMNS`), or ``None`` when the
            run(s) were made with ``events=False``.
        meta: for a single run, the core's metadata: ``scenario_hash``, ``seed``,
            ``version``, ``events``, ``packets``, ``wall_s``, ``sim_time_s``.  For
            :func:`run_many`: ``scenario_hash``, ``version``, ``seeds`` (list),
            ``events``, ``packets``, ``wall_s`` and ``sim_time_s`` summed over runs,
            and ``runs`` (the list of per-run metadata).

    The tables are pandas DataFrames, built on first access: a result that is
    only streamed with :meth:`flow_records` and :meth:`session_records` (as
    ``vtlab run --json`` does) never imports pandas.
    """

    def __init__(
        self,
        flows: pd.DataFrame,
        links: pd.DataFrame,
        traces: pd.DataFrame | None = None,
        meta: dict[str, Any] | None = None,
        events: pd.DataFrame | None = None,
        *,
        sessions: pd.DataFrame | None = None,
        messages: pd.DataFrame | None = None,
    ) -> None:
        self._flows = flows
        self._links = links
        self._traces = traces
        self._events = events
        self._sessions = sessions  #: None: no session rows (an empty frame on access)
        self._messages = messages
        self.meta: dict[str, Any] = {} if meta is None else meta
        self._raw: Mapping[str, Any] | None = None  #: the core's column dicts
        self._parts: Sequence[Result] | None = None  #: results to concatenate

    # -- the tables, built on first access ----------------------------------------------

    def _table(self, name: str) -> Any:
        value = getattr(self, f"_{name}")
        if value is not _LAZY:
            return value
        if self._raw is not None:
            columns = self._raw.get(name)
            value = None if columns is None else _frame(columns, _ORDER[name])
        else:
            assert self._parts is not None
            value = _raw_parts_table(self._parts, name)
            if value is _LAZY:  # built part by part
                frames = [getattr(r, name) for r in self._parts]
                frames = [f for f in frames if f is not None]
                if name in ("sessions", "messages") and any(len(f) for f in frames):
                    frames = [f for f in frames if len(f)]  # runs without sessions add none
                value = concat_rows(frames) if frames else None
        setattr(self, f"_{name}", value)
        return value

    @property
    def flows(self) -> pd.DataFrame:
        return self._table("flows")

    @flows.setter
    def flows(self, value: pd.DataFrame) -> None:
        self._flows = value

    @property
    def links(self) -> pd.DataFrame:
        return self._table("links")

    @links.setter
    def links(self, value: pd.DataFrame) -> None:
        self._links = value

    def _always(self, name: str) -> pd.DataFrame:
        """A table every result has: an empty frame with the contract columns when
        there are no rows (a result built without it, or a run without sessions)."""
        value = self._table(name)
        if value is None:
            import pandas as pd

            value = pd.DataFrame(columns=list(_ORDER[name]))
            setattr(self, f"_{name}", value)
        return value

    @property
    def sessions(self) -> pd.DataFrame:
        return self._always("sessions")

    @sessions.setter
    def sessions(self, value: pd.DataFrame | None) -> None:
        self._sessions = value

    @property
    def messages(self) -> pd.DataFrame:
        return self._always("messages")

    @messages.setter
    def messages(self, value: pd.DataFrame | None) -> None:
        self._messages = value

    def has_sessions(self) -> bool:
        """Whether any run of the result had a request/response session (without
        importing pandas when the tables have not been built yet)."""
        if self._sessions is not _LAZY:
            return self._sessions is not None and len(self._sessions) > 0
        if self._raw is not None:
            columns = self._raw.get("sessions") or {}
            return any(len(v) for v in columns.values())
        assert self._parts is not None
        return any(r.has_sessions() for r in self._parts)

    @property
    def traces(self) -> pd.DataFrame | None:
        return self._table("traces")

    @traces.setter
    def traces(self, value: pd.DataFrame | None) -> None:
        self._traces = value

    @property
    def events(self) -> pd.DataFrame | None:
        return self._table("events")

    @events.setter
    def events(self, value: pd.DataFrame | None) -> None:
        self._events = value

    def flow_records(self) -> list[dict[str, Any]]:
        """The flow rows as dicts (column → value), in :attr:`flows` order.

        Built straight from the core's columns when :attr:`flows` has not been
        needed yet, so pandas is not imported; values are then plain Python values
        (NaN stays a float).  Otherwise the DataFrame's rows (numpy scalars).
        """
        if self._flows is not _LAZY:
            return list(self._flows.to_dict(orient="records"))
        if self._raw is not None:
            return _records(self._raw["flows"], FLOW_COLUMNS)
        assert self._parts is not None
        return [row for r in self._parts for row in r.flow_records()]

    def session_records(self) -> list[dict[str, Any]]:
        """The session rows as dicts, like :meth:`flow_records` (no pandas needed
        while :attr:`sessions` has not been built)."""
        if self._sessions is not _LAZY:
            frame = self._sessions
            return [] if frame is None else list(frame.to_dict(orient="records"))
        if self._raw is not None:
            columns = self._raw.get("sessions")
            return [] if not columns else _records(columns, SESSION_COLUMNS)
        assert self._parts is not None
        return [row for r in self._parts for row in r.session_records()]

    def column(self, table: str, name: str) -> list[Any]:
        """The values of column ``name`` of ``table`` (``"flows"``, ...) in row order,
        as :meth:`flow_records` has them (no pandas while the table has not been
        built); ``[]`` where the table or the column is missing."""
        value = getattr(self, f"_{table}")
        if value is not _LAZY:
            return [] if value is None or name not in value else value[name].tolist()
        if self._raw is not None:
            return list((self._raw.get(table) or {}).get(name, []))
        assert self._parts is not None
        return [v for r in self._parts for v in r.column(table, name)]

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_core(cls, raw: Mapping[str, Any]) -> Result:
        """Build a ``Result`` from the dict returned by ``vtlab._core.run``."""
        res = cls(
            flows=_LAZY,
            links=_LAZY,
            traces=_LAZY,
            meta=dict(raw["meta"]),
            events=_LAZY,
            sessions=_LAZY,
            messages=_LAZY,
        )
        res._raw = raw
        return res

    @classmethod
    def concat(cls, results: Sequence[Result]) -> Result:
        """Concatenate the rows of several results (e.g. one per seed)."""
        if not results:
            raise ValueError("Result.concat needs at least one result")
        if len(results) == 1:
            return results[0]
        res = cls(
            flows=_LAZY,
            links=_LAZY,
            traces=_LAZY,
            meta=concat_meta([r.meta for r in results]),
            events=_LAZY,
            sessions=_LAZY,
            messages=_LAZY,
        )
        res._parts = list(results)
        return res

    def compacted(self) -> Result:
        """This result with every table built and the parts (or the core's columns)
        dropped: a concatenation of many runs then holds one frame per table instead
        of one per run (a DataFrame costs tens of kilobytes however few its rows).
        Returns ``self``."""
        for name in _ORDER:
            self._table(name)
        self._raw = None
        self._parts = None
        return self

    def reordered(self, position: Mapping[tuple[str, int], int]) -> Result:
        """The rows of every table (and ``meta["runs"]``, ``meta["seeds"]``) sorted by
        the position of their run, ``position[(scenario_hash, seed)]``; rows of one run
        keep their order. Returns ``self``, :meth:`compacted`."""
        import numpy as np

        self.compacted()
        for name in _ORDER:
            frame = getattr(self, f"_{name}")
            if frame is None or len(frame) == 0:
                continue
            keys = zip(frame["scenario_hash"], frame["seed"], strict=True)
            at = np.array([position[(h, int(s))] for h, s in keys])
            setattr(
                self, f"_{name}", frame.iloc[np.argsort(at, kind="stable")].reset_index(drop=True)
            )
        runs = self.meta.get("runs")
        if runs:
            runs.sort(
                key=lambda m: position.get((m.get("scenario_hash"), int(m.get("seed", 0))), 0)
            )
            self.meta["seeds"] = [m.get("seed") for m in runs]
        return self

    def summarize(
        self, by: Sequence[str] | str = ("cc",), metrics: Sequence[str] | str = DEFAULT_METRICS
    ) -> pd.DataFrame:
        """Shorthand for :func:`vtlab.summarize` on :attr:`flows`."""
        from vtlab.stats import summarize

        return summarize(self.flows, by=by, metrics=metrics)

    def to_parquet(
        self,
        path: str | os.PathLike[str],
        *,
        traces: bool = True,
        scenario: ScenarioLike | None = None,
    ) -> dict[str, Path]:
        """Write the result as Parquet files and return the paths written.

        Layout (see :func:`sibling_paths`): the flow rows go to ``path``
        (e.g. ``runs.parquet``), the link rows to ``runs.links.parquet`` beside it,
        when the runs had request/response sessions the session and message rows to
        ``runs.sessions.parquet`` and ``runs.messages.parquet``, and, when there are
        traces and ``traces`` is true, the traces to ``runs.traces.parquet``.  (A
        sessions or messages file left at those names by an earlier result is removed
        when this one has no sessions.)  :attr:`meta` is stored as JSON under the key
        ``vtlab.meta`` in the schema metadata of the flows file; :meth:`from_parquet`
        reads everything back.  With ``scenario`` (the scenario that was run) every
        file carries it under ``vtlab.scenario`` (:func:`scenario_metadata`; read it
        with :func:`vtlab.results.file_scenario`).
        """
        extra: dict[bytes, bytes] = {}
        if scenario is not None:
            described = scenario_metadata(Scenario.coerce(scenario))
            extra[SCENARIO_KEY] = json.dumps(described).encode()
        paths = sibling_paths(path)
        meta = {META_KEY: json.dumps(self.meta, default=json_default).encode()}
        write_parquet(self.flows, paths["flows"], {**meta, **extra})
        written = {"flows": paths["flows"]}
        write_parquet(self.links, paths["links"], extra)
        written["links"] = paths["links"]
        for name in ("sessions", "messages"):
            if self.has_sessions():
                write_parquet(getattr(self, name), paths[name], extra)
                written[name] = paths[name]
            else:  # not one of this result's files: never read back with it
                paths[name].unlink(missing_ok=True)
        if traces and self.traces is not None:
            write_parquet(self.traces, paths["traces"], extra)
            written["traces"] = paths["traces"]
        return written

    def to_csv(self, path: str | os.PathLike[str]) -> dict[str, Path]:
        """Write the flow rows to ``path`` (e.g. ``runs.csv``) and the other tables
        beside it as :meth:`to_parquet` does (``runs.links.csv``, ...; sessions and
        messages when the runs had them, no traces); return the paths written.  CSV
        carries no metadata: keep the scenario with ``vtlab expand``."""
        paths = sibling_paths(path)
        written = {}
        for name in ("flows", "links", "sessions", "messages"):
            if name in ("flows", "links") or self.has_sessions():
                getattr(self, name).to_csv(paths[name], index=False)
                written[name] = paths[name]
            else:
                paths[name].unlink(missing_ok=True)
        return written

    @classmethod
    def from_parquet(cls, path: str | os.PathLike[str]) -> Result:
        """Read back what :meth:`to_parquet` wrote (traces, sessions and messages
        only if their files exist)."""
        import pandas as pd
        import pyarrow.parquet as pq

        paths = sibling_paths(path)
        table = pq.read_table(paths["flows"])
        raw_meta = (table.schema.metadata or {}).get(META_KEY)
        meta = json.loads(raw_meta) if raw_meta else {}
        traces = pd.read_parquet(paths["traces"]) if paths["traces"].exists() else None
        links = pd.read_parquet(paths["links"]) if paths["links"].exists() else None
        extra = {
            name: pd.read_parquet(paths[name]) if paths[name].exists() else None
            for name in ("sessions", "messages")
        }
        return cls(
            flows=table.to_pandas(),
            links=links if links is not None else pd.DataFrame(columns=list(LINK_COLUMNS)),
            traces=traces,
            meta=meta,
            **extra,
        )

    def plot(
        self,
        metrics: Sequence[str] | str = ("cwnd", "ssthresh"),
        path: str | os.PathLike[str] | None = None,
        *,
        flows: Sequence[str] = (),
    ) -> Any:
        """Plot ``metrics`` (``cwnd``, ``ssthresh``, ``rtt``, ``seq``) over time from
        :attr:`traces` (a run with ``trace=...``), else from :attr:`events`, and write
        the figure to ``path`` (.png, .svg or .pdf) if given. Returns a
        :class:`vtlab.plot.Plot`: ``(figure, data)``, the data as a DataFrame with one
        row per plotted point (columns seed, flow, metric, time_s, value)."""
        from vtlab.plot import PlotError, save, time_plot

        frame = self.traces if self.traces is not None else self.events
        if frame is None:
            raise PlotError("metrics", "the result has no traces or events; run with trace=True")
        out = time_plot(frame, [metrics] if isinstance(metrics, str) else metrics, flows)
        if path is not None:
            save(out.figure, path, "path")
        return out

    def _repr_html_(self) -> str:
        """The flow rows (the main columns) as an HTML table, for notebooks."""
        import html

        cols = [c for c in HTML_COLUMNS if c in self.flows.columns]
        runs = len(self.meta.get("runs", [self.meta]))
        head = (
            f"<p><b>vtlab Result</b>: {runs} run(s), {len(self.flows)} flow row(s), "
            f"scenario {html.escape(str(self.meta.get('scenario_hash')))}</p>"
        )
        return head + self.flows[cols].to_html(index=False, float_format=lambda v: f"{v:.4g}")

    def __repr__(self) -> str:
        n_traces = "None" if self.traces is None else f"<{len(self.traces)} rows>"
        return (
            f"Result(flows=<{len(self.flows)} rows>, links=<{len(self.links)} rows>, "
            f"sessions=<{len(self.sessions)} rows>, messages=<{len(self.messages)} rows>, "
            f"traces={n_traces}, meta={{scenario_hash: {self.meta.get('scenario_hash')!r}}})"
        )


def run(
    scenario: ScenarioLike,
    seed: int = 1,
    trace: bool | str = False,
    events: bool = False,
    *,
    pcap: str | os.PathLike[str] | None = None,
    pcap_points: Sequence[str] | None = None,
    pcap_payload: bool = True,
) -> Result:
    """Run one simulation.

    Args:
        scenario: a :class:`Scenario`, a dict spec, a path to a ``.toml`` scenario
            file, or a preset name (``"v2g"``); see :meth:`Scenario.coerce`.
        seed: unsigned 64-bit seed; the same scenario and seed give identical rows.
        trace: also record TCP state over time into :attr:`Result.traces`:
            ``True`` or ``"sampled"`` every ``trace_interval``, ``"changes"`` a row at
            every change of cwnd, ssthresh or congestion state (exact).
        events: also record typed events into :attr:`Result.events`.
        pcap: write packet captures (pcap files Wireshark reads) into this
            directory, created if missing; see docs/captures.md.  The files are
            listed in ``meta["pcap"]``.  Results are the same with or without.
        pcap_points: node and link names to capture (default: every node);
            a node gives ``NODE.pcap``, a link one file per end, ``LINK-NODE.pcap``.
        pcap_payload: write the zero-filled payloads (``False``: headers only, the
            frames keeping their true original length).

    Raises:
        ScenarioError: the spec is invalid (message names the field), or a
            capture point names no node or link, before the run.
        ValueError / TypeError: the seed is negative, too large or not an integer;
            or the capture would open more files than the process may (before the
            run; a soft ``ulimit -n`` is raised up to the hard one when that suffices).
        FileNotFoundError: a scenario file does not exist.
        OSError: a capture file cannot be written (``filename`` names it; the run's
            capture files are removed).
    """
    sc = Scenario.coerce(scenario)
    seed = check_seed(seed)
    capture = _pcap_args(pcap, pcap_points, pcap_payload)
    _check_capture_files(sc.to_json(), capture)
    raw = _core.run(sc.to_json(), seed, *trace_flags(trace), bool(events), **capture)
    return Result.from_core(raw)


def _pcap_args(
    pcap: str | os.PathLike[str] | None, points: Sequence[str] | None, payload: bool
) -> dict[str, Any]:
    if pcap is None:
        if points is not None:
            raise ValueError("pcap_points needs a pcap directory")
        return {}
    if isinstance(points, str):
        raise TypeError("pcap_points must be a list of names, not a string")
    return {
        "pcap": os.fspath(pcap),
        "pcap_points": None if points is None else list(points),
        "pcap_payload": bool(payload),
    }


def _check_capture_files(spec_json: str, capture: dict[str, Any]) -> None:
    """Before a captured run: the process may open every capture file at once
    (:func:`vtlab.openfiles.ensure_open_files`)."""
    if capture:
        from vtlab.openfiles import ensure_open_files

        files = _core.pcap_files(spec_json, capture["pcap_points"])
        ensure_open_files(len(files), "pcap")


def pcap_dir(pcap: str | os.PathLike[str], seed: int, runs: int) -> Path:
    """The capture directory of the run with ``seed`` among ``runs`` runs: ``pcap``
    itself for one run, ``pcap/seed-SEED`` for several."""
    return Path(pcap) if runs == 1 else Path(pcap) / f"seed-{seed}"


def run_many(
    scenario: ScenarioLike,
    seeds: Iterable[int] = (1,),
    progress: bool = True,
    trace: bool | str = False,
    *,
    events: bool = False,
    trace_to: Callable[[dict[str, list[Any]]], None] | None = None,
    on_result: Callable[[Result], None] | None = None,
    pcap: str | os.PathLike[str] | None = None,
    pcap_points: Sequence[str] | None = None,
    pcap_payload: bool = True,
    jobs: int = 1,
) -> Result:
    """Run the scenario once per seed and concatenate the rows.

    With ``pcap`` each run writes packet captures as :func:`run` does, into
    ``pcap`` for one seed and into ``pcap/seed-SEED`` for several.

    All seeds are checked before the first run (:func:`check_seeds`: at least one,
    none repeated, at most :data:`MAX_RUNS`).  A rich progress bar (on stderr) is
    shown when ``progress`` is true, there is more than one run and stderr is a
    terminal (or a Jupyter notebook).  ``on_result`` is
    called with each run's :class:`Result` as soon as it finishes (e.g. to stream
    output), in the seeds' order.  See :attr:`Result.meta` for the combined
    metadata; ``trace`` and ``events`` as for :func:`run`.  With ``trace_to`` (e.g.
    :meth:`vtlab.tracefile.TraceWriter.write`) the trace is handed over in batches
    as it is produced, so memory stays bounded however long it is, and
    :attr:`Result.traces` is ``None``.  ``jobs`` runs go at once, in threads (the
    engine releases the GIL; a streamed trace needs one job).  Ctrl-C stops the
    running simulations within milliseconds and raises :class:`Interrupted` carrying
    the completed runs (those before the first unfinished seed).
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if jobs > 1 and trace_to is not None:
        raise ValueError("jobs: a trace streamed as it is produced (trace_to) needs one job")
    sc = Scenario.coerce(scenario)
    seed_list = check_seeds(seeds)
    spec_json = sc.to_json()
    flags = (*trace_flags(trace), bool(events))
    # Checked before the first run.
    _check_capture_files(spec_json, _pcap_args(pcap, pcap_points, pcap_payload))

    def one(seed: int) -> Result:
        where = None if pcap is None else pcap_dir(pcap, seed, len(seed_list))
        capture = _pcap_args(where, pcap_points, pcap_payload)
        return Result.from_core(_core.run(spec_json, seed, *flags, trace_to, **capture))

    results: list[Result] = []
    try:
        with (
            run_progress(len(seed_list), progress, "simulating") as advance,
            gcpause.Batches() as batches,
        ):

            def done(res: Result) -> None:
                if on_result is not None:
                    on_result(res)
                results.append(res)
                advance()
                batches.next()

            if jobs == 1:
                for s in seed_list:
                    done(one(s))
            else:
                _in_order_in_threads(one, seed_list, jobs, done)
    except KeyboardInterrupt:
        raise Interrupted(Result.concat(results) if results else None) from None
    return Result.concat(results)


def _in_order_in_threads(
    fn: Callable[[int], Result], seeds: Sequence[int], jobs: int, done: Callable[[Result], None]
) -> None:
    """``done(fn(seed))`` for every seed, in the seeds' order, ``fn`` running in
    ``jobs`` threads (at most ``2 × jobs`` runs ahead of the first unfinished one)."""
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    with ThreadPoolExecutor(jobs) as pool:
        queue = iter(seeds)
        pending: deque[Future[Result]] = deque(
            pool.submit(fn, s) for s in itertools.islice(queue, 2 * jobs)
        )
        try:
            while pending:
                done(pending.popleft().result())
                pending.extend(pool.submit(fn, s) for s in itertools.islice(queue, 1))
        except BaseException:
            for f in pending:
                f.cancel()
            _core.request_stop()  # the runs in the other threads stop within milliseconds
            raise
        finally:
            pool.shutdown(wait=True)
            _core.request_stop(clear=True)
