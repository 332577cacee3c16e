"""vtlab advise and the conditional survival estimator (vtlab.survival): the
arithmetic by hand, the estimator against plain Monte Carlo, and the advice on cables
whose answer is derived by hand. Sessions are 60 s loops (about 560 packets each way)
so that the file runs in well under a minute."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vtlab
from vtlab import survival as sv
from vtlab.errors import CliError

SHORT = {"preset": "v2g", "session": {"profile": "iso15118-2-dc", "duration": "60s"}}


def linux(ms: int, **session) -> dict:
    spec = {**SHORT, "session": {**SHORT["session"], **session}}
    overrides = {f"tcp.{k}": v for k, v in sv.STACKS["linux"].items()}
    return sv.apply(spec, {**overrides, **sv.rto_min_overrides("linux", ms)})


def test_burst_arithmetic_by_hand():
    # Bursts of exactly 1: L = 1 − (1 − p), so p = L.
    assert sv.start_probability(1e-4, 1, 1) == pytest.approx(1e-4, rel=1e-9)
    # Sizes 1..4: L = p (1 + ¾q + ½q² + ¼q³), q = 1 − p (docs/loss-models.md).
    p = sv.start_probability(0.05, 1, 4)
    q = 1 - p
    assert p * (1 + 0.75 * q + 0.5 * q**2 + 0.25 * q**3) == pytest.approx(0.05, rel=1e-9)
    # Binomial(3, ½): 1/8, 3/8, 3/8, 1/8.
    assert [sv.binomial_pmf(k, 3, 0.5) for k in range(4)] == pytest.approx(
        [1 / 8, 3 / 8, 3 / 8, 1 / 8]
    )
    # A burst of 4 at 5 is cut by the next start at 7 (ns-3 restarts); that one
    # loses 7, 8, 9.
    assert sv.burst_drops([5, 7], [4, 3]) == [5, 6, 7, 8, 9]
    # α_k = 0.05·6/(π²k²) sums to 0.05; z_1 = Φ⁻¹(1 − α_1/2), α_1 = 0.0304: about 2.165.
    assert sum(sv.alpha_k(k) for k in range(1, 100_000)) == pytest.approx(0.05, rel=1e-4)
    assert sv.z_k(1) == pytest.approx(2.1654, abs=1e-3)


def test_placement_splits_the_positions_between_the_directions():
    rng = __import__("random").Random(3)
    for _ in range(50):
        placed = sv.place(2, 10, 5, (1, 1), rng)
        assert len(placed.loss) + len(placed.reverse_loss) == 2
        assert all(0 <= x < 10 for x in placed.loss)
        assert all(0 <= x < 5 for x in placed.reverse_loss)


def test_one_lost_response_needs_a_low_rto_floor():
    # The charger answers 60 ms after the request (processing). A CurrentDemand
    # response lost on the cable (position 100 toward the vehicle, in the loop) is
    # sent again an RTO later: Linux's RTO is srtt + max(rto_min, 4·rttvar) ≥ rto_min.
    # rto_min 200 ms: the copy leaves ≥ 60 + 200 = 260 ms after the request, past the
    # 250 ms deadline → the session ends. rto_min 5 ms: the response direction's RTT
    # samples are the vehicle's 40 ms delayed ACK plus the 1 ms crossing, so srtt ≈ 41
    # ms and rttvar ≤ 41/2 (its first value, then decaying): RTO ≤ 41 + 82 = 123 ms,
    # the copy arrives by 60 + 123 + 1 < 250 ms → the session survives.
    lost = sv.Placement([100], [])
    assert sv.session_runner(linux(200, processing="60ms"))(lost, 1)[0] is False
    assert sv.session_runner(linux(5, processing="60ms"))(lost, 1)[0] is True


def test_one_retry_outwaits_the_retransmission():
    # As above at rto_min 200 ms, the lost response's copy arrives at most
    # 60 + (41 + max(200, 82)) + 1 = 302 ms after the request: past the first
    # deadline, inside the retry's (500 ms). With one retry the session survives.
    lost = sv.Placement([100], [])
    assert sv.session_runner(linux(200, processing="60ms", retries=1))(lost, 1)[0] is True


def test_the_estimator_agrees_with_plain_monte_carlo():
    # Linux, bursts of 1–4 packets at 0.3 % each way: a 60 s session meets about
    # 1.4 bursts, so both estimates are cheap. They are independent (burst model vs
    # replayed placements); they must agree within their intervals.
    spec = linux(200)
    burst, loss = (1, 4), 0.003
    survived = sv.plain_monte_carlo(spec, loss, burst, range(1, 301))
    mc_lo, mc_hi = sv.wilson(survived, 300, 1.959963984540054)
    est = sv.estimate(sv.session_runner(spec), burst, 120, lambda e: e.tail(loss) < 1e-3)
    point, lo, hi = est.at(loss)
    assert lo <= point <= hi
    assert max(lo, mc_lo) <= min(hi, mc_hi), (survived, point, lo, hi)
    assert abs(point - survived / 300) < 0.08


def test_a_loss_free_cable_keeps_every_setting_alive():
    # Mean loss 0: P(K = 0) = 1 and the loss-free session completes, so every
    # setting's survival is exactly 1 (one run each).
    advice = vtlab.advise("v2g", loss=0.0, duration="60s", out=None)
    assert len(advice.keeping) == len(sv.settings())
    assert all(
        (v.survival, v.lower, v.upper, v.runs) == (1.0, 1.0, 1.0, 1) for v in advice.verdicts
    )


def run_cli(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(Path(vtlab.__file__).parents[1]), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "vtlab", "advise", *args, "--out", str(tmp)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


def test_a_cable_no_setting_can_save(tmp_path):
    # The charger takes 600 ms to answer: more than the 250 ms deadline and more than
    # the 2 × 250 ms a vehicle with one retry waits, so no setting survives even
    # loss-free. One line, exit 2, naming the best setting found.
    done = run_cli("--duration", "60s", "--processing", "600ms", "--loss", "0", tmp=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no listed setting reaches survival 0.99")
    assert "the best is" in lines[0]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("--target", "1.5"), "--target"),
        (("--target", "0"), "--target"),
        (("--session", "iso15118-20"), "--session"),
        (("--burst", "4-1"), "--burst"),
        (("--loss", "lots"), "--loss"),
        (("--stack", "bsd"), "--stack"),
        (("--duration", "2d"), "--duration"),
        (("--processing", "-5ms"), "--processing"),
        (("--jobs", "0"), "--jobs"),
        (("station",), "LINK"),  # 21 vehicles on plc1 … plc7: not the one cable
        (("no-such-dir/cable.toml",), "LINK"),
    ],
)
def test_bad_input_is_one_line_naming_the_field(args, field, tmp_path):
    done = run_cli(*args, tmp=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}:"), lines


def test_a_loss_trace_that_does_not_parse(tmp_path):
    trace = tmp_path / "losses.txt"
    trace.write_text("# one per packet\n0001\n00z0\n")
    done = run_cli("--loss-trace", str(trace), tmp=tmp_path)
    assert done.returncode == 2
    assert (
        done.stderr.strip() == "error: --loss-trace: line 3: 'z' is not 0 (delivered) or 1 (lost)"
    )


def test_a_loss_trace_is_fitted_to_the_burst_model(tmp_path):
    # 3 of 12 packets lost, in runs of 1 and 2: mean loss 0.25, bursts of 1–2.
    trace = tmp_path / "losses.txt"
    trace.write_text("0100 0011\n0000\n")
    from vtlab.advice import fit_trace

    assert fit_trace(trace) == (0.25, (1, 2))
    with pytest.raises(CliError, match="--loss-trace"):
        (tmp_path / "empty.txt").write_text("# nothing\n")
        fit_trace(tmp_path / "empty.txt")
    assert math.isfinite(sv.start_probability(0.25, 1, 2))


def test_a_stored_estimate_goes_on_as_if_it_had_never_stopped():
    run = sv.session_runner(linux(200))
    short = sv.estimate(run, (1, 4), 10, lambda e: e.k_max >= 1)
    assert short.k_max == 1
    longer = sv.estimate(run, (1, 4), 10, lambda e: e.k_max >= 3, resume=short)
    fresh = sv.estimate(run, (1, 4), 10, lambda e: e.k_max >= 3)
    assert (longer.positions, longer.per_k) == (fresh.positions, fresh.per_k)


def test_advice_on_a_cable_only_a_low_rto_floor_saves():
    # Single losses at 0.003 % each way on a 60 s loop with 60 ms of processing. The
    # session sees about 1 140 packets, M ≈ 1 660 positions with the margins: K ~
    # Binomial(1 660, 3·10⁻⁵), P(K = 0) = 0.951, P(K = 1) = 0.047. At rto_min 5 ms
    # every single loss is repaired in time (the RTO arithmetic above), so with 30 of
    # 30 surviving the lower end is 0.951 + 0.047 · 30 / (30 + 2.165²) = 0.992 ≥ 0.99.
    # At 200 ms every lost loop request or response is fatal (≥ 60 + 200 ms), about
    # half the positions, so its upper end stays near 0.951 + 0.047 · 0.7 < 0.99.
    advice = vtlab.advise(
        "v2g",
        loss=3e-5,
        burst="1",
        processing="60ms",
        duration="60s",
        stacks=("linux",),
        runs=30,
        out=None,
    )
    keeping = {v.setting for v in advice.keeping}
    assert "linux, rto_min=5ms" in keeping
    assert "linux, rto_min=200ms" not in keeping


def test_settings_estimated_side_by_side_are_those_estimated_one_by_one(tmp_path, monkeypatch):
    """With two jobs each setting's estimate is made in a forked child (its pid
    recorded by a wrapper the children inherit), one line logged per setting; the
    verdicts and the stored runs are the same, byte for byte, as with one job."""
    from vtlab import advice as adv

    estimate = adv.estimate_setting
    pids = tmp_path / "pids"

    def recorded(*args, **kwargs):
        with pids.open("a") as fh:
            fh.write(f"{os.getpid()}\n")
        return estimate(*args, **kwargs)

    monkeypatch.setattr(adv, "estimate_setting", recorded)
    # The cable of the test above, 10 sessions per k.
    ask = {"loss": 3e-5, "burst": "1", "processing": "60ms", "duration": "60s", "runs": 10}
    answers, lines = {}, {}
    for jobs in (1, 2):
        pids.unlink(missing_ok=True)
        lines[jobs] = []
        answers[jobs] = vtlab.advise(
            "v2g",
            stacks=("linux",),
            out=tmp_path / f"j{jobs}",
            jobs=jobs,
            log=lines[jobs].append,
            **ask,
        )
        ran_in = set(pids.read_text().split())
        assert (str(os.getpid()) in ran_in) == (jobs == 1), ran_in
    n = len(sv.settings(("linux",)))
    assert len(answers[1].verdicts) == n and n >= 4
    for jobs in (1, 2):
        assert sorted(line.split(" ", 1)[0] for line in lines[jobs]) == sorted(
            f"{i}/{n}" for i in range(1, n + 1)
        )
    strip = [
        [(v.setting, v.survival, v.lower, v.upper, v.per_k) for v in a.verdicts]
        for a in answers.values()
    ]
    assert strip[0] == strip[1]
    files = {jobs: sorted((tmp_path / f"j{jobs}").iterdir()) for jobs in (1, 2)}
    assert [f.name for f in files[1]] == [f.name for f in files[2]] and len(files[1]) == n
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(files[1], files[2], strict=True))


def test_an_estimate_file_cut_short_is_made_again(tmp_path):
    """A child killed mid-write once left a cut JSON file under the estimate's name,
    and the next question failed on it; now the file is written whole or not at all,
    and one that does not parse is estimated again (the same runs: the same file)."""
    ask = {"loss": 3e-5, "burst": "1", "processing": "60ms", "duration": "60s", "runs": 10}
    first = vtlab.advise("v2g", stacks=("linux",), out=tmp_path, jobs=1, **ask)
    files = sorted(tmp_path.iterdir())
    whole = files[0].read_bytes()
    files[0].write_bytes(whole[: len(whole) // 2])
    again = vtlab.advise("v2g", stacks=("linux",), out=tmp_path, jobs=1, **ask)
    assert files[0].read_bytes() == whole
    assert [v.lower for v in again.verdicts] == [v.lower for v in first.verdicts]
    assert sorted(tmp_path.iterdir()) == files  # no temporary file left
