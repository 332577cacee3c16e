"""``vtlab plot``, ``Result.plot`` and the notebook display of results: figures from
small runs, the plotted data read back, and bad input as one error line."""

from __future__ import annotations

import math
import subprocess
import sys

import pandas as pd
import pytest

import vtlab
from vtlab.plot import PlotError, axis_plot, time_plot

LOSSY = {"preset": "v2g", "bytes": "1MB", "loss": {"mean_loss": "5%"}}
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-", ".svg": b"<?xml"}


def _vtlab(*args, cwd):
    return subprocess.run([sys.executable, "-m", "vtlab", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)  # fmt: skip


def test_cli_plots_a_trace_and_an_events_file(tmp_path):
    files = ["--trace", "t.csv", "--trace-mode", "changes", "--events", "e.parquet"]
    run = _vtlab("run", "v2g", "--bytes", "1MB", "--loss", "5%", *files, "-q", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    for source, out in (("t.csv", "a.png"), ("e.parquet", "b.svg"), ("t.csv", "c.pdf")):
        proc = _vtlab("plot", source, "-o", out, "--metric", "cwnd,seq", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / out).read_bytes().startswith(MAGIC[out[-4:]])
    # The figure shows the trace's values: the cwnd line is the trace's cwnd column.
    trace = pd.read_csv(tmp_path / "t.csv")
    fig, data = time_plot(trace, ["cwnd"])
    line = fig.axes[0].lines[0]
    assert list(line.get_xdata()) == list(trace["time_s"])
    assert list(line.get_ydata()) == list(trace["cwnd_bytes"].astype(float))
    assert list(data["value"]) == list(trace["cwnd_bytes"].astype(float))
    # From events: cwnd of window and state rows; seq of retransmissions and drops.
    ev = pd.read_parquet(tmp_path / "e.parquet")
    _, data = time_plot(ev, ["cwnd", "seq"])
    sent = ev[ev["event"].isin(["retransmit", "drop"])]
    assert list(data[data["metric"] == "seq"]["value"]) == list(sent["seq"].astype(float))


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["missing.csv", "-o", "x.png"], "error: FILE: missing.csv: no such file"),
        (["t.csv", "-o", "x.jpg"], "error: --out: x.jpg: allowed endings: .png, .svg, .pdf"),
        (["t.csv", "-o", "x.png", "--metric", "cwnd,bogus"],
         "error: --metric: bogus: unknown; allowed: cwnd, ssthresh, rtt, seq"),
        (["t.csv", "-o", "x.png", "--x", "nope", "--y", "cwnd_bytes"],
         "error: --x: nope: not a column of the file"),
        (["t.csv", "-o", "x.png", "--x", "seed"], "error: --y: --x and --y go together"),
        (["t.txt", "-o", "x.png"],
         "error: FILE: t.txt: not a table; allowed endings: .parquet, .csv"),
    ],
)  # fmt: skip
def test_bad_input_is_one_error_line(tmp_path, args, line):
    (tmp_path / "t.csv").write_text("seed,flow,time_s,cwnd_bytes,srtt_s\n1,f,0.0,1460,0.01\n")
    proc = _vtlab("plot", *args, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == line
    assert not (tmp_path / "x.png").exists()


def test_a_file_over_the_size_bound_is_refused_before_reading(tmp_path):
    with open(tmp_path / "big.csv", "wb") as fh:  # sparse: no disk used
        fh.truncate((1 << 30) + 1)
    proc = _vtlab("plot", "big.csv", "-o", "x.png", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: FILE: big.csv: 1,073,741,825 bytes; at most 1,073,741,824 (1 GiB)"
    )


def test_a_metric_against_an_axis_with_confidence_intervals(tmp_path):
    flows = pd.DataFrame({"loss": ["1%", "1%", "1%", "5%", "5%", "5%"],
                          "goodput_bps": [1.0, 2.0, 3.0, 4.0, 4.0, 4.0]})  # fmt: skip
    fig, data = axis_plot(flows, "loss", "goodput_bps")
    # Mean 2, sd 1, n 3: half-width t(0.975, 2) / √3 = 4.302653 / 1.732051 = 2.484138.
    assert list(data["mean"]) == [2.0, 4.0]
    assert data["ci95"][0] == pytest.approx(2.484138, abs=1e-6)
    assert data["ci95"][1] == 0.0
    assert list(fig.axes[0].lines[0].get_ydata()) == [2.0, 4.0]
    flows.to_parquet(tmp_path / "flows.parquet")
    proc = _vtlab("plot", "flows.parquet", "--x", "loss", "--y", "goodput_bps", "-o", "s.png",
                  cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "s.png").read_bytes().startswith(MAGIC[".png"])


def test_result_plot_and_html(tmp_path):
    res = vtlab.run(LOSSY, seed=2, trace="changes")
    fig, data = res.plot("ssthresh", tmp_path / "r.pdf")
    assert (tmp_path / "r.pdf").read_bytes().startswith(MAGIC[".pdf"])
    # ssthresh is infinite (unset) until the first loss: those rows are not drawn.
    finite = res.traces[res.traces["ssthresh_bytes"].map(math.isfinite)]
    assert list(data["value"]) == list(finite["ssthresh_bytes"].astype(float))
    assert len(fig.axes) == 1
    with pytest.raises(PlotError, match="path: r.gif"):
        res.plot("cwnd", tmp_path / "r.gif")
    with pytest.raises(PlotError, match="no traces or events"):
        vtlab.run(LOSSY, seed=2).plot()
    page = res._repr_html_()
    assert page.startswith("<p><b>vtlab Result</b>: 1 run(s), 1 flow row(s)")
    assert "<table" in page and "goodput_bps" in page


def test_a_metric_against_an_axis_from_a_sweep_store(tmp_path):
    from vtlab.sweep import Axis, Sweep

    axes = [Axis.values("loss.mean_loss", [0.0, 0.05], name="loss")]
    Sweep({"preset": "v2g", "bytes": "50kB"}, axes, seeds=[1, 2]).run(
        tmp_path / "store", jobs=1, progress=False
    )
    proc = _vtlab("plot", "store", "--x", "loss", "--y", "goodput_bps", "-o", "s.svg",
                  cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    svg = (tmp_path / "s.svg").read_text()
    assert svg.startswith("<?xml") and "goodput_bps (mean, 95 % CI)" in svg
    # The plotted means are those of the store's flows folder read directly.
    flows = pd.read_parquet(tmp_path / "store" / "flows")
    want = flows.groupby("loss")["goodput_bps"].mean()
    _, data = axis_plot(vtlab.load(tmp_path / "store"), "loss", "goodput_bps")
    assert dict(zip(data["loss"], data["mean"], strict=True)) == pytest.approx(want.to_dict())
    (tmp_path / "empty").mkdir()
    proc = _vtlab("plot", "empty", "-o", "x.png", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: FILE: empty: not a sweep store (it has no store.json)"
