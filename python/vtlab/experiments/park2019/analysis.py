"""Park 2019: analysis — summaries over runs, the tables, the paper's numbers beside
vtlab's, and the ns-3.44 reference values read from the repository's validation data."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vtlab.api import Result
from vtlab.experiments import common
from vtlab.experiments.common import Comparison
from vtlab.experiments.park2019.plan import (
    FIG8_VARIANTS,
    FIG11_VARIANTS,
    REFERENCE_MB,
    VARIANTS,
    Plan,
)
from vtlab.experiments.pipeline import Context, PaperValues, verdict_word
from vtlab.packagedata import validation_dir

# -- summaries -------------------------------------------------------------------------


def summarize_all(data: Mapping[str, Result], plan: Plan) -> dict[str, Any]:
    """Mean ± 95 % CI over runs of everything the figures and the report show."""
    mbps = 1e-6
    s: dict[str, Any] = {}
    s["table2"] = common.summarize_runs(
        data["table2"].flows, ["variant", "size_mb"], "goodput_bps", scale=mbps
    )
    for name in ("fig4", "fig6", "fig11a", "fig11b", "westwood"):
        s[name] = common.summarize_runs(
            data[name].flows, ["variant", "loss"], "goodput_bps", scale=mbps
        )
    events = []
    for grid, connections in (("fig4", 1), ("fig6", plan.vehicles)):
        flows = data[grid].flows
        flows = flows[flows["variant"].isin(list(FIG8_VARIANTS))]
        for metric, label in (
            ("slow_starts_after_loss", "Slow Start"),
            ("fast_recoveries", "Fast Recovery"),
        ):
            ev = common.summarize_runs(flows, ["variant", "loss"], metric)
            ev.insert(0, "event", label)
            ev.insert(0, "connections", connections)
            events.append(ev)
    s["fig8"] = pd.concat(events, ignore_index=True)
    s["traces"] = {name: data[name].traces for name in ("fig7a", "fig7b", "fig12") if name in data}
    return s


def _lookup(summary: pd.DataFrame, **labels: Any) -> pd.Series | None:
    """The first row with every label (a float by ``np.isclose``), or None, only that
    row taken (:func:`common.label_mask`; the claims ask about 650 times)."""
    hits = np.flatnonzero(common.label_mask(summary, labels, np.isclose))
    return summary.iloc[int(hits[0])] if len(hits) else None


def _mean(summary: pd.DataFrame, **labels: Any) -> float:
    row = _lookup(summary, **labels)
    return math.nan if row is None else float(row["mean"])


def pct(x: float) -> str:
    return f"{x * 100:g} %"


def verdict_words(holds: bool | str | None) -> str:
    return verdict_word(holds, yes="yes", no="**no**")


def count_verdict(count: int, n: int) -> bool | str:
    """Holds at (nearly) every level: yes; at least at half of them: partly."""
    if count >= n - 1:
        return True
    return "partly" if 2 * count >= n else False


def table2_paper(paper: PaperValues) -> dict[int, dict[str, float]]:
    """Table 2 of the paper: size (MB) → variant → Mbit/s, in the file's order."""
    t: dict[int, dict[str, float]] = {}
    for e in paper.group("table2/"):
        t.setdefault(int(e.extra["size_mb"]), {})[str(e.extra["variant"])] = e.value
    return t


def quoted(paper: PaperValues) -> list[Any]:
    """The numbers quoted in the text (goodputs and ratios), in the paper's order."""
    return [e for k, e in paper.items() if k.startswith(("quote/", "ratio/"))]


# -- tables ----------------------------------------------------------------------------


def table2_frame(summary: pd.DataFrame, paper: PaperValues) -> pd.DataFrame:
    """Table 2 in long form: size, variant, vtlab mean/sd/CI, the paper's value and
    the relative difference."""
    published = table2_paper(paper)
    rows = []
    for (variant, size), grp in summary.groupby(["variant", "size_mb"], sort=False):
        r = grp.iloc[0]
        value = published.get(int(size), {}).get(variant, math.nan)
        rows.append(
            {
                "size_mb": int(size),
                "variant": variant,
                "cc": VARIANTS[variant],
                "runs": int(r["n"]),
                "goodput_mbps": float(r["mean"]),
                "sd_mbps": float(r["sd"]),
                "ci95_mbps": float(r["ci95"]),
                "paper_mbps": value,
                "rel_diff": common.rel_diff(float(r["mean"]), value),
            }
        )
    frame = pd.DataFrame(rows)
    order = {v: i for i, v in enumerate(VARIANTS)}
    frame = frame.sort_values(
        ["size_mb", "variant"], key=lambda c: c.map(order) if c.name == "variant" else c
    )
    return frame.reset_index(drop=True)


def table2_table(ctx: Context) -> pd.DataFrame:
    return table2_frame(ctx.s["table2"], ctx.paper)


def table2_markdown(ctx: Context, frame: pd.DataFrame) -> str:
    runs = int(frame["runs"].max()) if len(frame) else 0
    loss = ctx.paper.value("table2_loss")
    head = ["File size", *VARIANTS]
    rows = []
    for size, grp in frame.groupby("size_mb", sort=True):
        by = grp.set_index("variant")
        rows.append(
            [
                f"{size} MB",
                *(
                    common.fmt_ci(by.loc[v, "goodput_mbps"], by.loc[v, "ci95_mbps"])
                    if v in by.index
                    else "–"
                    for v in VARIANTS
                ),
            ]
        )
    title = (
        f"Average throughput (Mbit/s) at {loss * 100:g} % mean packet loss, single connection, "
        f"mean ± 95 % CI over {runs} runs (vtlab {common.version()}).\n\n"
    )
    return title + common.md_table(head, rows)


def _goodput_columns(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.rename(columns={"mean": "goodput_mbps", "ci95": "ci95_mbps", "sd": "sd_mbps"})


def goodput_table(name: str) -> Any:
    """The data behind Fig. 4 or Fig. 6."""

    def build(ctx: Context) -> pd.DataFrame:
        frame = _goodput_columns(ctx.s[name])
        frame.insert(1, "cc", frame["variant"].map(VARIANTS))
        return frame

    return build


def fig11_table(ctx: Context) -> pd.DataFrame:
    frames = []
    for name, connections in (("fig11a", 1), ("fig11b", ctx.plan.vehicles)):
        frame = _goodput_columns(ctx.s[name])
        frame.insert(0, "connections", connections)
        frame.insert(2, "cc", frame["variant"].map(FIG11_VARIANTS))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def fig8_table(ctx: Context) -> pd.DataFrame:
    return ctx.s["fig8"]


# -- the paper beside vtlab ------------------------------------------------------------


def _comparison(entry: Any, row: pd.Series | None, reference: float, **kw: Any) -> Comparison:
    return Comparison(
        section=entry.section,
        quantity=entry.label,
        paper=entry.value,
        ours=math.nan if row is None else float(row["mean"]),
        ci=math.nan if row is None else float(row["ci95"]),
        n=0 if row is None else int(row["n"]),
        sd=math.nan if row is None else float(row["sd"]),
        reference=reference,
        **kw,
    )


def _quote_comparison(
    entry: Any, s: Mapping[str, Any], ref: Mapping[tuple[str, float, str], float] | None, full: bool
) -> Comparison:
    """A number quoted in the text: a goodput, or a ratio of two (``ratio_to``)."""
    grid, variant, loss = entry.extra["grid"], entry.extra["variant"], float(entry.extra["loss"])
    row = _lookup(s[grid], variant=variant, loss=loss)
    with_ref = ref is not None and grid == "fig4" and full
    reference = ref.get((variant, loss, "ts-on"), math.nan) if with_ref else math.nan
    c = _comparison(entry, row, reference, unit=entry.unit)
    base_variant = entry.extra.get("ratio_to")
    if base_variant is None:
        return c
    denom = _mean(s[grid], variant=base_variant, loss=loss)
    ours = c.ours / denom if denom and math.isfinite(denom) else math.nan
    if with_ref:
        reference = reference / ref.get((base_variant, loss, "ts-on"), math.nan)
    return Comparison(c.section, c.quantity, c.paper, ours, n=c.n, unit=c.unit, reference=reference)


def compare(ctx: Context) -> list[Comparison]:
    """Every published number beside vtlab's (Table 2 in full, then the text)."""
    ref = ns3_reference()
    rows: list[Comparison] = []
    for e in ctx.paper.group("table2/"):
        size, variant = int(e.extra["size_mb"]), str(e.extra["variant"])
        row = _lookup(ctx.s["table2"], variant=variant, size_mb=size)
        reference = math.nan
        if ref is not None and size == REFERENCE_MB:
            reference = ref.get((variant, 0.05, "ts-on"), math.nan)
        rows.append(_comparison(e, row, reference))
    full = ctx.plan.bytes_ == f"{REFERENCE_MB}MB"
    for e in quoted(ctx.paper):
        rows.append(_quote_comparison(e, ctx.s, ref, full))
    return rows


# -- ns-3.44 on the same setups (the repository's validation data) ---------------------


#: The columns that make an ``agreement.csv`` one of ``vtlab validate v2g``'s (the
#: single-vehicle grid and the station grids). The other families' agreement files
#: (wifi, lte, iso15118, kernel, ...) lie in the same folder with other columns.
V2G_AGREEMENT_COLUMNS = frozenset({"cc", "loss", "topology", "verdict"})


def _agreement_rows(base: Path) -> pd.DataFrame:
    """Every V2G ``agreement.csv`` that ``vtlab validate`` wrote under ``base`` (the
    committed single-vehicle grid and the station grid), concatenated; ``topology``
    is read as text ("1", "21"), so that files with and without it cannot turn it
    into floats."""
    frames = []
    for path in sorted([base / "agreement.csv", *base.glob("*/agreement.csv")]):
        if not path.exists():
            continue
        try:
            frame = pd.read_csv(path, dtype={"topology": str})
        except (OSError, ValueError):
            continue
        if set(frame.columns) >= V2G_AGREEMENT_COLUMNS:
            frames.append(frame.assign(source=str(path.relative_to(base.parent))))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _reference_from_agreement(base: Path) -> dict[tuple[str, float, str], float]:
    table = _agreement_rows(base)
    ref: dict[tuple[str, float, str], float] = {}
    if not {"cc", "loss", "ns3_goodput_mbps", "topology"} <= set(table.columns):
        return ref
    by_cc = {cc: label for label, cc in VARIANTS.items()}
    for row in table[table["topology"].astype(str) == "1"].itertuples():
        if row.cc in by_cc and math.isfinite(row.ns3_goodput_mbps):
            ref[(by_cc[row.cc], round(float(row.loss), 6), "ts-on")] = float(row.ns3_goodput_mbps)
    return ref


_NS3_NAMES = {
    "TcpNewReno": "NewReno",
    "TcpIllinois": "Illinois",
    "TcpHybla": "Hybla",
    "TcpScalable": "Scalable",
}


def _reference_from_results(base: Path) -> dict[tuple[str, float, str], float]:
    samples: dict[tuple[str, float, str], list[float]] = {}
    for stem in ("newreno_ts_on", "others_ts_on", "newreno_ts_off", "others_ts_off"):
        path = base / "ns3" / "results" / f"{stem}.jsonl"
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if (
                r.get("type") != "flow"
                or r.get("bytes") != 100_000_000
                or r.get("loss_on") != "data"
                or r.get("cc") not in _NS3_NAMES
                or not r.get("complete", True)
            ):
                continue
            tag = r.get("tag") or ("ts-on" if stem.endswith("_on") else "ts-off")
            key = (_NS3_NAMES[r["cc"]], round(float(r["mean_loss"]), 6), str(tag))
            samples.setdefault(key, []).append(float(r["goodput_bps"]) / 1e6)
    return {key: float(np.mean(values)) for key, values in samples.items()}


def ns3_reference(
    validation: Path | None = None,
) -> dict[tuple[str, float, str], float] | None:
    """Mean goodput (Mbit/s) of ns-3.44 on the paper's single-connection setup (100 MB,
    runs 1–6), keyed by (paper variant, mean loss, ``ts-on``/``ts-off``).

    ``ts-on`` (ns-3's defaults) comes from the committed validation report
    ``validation/agreement.csv`` (every variant at 0, 0.25, 1 and 5 %), falling back to
    ``validation/ns3/results/*_ts_on.jsonl``; ``ts-off`` (timestamps off, hence no
    fragmentation) from ``validation/ns3/results/*_ts_off.jsonl`` (NewReno, Illinois,
    Hybla, Scalable at 5 %). ``validation``: the validation folder (default
    :func:`vtlab.packagedata.validation_dir`). ``None`` when none of these files is
    there.
    """
    base = validation or validation_dir()
    ref = _reference_from_agreement(base)
    for key, value in _reference_from_results(base).items():
        ref.setdefault(key, value)
    return ref or None


def station_agreement(vehicles: int, validation: Path | None = None) -> pd.DataFrame:
    """The validation cells of the charging station with ``vehicles`` vehicles (rows
    of ``validation/**/agreement.csv`` with that topology; ``validation`` defaults to
    :func:`vtlab.packagedata.validation_dir`): algorithm, loss, goodput ratio vtlab /
    ns-3.44, verdict and the file they come from. Empty if none."""
    table = _agreement_rows(validation or validation_dir())
    cols = ["cc", "loss", "ratio", "verdict", "ns3_n", "source"]
    if not {"topology", *cols} <= set(table.columns):
        return pd.DataFrame(columns=cols)
    rows = table[table["topology"].astype(str) == str(vehicles)]
    return rows[cols].reset_index(drop=True)
