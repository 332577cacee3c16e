"""Park 2019: the §5 claims about Fig. 11a (1 connection) and 11b (21 vehicles),
each a predicate on the Fig. 11 summary. The loss rates the paper names (NewReno SC
above Illinois from 3.75 %, below the other NewRenos up to 0.25 %) and Illinois AA's
gain (+41 %) come from ``paper.toml``."""

from __future__ import annotations

from collections.abc import Callable

from vtlab.experiments.park2019.analysis import _mean, count_verdict, pct
from vtlab.experiments.park2019.plan import FIG11_VARIANTS
from vtlab.experiments.pipeline import Check, Claim, Context

AGGRESSIVE = ("Illinois", "Illinois AA", "NewReno SC")
#: "No worse than NewReno" at 0 % loss, within this tolerance.
ZERO_LOSS_TOLERANCE = 0.03


class Fig11:
    """The Fig. 11 means of one panel, by (variant, loss)."""

    def __init__(self, ctx: Context, name: str) -> None:
        plan = ctx.plan
        self.lo, self.hi = min(plan.losses), max(plan.losses)
        self.levels = list(plan.fig11_losses)
        self.lossy = [x for x in self.levels if x > 0]
        self.m = {
            (v, x): _mean(ctx.s[name], variant=v, loss=x)
            for v in FIG11_VARIANTS
            for x in self.levels
        }

    def __call__(self, variant: str, loss: float) -> float:
        return self.m[(variant, loss)]

    def trio(self, x: float) -> str:
        return (
            f"SC {self('NewReno SC', x):.3f}, NewReno {self('NewReno', x):.3f}, "
            f"ND {self('NewReno ND', x):.3f}"
        )


def _on(name: str, check: Callable[[Context, Fig11], tuple[str, bool | str | None]]) -> Check:
    return lambda ctx: check(ctx, Fig11(ctx, name))


def _newreno_worst(ctx: Context, f: Fig11) -> tuple[str, bool | str]:
    n = sum(1 for x in f.lossy if min(FIG11_VARIANTS, key=lambda v, x=x: f(v, x)) == "NewReno")
    return f"NewReno lowest at {n} of {len(f.lossy)} lossy levels", count_verdict(n, len(f.lossy))


def _nd_better(ctx: Context, f: Fig11) -> tuple[str, bool | str]:
    n = sum(1 for x in f.lossy if f("NewReno ND", x) > f("NewReno", x))
    return (
        f"NewReno ND above NewReno at {n} of {len(f.lossy)} lossy levels "
        f"({pct(f.hi)}: {f('NewReno ND', f.hi):.3f} vs {f('NewReno', f.hi):.3f})",
        count_verdict(n, len(f.lossy)),
    )


def _aa_above(ctx: Context, f: Fig11) -> tuple[str, bool]:
    gain = f("Illinois AA", f.hi) / f("Illinois", f.hi) - 1
    return f"Illinois AA vs Illinois at {pct(f.hi)}: {gain * 100:+.0f} %", bool(gain > 0)


def _sc_above_newrenos(ctx: Context, f: Fig11) -> tuple[str, bool | str]:
    above = [x for x in f.lossy if x > f.lo]
    n = sum(1 for x in above if f("NewReno SC", x) > max(f("NewReno", x), f("NewReno ND", x)))
    return (
        f"above both at {n} of {len(above)} levels; at {pct(f.hi)}: {f.trio(f.hi)}",
        count_verdict(n, len(above)),
    )


def _sc_above_illinois(ctx: Context, f: Fig11) -> tuple[str, bool | None]:
    start = ctx.paper.value("sc_above_illinois_from")
    high = [x for x in f.lossy if x >= start]
    n = sum(1 for x in high if f("NewReno SC", x) > f("Illinois", x))
    return (
        f"above at {n} of {len(high)} levels ≥ {pct(start)}; at {pct(f.hi)}: SC "
        f"{f('NewReno SC', f.hi):.3f} vs Illinois {f('Illinois', f.hi):.3f}",
        n == len(high) if high else None,
    )


def _sc_below_at_low(ctx: Context, f: Fig11) -> tuple[str, bool]:
    below = f("NewReno SC", f.lo) < max(f("NewReno", f.lo), f("NewReno ND", f.lo))
    return f"at {pct(f.lo)}: {f.trio(f.lo)}", bool(below)


def _sc_best_at_low(ctx: Context, f: Fig11) -> tuple[str, bool]:
    good = f("NewReno SC", f.lo) > max(f("NewReno", f.lo), f("NewReno ND", f.lo))
    return f"at {pct(f.lo)}: {f.trio(f.lo)}", bool(good)


def _aggressive_beat_newreno(ctx: Context, f: Fig11) -> tuple[str, bool | str]:
    n = sum(1 for x in f.lossy if all(f(v, x) > f("NewReno", x) for v in AGGRESSIVE))
    verdict: bool | str = (
        True if n == len(f.lossy) else ("partly" if 2 * n >= len(f.lossy) else False)
    )
    return f"all three above NewReno at {n} of {len(f.lossy)} lossy levels", verdict


def _no_worse_without_loss(ctx: Context, f: Fig11) -> tuple[str, bool]:
    zero = {v: f(v, 0.0) for v in FIG11_VARIANTS}
    ok = all(zero[v] >= (1 - ZERO_LOSS_TOLERANCE) * zero["NewReno"] for v in AGGRESSIVE)
    return "at 0 %: " + ", ".join(f"{v} {zero[v]:.3f}" for v in FIG11_VARIANTS), bool(ok)


def fig11_claims(ctx: Context, name: str) -> list[Claim]:
    fig = "Fig. 11" + name[-1]
    single = name == "fig11a"
    who = "1 connection" if single else f"{ctx.plan.vehicles} vehicles"
    gain = ctx.paper["ratio/fig11a/Illinois AA/5/Illinois"]
    low = pct(ctx.paper.value("sc_below_up_to"))
    out = [
        Claim(fig, f"NewReno shows the worst throughput ({who})", _on(name, _newreno_worst)),
        Claim(fig, f"Disabling delayed ACKs improves NewReno ({who})", _on(name, _nd_better)),
        Claim(
            fig,
            f"Illinois AA is above Illinois at high loss ({who}; paper: "
            f"{(gain.value - 1) * 100:+.0f} % at {pct(float(gain.extra['loss']))}, 1 connection)",
            _on(name, _aa_above),
        ),
        Claim(
            fig,
            f"NewReno SC is significantly better than NewReno and NewReno ND above {low} ({who})",
            _on(name, _sc_above_newrenos),
        ),
    ]
    if single:
        start = pct(ctx.paper.value("sc_above_illinois_from"))
        return [
            *out,
            Claim(
                fig,
                f"NewReno SC exceeds Illinois at {start} loss or higher (1 connection)",
                _on(name, _sc_above_illinois),
            ),
            Claim(
                fig,
                f"At {low} NewReno SC is slightly below the other NewRenos (1 connection)",
                _on(name, _sc_below_at_low),
            ),
        ]
    return [
        *out,
        Claim(
            fig,
            f"With a good link ({low}) NewReno SC outperforms the other two NewRenos ({who})",
            _on(name, _sc_best_at_low),
        ),
        Claim(
            fig,
            f"Illinois, Illinois AA and NewReno SC beat NewReno under all loss rates ({who})",
            _on(name, _aggressive_beat_newreno),
        ),
        Claim(
            fig,
            f"Without PLC loss the aggressive variants are no worse than NewReno ({who}; "
            f"tolerance {ZERO_LOSS_TOLERANCE * 100:g} %)",
            _on(name, _no_worse_without_loss),
        ),
    ]
