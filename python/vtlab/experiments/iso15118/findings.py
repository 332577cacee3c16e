"""ISO 15118-2 over a lossy charging cable: the study's own findings, each a
statement checked by a small predicate on the summaries (no paper: the statements
are what the study set out to check, and a statement the runs do not bear out is
reported as not holding).

Verdicts: ``True`` (holds), ``False`` (does not hold), ``"partly"``, or ``None``
when the campaign lacks the data (e.g. a stack left out of the plan)."""

from __future__ import annotations

import math

import pandas as pd

from vtlab.experiments.iso15118.analysis import LOOP
from vtlab.experiments.iso15118.plan import SURVIVAL_TARGET, loss_label, setup_numbers
from vtlab.experiments.pipeline import Claim, Context

#: The stacks the statements name (keys of plan.STACKS).
NS3, LINUX, RACK_TLP = "ns3", "linux", "linux+rack-tlp"
#: "Most" cells: at least this share (a statement that holds in most cells, not all,
#: is "partly" true).
MOST = 0.5


def _share(k: int, n: int) -> str:
    return f"{k} of {n}"


def _lossy(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["loss"] > 0]


# -- one vehicle ---------------------------------------------------------------------------


def _loss_free(ctx: Context) -> tuple[str, bool]:
    t = ctx.s["cells"]
    free = t[t["loss"] == 0]
    if free.empty:
        raise KeyError("no loss-free cell")
    k, n = int(free["survived"].sum()), int(free["n"].sum())
    return f"{k}/{n} sessions completed in {len(free)} loss-free cells", k == n


def _failures_in_loop(ctx: Context) -> tuple[str, bool | str]:
    t = _lossy(ctx.s["cells"])
    failed = int((t["n"] - t["survived"]).sum())
    if failed == 0:
        raise ValueError("no session failed")
    deadline = int(t["deadline_aborts"].sum())
    loop = int(t["failed_in_loop"].sum())
    evidence = (
        f"{failed} sessions failed at loss > 0: {deadline} on a missed deadline, "
        f"{int(t['other_aborts'].sum())} otherwise; {loop} in the {LOOP} loop"
    )
    if deadline == failed and loop == failed:
        return evidence, True
    return evidence, "partly" if min(deadline, loop) >= MOST * failed else False


def _paired(ctx: Context, better: str, worse: str) -> tuple[int, int, int]:
    """Lossy cells (same loss, burst, cc) in which ``better`` survives at least as
    often as ``worse``, strictly more often, and the number of pairs."""
    t = _lossy(ctx.s["cells"])
    keys = ["loss", "burst", "algorithm"]
    a = t[t["stack"] == better].set_index(keys)["survival"]
    b = t[t["stack"] == worse].set_index(keys)["survival"]
    both = a.index.intersection(b.index)
    if len(both) == 0:
        raise KeyError(f"no cells of {better} and {worse}")
    a, b = a.loc[both], b.loc[both]
    return int((a >= b).sum()), int((a > b).sum()), len(both)


def _verdict(k: int, n: int) -> bool | str:
    return True if k == n else ("partly" if k >= MOST * n else False)


def _linux_over_ns3(ctx: Context) -> tuple[str, bool | str]:
    k, strict, n = _paired(ctx, LINUX, NS3)
    return (
        f"{LINUX} ≥ {NS3} in {_share(k, n)} lossy cells (strictly higher in {strict})",
        _verdict(k, n),
    )


def _tolerable(ctx: Context, stack: str) -> float:
    h = ctx.s["headline"]
    row = h[h["stack"] == stack]
    if row.empty:
        raise KeyError(stack)
    return float(row["tolerable_loss"].iloc[0])


def _fmt_tol(x: float) -> str:
    return "none" if not math.isfinite(x) else loss_label(x)


def _rack_tlp_raises(ctx: Context) -> tuple[str, bool | str]:
    with_, without = _tolerable(ctx, RACK_TLP), _tolerable(ctx, LINUX)
    k, strict, n = _paired(ctx, RACK_TLP, LINUX)
    evidence = (
        f"highest loss with survival ≥ {SURVIVAL_TARGET:g}: {_fmt_tol(with_)} with RACK-TLP, "
        f"{_fmt_tol(without)} without; survival at least as high in {_share(k, n)} lossy "
        f"cells, strictly higher in {strict}"
    )
    lo_w = with_ if math.isfinite(with_) else -1.0
    lo_wo = without if math.isfinite(without) else -1.0
    if lo_w > lo_wo:
        return evidence, True
    return evidence, "partly" if strict > 0 and k == n else False


def _cc_irrelevant(ctx: Context) -> tuple[str, bool | str]:
    t = ctx.s["cells"]
    groups = t.groupby(["loss", "burst", "stack"], sort=False)
    spread = groups["survived"].agg(lambda s: int(s.max() - s.min()))
    overlap = groups.apply(
        lambda g: bool(g["wilson_lo"].max() <= g["wilson_hi"].min()), include_groups=False
    )
    n_ccs = int(t["algorithm"].nunique())
    if n_ccs < 2:
        raise ValueError("one congestion control only")
    same = int((spread == 0).sum())
    evidence = (
        f"{n_ccs} congestion controls: the same number of survivors in {_share(same, len(spread))} "
        f"(loss, burst, stack) groups; largest difference {int(spread.max())} sessions; "
        f"Wilson intervals overlap in {int(overlap.sum())}"
    )
    if same == len(spread):
        return evidence, True
    return evidence, "partly" if bool(overlap.all()) else False


def _bursts_kinder(ctx: Context) -> tuple[str, bool | str]:
    t = _lossy(ctx.s["cells"])
    keys = ["loss", "stack", "algorithm"]
    long_, single = t[t["burst"] == "4–8"], t[t["burst"] == "1"]
    a = long_.set_index(keys)["survival"]
    b = single.set_index(keys)["survival"]
    both = a.index.intersection(b.index)
    if len(both) == 0:
        raise KeyError("no cells with bursts 1 and 4–8")
    a, b = a.loc[both], b.loc[both]
    above, below = int((a > b).sum()), int((a < b).sum())
    evidence = (
        f"in {len(both)} lossy cells at the same mean rate, bursts of 4–8 keep more sessions "
        f"alive than single losses in {above}, fewer in {below}, as many in "
        f"{len(both) - above - below}"
    )
    if above == 0:
        return evidence, False
    return evidence, True if below == 0 else "partly"


# -- the station -----------------------------------------------------------------------------


def _station_bulk(ctx: Context) -> tuple[str, bool | str]:
    t = ctx.s["station"]
    free = t[t["loss"] == 0]
    if free.empty:
        raise KeyError("no loss-free station cell")
    below = int((free["wilson_hi"] < SURVIVAL_TARGET).sum())
    parts = [f"{r['stack']}/{r['algorithm']} {r['survived']}/{r['n']}" for _, r in free.iterrows()]
    evidence = f"sessions completed at loss 0: {', '.join(parts)}"
    return evidence, _verdict(below, len(free))


def claims(ctx: Context) -> list[Claim]:
    one, station = "one vehicle", "station"
    n = setup_numbers(ctx.plan)
    floor = n["rto_floor_ms"]
    return [
        Claim(one, "On a loss-free cable every session completes.", _loss_free),
        Claim(
            one,
            f"Sessions that fail end on a missed deadline in the {LOOP} loop (not a "
            "dropped connection, not before energy flows).",
            _failures_in_loop,
        ),
        Claim(
            one,
            f"Linux's stack keeps sessions alive at least as often as ns-3's (its RTO "
            f"floor is {floor['linux']:g} ms against ns-3's {floor['ns3']:g} ms, the {LOOP} "
            f"deadline {n['deadline_ms']:g} ms).",
            _linux_over_ns3,
        ),
        Claim(
            one,
            "RACK-TLP raises the highest loss rate at which sessions survive with "
            f"probability ≥ {SURVIVAL_TARGET:g}.",
            _rack_tlp_raises,
        ),
        Claim(
            one,
            "The congestion control makes no difference (one segment per message: the "
            "window never limits).",
            _cc_irrelevant,
        ),
        Claim(
            one,
            "At the same mean loss rate, long bursts (4–8 packets) end fewer sessions "
            "than single losses (fewer loss events).",
            _bursts_kinder,
        ),
        Claim(
            station,
            "Bulk transfers sharing the power-line segments end sessions even on a "
            f"loss-free cable (survival below {SURVIVAL_TARGET:g}).",
            _station_bulk,
        ),
    ]
