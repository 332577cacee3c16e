"""Reproduced figures show the paper's own numbers where the paper gives them."""

from __future__ import annotations

import pandas as pd

from vtlab.experiments import park2019
from vtlab.experiments.martignon.figures import _fig_short
from vtlab.experiments.park2019.figures import _fig_goodput
from vtlab.experiments.park2019.plan import VARIANTS
from vtlab.experiments.pipeline import PaperValues


def _points(fig) -> set[tuple[float, float]]:
    """(x, y) of the figure's single-point marker lines (the paper's quotes)."""
    return {
        (round(float(line.get_xdata()[0]), 6), float(line.get_ydata()[0]))
        for line in fig.axes[0].lines
        if len(line.get_xdata()) == 1 and line.get_marker() == "D"
    }


def test_park2019_figs_4_and_6_show_the_quoted_throughputs():
    summary = pd.DataFrame({"variant": ["NewReno", "Illinois"], "loss": [0.01, 0.01],
                            "mean": [1.0, 2.0], "ci95": [0.1, 0.1]})  # fmt: skip
    paper = park2019.paper()
    fig4 = _fig_goodput(summary, VARIANTS, "Fig. 4", "Mbit/s", (paper, "fig4"))
    # §3.1 of the paper (Fig. 4): NewReno 7.526 and Illinois 9.323 Mbit/s at 0.25 %
    # loss, 0.485 and 2.266 Mbit/s at 5 %; x in percent.
    assert _points(fig4) == {(0.25, 7.526), (0.25, 9.323), (5.0, 0.485), (5.0, 2.266)}
    labels = fig4.axes[0].get_legend_handles_labels()[1]
    assert labels.count("paper (quoted in the text)") == 1
    fig6 = _fig_goodput(summary, VARIANTS, "Fig. 6", "Mbit/s", (paper, "fig6"))
    # §3.2 (Fig. 6, per vehicle of 21): NewReno 2.702 and Illinois 2.92 at 0.25 %,
    # 0.422 and 1.454 at 5 %.
    assert _points(fig6) == {(0.25, 2.702), (0.25, 2.92), (5.0, 0.422), (5.0, 1.454)}
    assert not _points(_fig_goodput(summary, VARIANTS, "Fig. 4", "Mbit/s"))


def test_martignon_short_transfers_show_the_papers_means():
    flows = pd.DataFrame({"variant": ["NewReno", "NewReno-LP"] * 2, "iw": [2] * 4,
                          "completion_s": [0.5, 0.6, 0.7, 0.8]})  # fmt: skip
    fig = _fig_short({"short_flows": flows}, PaperValues.of_package("vtlab.experiments.martignon"))
    ax = fig.axes[0]
    # §5 of the paper: 0.79 s for NewReno-LP and 0.81 s for NewReno, as vertical lines.
    vertical = {
        line.get_label(): float(line.get_xdata()[0])
        for line in ax.lines
        if line.get_linestyle() == ":"
    }
    assert vertical == {"paper: NewReno mean 0.81 s": 0.81, "paper: NewReno-LP mean 0.79 s": 0.79}
