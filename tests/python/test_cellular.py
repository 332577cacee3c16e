"""The cellular link (lte-cabin preset): trace-driven capacity and queueing, the
channel model's determinism, trace-file errors, ARWND's checks."""

from __future__ import annotations

import json
from pathlib import Path

import vtlab
import vtlab.cellular
from conftest import assert_usage_error
from vtlab import _core

#: One 1504-byte opportunity per ms for 1 s (mahimahi format, period 1000 ms):
#: 1504 B/ms = 12.032 Mbit/s of IP bytes.
ONE_PER_MS = list(range(1, 1001))


def _flow(spec: dict, seed: int = 1) -> dict:
    out = _core.run(json.dumps(spec), seed, False)
    cols = out["flows"]
    # NaN (no completion) as text, so that equal rows compare equal.
    return {k: (repr(v[0]) if v[0] != v[0] else v[0]) for k, v in cols.items()}


def test_a_saturated_trace_link_delivers_its_capacity_and_queues_its_buffer():
    # Trace-driven both ways (nothing random), CUBIC with a 6 MiB window fills
    # a 300 kB base-station buffer.
    spec = {
        "preset": "lte-cabin",
        "capacity_down": {"trace_ms": ONE_PER_MS},
        "capacity_up": {"trace_ms": ONE_PER_MS},
        "buffer": "300kB",
        "stop": "30s",
        "tcp": {"recv_buffer": "6MiB"},
    }
    f = _flow(spec)
    # Goodput ≤ 12.032 Mbit/s × 1448/1500 (payload per 1500 B packet) = 11.615 Mbit/s;
    # a saturating flow gets within 10 % of it over 30 s (slow start takes < 1 s).
    bound = 12.032e6 * 1448 / 1500
    assert 0.90 * bound <= f["goodput_bps"] <= bound, f["goodput_bps"]
    # Base RTT: 2 × (35 + 4 + 0.5) ms = 79 ms (plus < 1 ms of TTI waits each way).
    # A full buffer adds 300 000 B / 1504 B per ms = 199.5 ms.
    assert 0.079 <= f["rtt_min_s"] <= 0.082
    assert f["rtt_max_s"] <= 0.079 + 0.1995 + 0.045  # + a delayed ACK (40 ms) and TTIs
    # After a loss CUBIC keeps 70 % of ≈ 415 kB (BDP 115 kB + 300 kB): the queue
    # stays above ≈ 175 kB (116 ms), so most samples see ≥ 79 + 100 ms.
    assert f["rtt_p95_s"] >= 0.179
    assert f["drops_queue"] >= 1


def test_the_channel_model_is_deterministic_per_seed():
    spec = {"preset": "lte-cabin", "speed_kmh": 60, "stop": "10s"}
    a, b, c = _flow(spec, 1), _flow(spec, 1), _flow(spec, 2)
    assert a == b
    assert a["goodput_bps"] != c["goodput_bps"]


def test_a_bad_trace_file_is_one_error_naming_the_field_and_line(cli, tmp_path: Path):
    bad = tmp_path / "bad.down"
    bad.write_text("1\n2\n1.5\n")
    result = cli("run", "lte-cabin", "--set", f"capacity_down.trace={json.dumps(str(bad))}")
    assert_usage_error(result, "capacity_down.trace", "line 3")


def test_trace_paths_in_a_scenario_file_are_relative_to_the_file(tmp_path: Path):
    d = tmp_path / "scenarios"
    d.mkdir()
    (d / "cell.down").write_text("".join(f"{t}\n" for t in ONE_PER_MS))
    (d / "cabin.toml").write_text(
        'preset = "lte-cabin"\nstop = "2s"\n[capacity_down]\ntrace = "cell.down"\n'
    )
    sc = vtlab.Scenario.from_toml(d / "cabin.toml")
    resolved = json.loads(_core.expand(sc.to_json()))
    cap = resolved["links"][1]["capacity_ab"]
    assert cap["kind"] == "trace" and len(cap["times_ms"]) == 1000
    assert Path(cap["source"]) == d / "cell.down"


def test_arwnd_needs_timestamps_and_its_fields_need_arwnd(cli):
    assert_usage_error(
        cli(
            "run",
            "lte-cabin",
            "--set",
            "tcp.rwnd.control='arwnd'",
            "--set",
            "tcp.timestamps=false",
        ),
        "tcp.rwnd.control",
        "timestamps",
    )
    assert_usage_error(cli("run", "lte-cabin", "--set", "tcp.rwnd.lambda=3"), "tcp.rwnd.lambda")
    assert_usage_error(
        cli("run", "lte-cabin", "--set", "tcp.rwnd.control='arwnd'", "--set", "tcp.rwnd.lambda=0"),
        "tcp.rwnd.lambda",
        "outside [0.5, 10]",
    )


def test_a_channel_that_never_delivers_is_refused(cli):
    # Named by the field given (before: the resolved links[1].capacity_ab.channel).
    line = assert_usage_error(cli("run", "lte-cabin", "--set", "rsrp_dbm=-150"), "never delivers")
    assert line.startswith("error: rsrp_dbm: this channel never delivers anything")


def test_lte_trace_exports_the_model_capacity_as_mahimahi(cli, tmp_path: Path):
    import pandas as pd

    out, series = tmp_path / "cell.down", tmp_path / "cell.parquet"
    result = cli(
        "lte-trace", str(out), "--seconds", "5", "--set", "speed_kmh=60", "--series", str(series)
    )
    assert result.exit_code == 0, result.output
    stamps = [int(x) for x in out.read_text().split()]
    df = pd.read_parquet(series)
    assert len(df) == 5000 and list(df["time_ms"][:2]) == [1, 2]
    # Every delivered byte is in the trace, up to less than one 1504 B opportunity.
    delivered = int(df["bytes"][~df["lost"]].sum())
    assert len(stamps) * 1504 <= delivered < (len(stamps) + 1) * 1504
    assert stamps == sorted(stamps) and stamps[-1] <= 5000
    # The series is the channel the run with that seed sees: the same seed, the same
    # series (the core's own stream for capacity/lte/enb->hotspot).
    again = vtlab.cellular.channel_series(
        {"preset": "lte-cabin", "speed_kmh": 60}, seconds=5, seed=1
    )
    assert again.equals(df)
    assert_usage_error(
        cli("lte-trace", str(tmp_path / "x"), "--direction", "sideways"), "--direction"
    )
    assert_usage_error(cli("lte-trace", str(out)), "already exists")


def test_bench_vs_ns3_of_lte_cabin_runs_the_lte_validation_bench(cli, monkeypatch):
    """`vtlab bench lte-cabin --vs-ns3` times the LTE validation's cases (faked here:
    the real comparison runs in test_validate_lte.py); a broken ns-3 is one error."""
    from vtlab.ns3 import program as ns3
    from vtlab.validation import lte

    seen = {}

    def fake(out, **kw):
        seen.update(kw)
        row = {
            "case": "static_rlc2m",
            "ns3_process_wall_s": 7.0,
            "vtlab_call_wall_s": 0.035,
            "speedup_whole": 200.0,
            "simulated_s": 12,
        }
        return lte.LteValidation([], [], [row], {})

    monkeypatch.setattr(lte, "validate", fake)
    result = cli("bench", "lte-cabin", "--vs-ns3", "--repeat", "2")
    assert result.exit_code == 0, result.output
    assert "static_rlc2m" in result.output and "200× faster" in result.output
    assert seen["bench"] is True and seen["repeat"] == 2

    def broken(out, **kw):
        raise ns3.Ns3Error("ns-3 is not installed: pip install 'vtlab[ns3]'")

    monkeypatch.setattr(lte, "validate", broken)
    assert_usage_error(cli("bench", "lte-cabin", "--vs-ns3"), "--vs-ns3", "not installed")
