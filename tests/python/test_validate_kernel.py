"""The kernel family (`vtlab validate kernel`): its pieces with values derived by hand,
and the quick form end to end through real namespaces (root only; CI runs as root).

Derivations are in the comments: the layout of ``struct tcp_info`` from linux/tcp.h,
ratios and paired differences of small hand-made samples, the lower bound of a
transfer's completion time from the cable's rate."""

from __future__ import annotations

import csv
import json
import math
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vtlab.validation import kernel, kernel_peer, kernel_session
from vtlab.validation.errors import ValidateError

VTLAB = [sys.executable, "-m", "vtlab"]
ROOT = sys.platform.startswith("linux") and os.geteuid() == 0
NEEDS_ROOT = pytest.mark.skipif(
    not ROOT,
    reason="the emulator needs root (network namespaces, TAP devices); CI runs as root",
)


def test_total_retrans_reads_the_24th_word_of_tcp_info() -> None:
    # linux/tcp.h: 8 one-byte fields (state .. delivery_rate_app_limited), then u32
    # rto, ato, snd_mss, rcv_mss, unacked, sacked, lost, retrans, fackets,
    # last_data_sent, last_ack_sent, last_data_recv, last_ack_recv, pmtu,
    # rcv_ssthresh, rtt, rttvar, snd_ssthresh, snd_cwnd, advmss, reordering, rcv_rtt,
    # rcv_space, total_retrans: total_retrans is word 24 (index 23).
    words = list(range(100, 124))  # rto = 100, ..., total_retrans = 123
    buf = bytes(8) + struct.pack("=24I", *words) + bytes(40)
    assert kernel_peer.total_retrans(buf) == 123


def test_sysctls_are_read_with_spaces_squeezed(tmp_path: Path) -> None:
    (tmp_path / "tcp_rmem").write_text("4096\t131072\t6291456\n")
    (tmp_path / "tcp_sack").write_text("1\n")
    got = kernel_peer.sysctls(tmp_path)
    assert got["tcp_rmem"] == "4096 131072 6291456"
    assert got["tcp_sack"] == "1"
    assert got["tcp_frto"] == "missing"
    assert list(got) == list(kernel_peer.SYSCTLS)


def test_netstat_pairs_names_with_values() -> None:
    text = (
        "TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes\n"
        "TcpExt: 0 3 7\n"
        "IpExt: InNoRoutes\n"
        "IpExt: 0\n"
    )
    # TCPLostRetransmit is not in this text: 0
    assert kernel_peer.netstat(text) == {
        "TCPTimeouts": 3,
        "TCPLossProbes": 7,
        "TCPLostRetransmit": 0,
    }


def test_peer_refuses_bad_arguments() -> None:
    done = subprocess.run(
        [sys.executable, str(kernel.PEER), "send", "x"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "usage" in done.stderr


def test_cells_names_and_specs() -> None:
    cells = kernel.all_cells()
    # 4 losses x 3 ccs on the cable, 2 motions x 3 ccs on lte-cabin
    assert len(cells) == 18
    assert cells[3].name == "v2g-0.25%-reno"
    assert cells[-1].name == "lte-moving-bbr"
    s = kernel.spec(kernel.Cell("v2g", "reno", loss=0.01), 2_000_000)
    # the kernel's reno is vtlab's newreno (Reno's window laws, SACK recovery)
    assert s == {
        "preset": "v2g",
        "bytes": 2_000_000,
        "tcp": {"profile": "linux", "cc": "newreno"},
        "loss": {"mean_loss": 0.01},
    }
    lte = kernel.spec(kernel.Cell("lte-cabin", "bbr", motion="moving"), 10**6)
    assert lte["speed_kmh"] == 60.0 and lte["tcp"]["cc"] == "bbr"


def test_make_grid_filters_and_defaults() -> None:
    g = kernel.make_grid(["cubic"], ["1%"])
    assert [c.name for c in g.cells] == ["v2g-1%-cubic", "lte-static-cubic", "lte-moving-cubic"]
    assert (g.runs, g.nbytes) == (10, 2_000_000)
    g = kernel.make_grid(["reno,bbr"], ["0", "5%"], lte=False)
    assert [c.name for c in g.cells] == ["v2g-0%-reno", "v2g-0%-bbr", "v2g-5%-reno", "v2g-5%-bbr"]
    q = kernel.make_grid(quick=True)
    assert [c.name for c in q.cells] == list(kernel.QUICK)
    assert (q.runs, q.nbytes) == (3, 1_000_000)


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"ccs": ["vegas"]}, "--cc"),
        ({"losses": ["150%"]}, "--loss"),
        ({"losses": ["2%"], "lte": False}, "--loss"),  # no cable cell at 2 %
        ({"runs": 1}, "--runs"),
        ({"nbytes": 10}, "--bytes"),
    ],
)
def test_make_grid_refuses(kwargs: dict, option: str) -> None:
    with pytest.raises(ValidateError) as err:
        kernel.make_grid(**kwargs)
    assert err.value.field == option


def _rec(side: str, seed: int, t: float, retx: int, p99_us: int = 0) -> dict:
    rec = {
        "side": side,
        "seed": seed,
        "completed": True,
        "completion_s": t,
        "retransmissions": retx,
        "losses": retx,
        "queue_drops": 0,
        "rto_count": 0,
        "tlp_probes": 0,
    }
    if side == kernel.KERNEL:
        way = {"frames": 10, "p50_ns": 0, "p99_ns": p99_us * 1000, "max_ns": 0}
        rec["lateness"] = {"far->near": way, "near->far": dict(way, frames=0)}
    return rec


def test_agreement_row_by_hand() -> None:
    cell = kernel.Cell("v2g", "cubic", loss=0.01)
    kn = [_rec("kernel", 1, 1.0, 2, 50), _rec("kernel", 2, 1.2, 4, 70)]
    vt = [_rec("vtlab", 1, 1.1, 3), _rec("vtlab", 2, 1.3, 5)]
    row = kernel.agreement_row(cell, vt, kn)
    # means 1.2 and 1.1: ratio 1.2 / 1.1 = 1.0909 (within 10 %: agree)
    assert row["ratio"] == pytest.approx(1.2 / 1.1)
    assert row["verdict"] == "agree"
    # both seeds differ by exactly 0.1 s: mean 0.1, standard deviation 0
    assert row["paired_diff_s"] == pytest.approx(0.1)
    assert row["paired_diff_ci_s"] == pytest.approx(0.0, abs=1e-12)
    assert (row["kernel_retx"], row["vtlab_retx"]) == (3.0, 4.0)
    # the worst p99 of the directions that carried frames: 70 µs
    assert row["late_p99_max_us"] == 70.0
    assert (row["kernel_runs"], row["vtlab_runs"], row["vtlab_cc"]) == (2, 2, "cubic")


def test_agreement_row_differs_and_missing() -> None:
    cell = kernel.Cell("v2g", "bbr", loss=0.05)
    # kernel 2.0 s both runs, vtlab 3.0 s both: ratio 1.5, zero variances: differs
    kn = [_rec("kernel", s, 2.0, 0) for s in (1, 2)]
    vt = [_rec("vtlab", s, 3.0, 0) for s in (1, 2)]
    assert kernel.agreement_row(cell, vt, kn)["verdict"] == "differs"
    row = kernel.agreement_row(cell, vt, [])
    assert row["verdict"] == "missing" and math.isnan(row["late_p99_max_us"])


def test_lateness_from_counters() -> None:
    counters = {
        "lateness": [
            {"frames": 5, "p50_ns": 1000, "p99_ns": 9000, "max_ns": 12000},
            {"frames": 0, "p50_ns": 0, "p99_ns": 0, "max_ns": 0},
        ]
    }
    got = kernel.lateness(counters)
    assert got["far->near"]["p99_ns"] == 9000 and got["near->far"]["frames"] == 0


def test_report_counts_the_verdicts(tmp_path: Path) -> None:
    cell = kernel.Cell("v2g", "cubic", loss=0.0)
    kn = [_rec("kernel", s, 1.0 + s / 100, 0, 40) for s in (1, 2)]
    for r in kn:
        r.update(cell="v2g-0%-cubic", kernel="6.1", cc_used="cubic")
        r.update(sysctls_far={"tcp_sack": "1"}, sysctls_near={"tcp_sack": "1"})
    row = kernel.agreement_row(cell, [_rec("vtlab", s, 1.0, 0) for s in (1, 2)], kn)
    meta = {
        "command": "vtlab validate kernel",
        "date": "today",
        "vtlab_version": "0",
        "bytes": 10**6,
        "runs": 2,
        "realtime": False,
        "records": kn,
    }
    paths = kernel.write_report(tmp_path, [row], meta)
    text = paths["report"].read_text()
    # means 1.0 and 1.015: ratio 0.985, agree
    assert "**1 of 1 cells agree**" in text
    assert "Kernel 6.1" in text and "cubic→cubic" in text
    assert len(list(csv.DictReader(paths["csv"].open()))) == 1


def test_no_tun_device_is_one_error_line(tmp_path: Path) -> None:
    env = dict(os.environ, VTLAB_TUN=str(tmp_path / "missing"))
    done = subprocess.run(
        [*VTLAB, "validate", "kernel", "--quick", "--out", str(tmp_path / "out"), "-q"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "runs.jsonl").exists()


@NEEDS_ROOT
def test_quick_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "kernel"
    done = subprocess.run(
        [*VTLAB, "validate", "kernel", "--quick", "--out", str(out), "-q"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader((out / "agreement.csv").open()))
    assert [r["case"] for r in rows] == list(kernel.QUICK)
    recs = [json.loads(line) for line in (out / "runs.jsonl").open()]
    kn = [r for r in recs if r["side"] == "kernel"]
    assert len(kn) == 6 and len(recs) == 12
    # 1 MB of payload cannot cross a 10 Mbit/s cable in less than 1e6 * 8 / 1e7 = 0.8 s
    assert all(r["completed"] and r["completion_s"] >= 0.8 for r in recs)
    assert {r["cc_used"] for r in kn} == {"cubic"}
    # no loss at 0 %; at 1 % about 7 of ~700 frames per run, so some over 3 seeds
    assert sum(r["losses"] for r in kn if r["cell"] == "v2g-0%-cubic") == 0
    assert sum(r["losses"] for r in kn if r["cell"] == "v2g-1%-cubic") > 0
    assert "agree" in (out / "report.md").read_text()


# -- the session regime -------------------------------------------------------------------


def test_quantile_by_hand() -> None:
    # position q (n - 1): 0.5 * 3 = 1.5 -> 2 + 0.5 * (3 - 2) = 2.5;
    # 0.99 * 3 = 2.97 -> 3 + 0.97 * (4 - 3) = 3.97
    xs = [4.0, 1.0, 3.0, 2.0]
    assert kernel_session.quantile(xs, 0.5) == 2.5
    assert kernel_session.quantile(xs, 0.99) == pytest.approx(3.97)
    assert kernel_session.quantile([7.0], 0.999) == 7.0
    assert math.isnan(kernel_session.quantile([], 0.5))


def test_session_spec_loses_both_ways() -> None:
    s = kernel_session.spec(kernel_session.SessionCell(0.001, "b1"), 50)
    loss = {"model": "burst", "mean_loss": 0.001, "burst_min": 1, "burst_max": 1}
    assert s["loss"] == loss and s["reverse_loss"] == loss
    step = s["session"]["steps"][0]
    assert (step["request"], step["response"], step["repeats"]) == (100, 100, 50)
    assert (step["timeout"], step["period"]) == ("250ms", "220ms")
    assert s["session"]["abort_on_miss"] is False
    assert kernel_session.SessionCell(0.0001, "b1-4").name == "session-0.01%-b1-4-cubic"


def test_session_row_by_hand() -> None:
    cell = kernel_session.SessionCell(0.01, "b1")
    # kernel: seed 1 has one exchange recovered after 0.21 s, seed 2 one missed (0.3 s)
    kn = [
        {"seed": 1, "response_s": [0.002, 0.002, 0.21, 0.002]},
        {"seed": 2, "response_s": [0.002, 0.3, 0.002, 0.002]},
    ]
    vt = [
        {"seed": 1, "response_s": [0.002, 0.002, 0.24, 0.002]},
        {"seed": 2, "response_s": [0.002, 0.26, 0.002, 0.002]},
    ]
    row = kernel_session.session_row(cell, vt, kn)
    # misses (> 0.25 s): kernel 1 (0.3), vtlab 1 (0.26); per seed vtlab - kernel: 0, 0
    assert (row["kernel_misses"], row["vtlab_misses"]) == (1, 1)
    assert row["paired_misses"] == 0.0
    # recovered (> 10 ms): 2 each; medians (0.21 + 0.3) / 2 and (0.24 + 0.26) / 2
    assert (row["kernel_recovered"], row["vtlab_recovered"]) == (2, 2)
    assert row["kernel_recovered_median_ms"] == pytest.approx(255.0)
    assert row["vtlab_recovered_median_ms"] == pytest.approx(250.0)
    # 8 pooled values, sorted 0.002 x6, 0.21, 0.3: p50 at position 3.5 -> 2 ms
    assert row["kernel_p50_ms"] == pytest.approx(2.0)
    # per-seed means: kernel 0.216/4 = 0.054 and 0.306/4 = 0.0765 (mean 0.06525);
    # vtlab 0.246/4 = 0.0615 and 0.266/4 = 0.0665 (mean 0.064): ratio 0.064/0.06525
    assert row["ratio"] == pytest.approx(0.064 / 0.06525)
    assert row["verdict"] == "agree"


def test_session_grid_refuses() -> None:
    with pytest.raises(ValidateError) as err:
        kernel_session.make_grid(None, 10, 0, 4)
    assert err.value.field == "--exchanges"
    g = kernel_session.make_grid([0.01], None, 5, 2)
    assert [c.name for c in g.cells] == ["session-1%-b1-cubic", "session-1%-b1-4-cubic"]


@NEEDS_ROOT
def test_session_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "session"
    cmd = [*VTLAB, "validate", "kernel", "--session", "--loss", "1%", "--runs", "2"]
    cmd += ["--exchanges", "5", "--jobs", "2", "--out", str(out), "-q"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    recs = [json.loads(line) for line in (out / "runs.jsonl").open()]
    assert len(recs) == 8  # 2 cells x 2 seeds x 2 sides
    for r in recs:
        assert len(r["response_s"]) == 5
        # 100 B each way over 10 Mbit/s and 0.9 ms: at least 2 x (154 B x 8 / 1e7 + 0.9 ms)
        # = 2.0464 ms (docs/scenarios.md)
        assert min(r["response_s"]) >= 0.0020464 - 1e-9


def _is_session_run(pid: int) -> bool:
    """Whether ``pid`` is a per-run kernel child (``-m vtlab.validation.kernel_session``)."""
    try:
        return b"vtlab.validation.kernel_session" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _session_children(parent: int) -> list[int]:
    """The per-run kernel children of ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text() if entry.name.isdigit() else ""
        except OSError:
            continue
        if f"\nPPid:\t{parent}\n" in status and _is_session_run(int(entry.name)):
            found.append(int(entry.name))
    return found


def _namespaces_of(pids: list[int]) -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    names = {line.split()[0] for line in listed.splitlines() if line.split()}
    return sorted(n for n in names for p in pids if n.startswith(f"vtlab-{p}-"))


@NEEDS_ROOT
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_session_grid_leaves_no_run_behind(tmp_path: Path, sig: int) -> None:
    """Ending the grid (SIGTERM, or SIGKILL, which it cannot catch) ends every per-run
    child and removes their namespaces: 200 exchanges x 220 ms would keep a run going
    for 44 s, so children still alive after 30 s were left behind."""
    cmd = [*VTLAB, "validate", "kernel", "--session", "--loss", "1%", "--runs", "2"]
    cmd += ["--exchanges", "200", "--jobs", "2", "--out", str(tmp_path / "s"), "-q"]
    grid = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        children: list[int] = []
        while len(children) < 2 and time.monotonic() < deadline and grid.poll() is None:
            time.sleep(0.2)
            children = _session_children(grid.pid)
        assert len(children) == 2, "the grid never ran two kernel runs at once"
        deadline = time.monotonic() + 60
        while not _namespaces_of(children) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _namespaces_of(children), "the runs never opened their emulations"
        grid.send_signal(sig)
        grid.wait(timeout=60)
        deadline = time.monotonic() + 30
        while any(map(_is_session_run, children)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [p for p in children if _is_session_run(p)] == []
        assert _namespaces_of(children) == []
    finally:
        if grid.poll() is None:
            grid.kill()
            grid.wait()
