"""LTE trace replay against ns-3 (vtlab.validation.lte): the scenario translation
(base-RTT arithmetic, buffer mapping, trace), ns-3's per-ACK RTT reconstruction, the
comparison and verdicts on fake numbers, the report, the ns-3 result cache, the
command's errors, a replay of the stored ns-3 results (no ns-3 needed) and an
end-to-end run that needs the ns3 wheel and g++."""

from __future__ import annotations

import csv
import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from conftest import assert_usage_error, requires_ns3
from vtlab import _core
from vtlab.ns3 import program as ns3mod
from vtlab.validation import lte as vl
from vtlab.validation import lte_cases, lte_ns3
from vtlab.validation.errors import ValidateError
from vtlab.validation.lte import compare, speed_row, validate, verdict
from vtlab.validation.lte_cases import (
    CASES,
    DIAGNOSTIC,
    MAIN,
    buffer_bytes_for,
    capacity_trace_ms,
    radio_delay_for,
    replay_base_rtt_ms,
    vtlab_spec,
)
from vtlab.validation.lte_ns3 import (
    Ns3Cache,
    Ns3Run,
    Ns3Source,
    ns3_goodput_bps,
    ns3_result,
    per_ack_rtt,
    same_output,
)
from vtlab.validation.lte_report import write_report

Cli = Callable[..., Result]
STORED = Path(__file__).resolve().parents[2] / "validation" / "lte" / "ns3"


STATIC_2M = next(c for c in CASES if c.name == "static_rlc2m")
STATIC_10K = next(c for c in CASES if c.name == "static_rlc10k")


# -- the translation ----------------------------------------------------------------


def test_radio_delay_from_ns3_base_rtt():
    # (79.928784 ms − 2 × 32 ms core − 2 × 0.5 ms mean TTI alignment) / 2 = 7.464392 ms
    assert radio_delay_for(79.928784, 32.0) == pytest.approx(7.464392, abs=1e-9)
    assert radio_delay_for(100.0, 40.0, tti_ms=2.0) == pytest.approx(9.0)
    with pytest.raises(ValidateError, match="--radio-delay"):
        radio_delay_for(60.0, 32.0)


@pytest.mark.parametrize(
    ("radio", "expected"),
    [
        # 2 × 32 + 2 × (⌊r⌋ + 1): each direction waits for the next TTI boundary
        (7.464392, 80.0),
        (7.0, 80.0),  # an integer r: the packet arrives just after a boundary
        (6.5, 78.0),
        (0.2, 66.0),
    ],
)
def test_replay_base_rtt_arithmetic(radio: float, expected: float):
    assert replay_base_rtt_ms(32.0, radio) == pytest.approx(expected)


def _flat_trace_spec(radio_ms: float) -> dict[str, Any]:
    """The validation's scenario with a flat 12 Mbit/s downlink, 0.5 s."""
    return vtlab_spec(STATIC_2M, [1], duration_s=0.5, radio_delay_ms=radio_ms)


@pytest.mark.parametrize("radio", [7.464392, 6.5])
def test_replay_base_rtt_matches_the_engine(radio: float):
    out = _core.run(json.dumps(_flat_trace_spec(radio)), 1, False)
    rtt_min_ms = out["flows"]["rtt_min_s"][0] * 1e3
    # serialisation of a 1500 B packet at 10 Gbit/s on two hops: a few µs
    assert rtt_min_ms == pytest.approx(replay_base_rtt_ms(32.0, radio), abs=0.01)


def test_buffer_mapping_keeps_the_packet_count():
    # ns-3 counts PDCP PDUs (1500 + 2 B), vtlab IP bytes
    assert buffer_bytes_for(10240) == 10240 * 1500 // 1502 == 10226
    assert buffer_bytes_for(2 * 1024 * 1024) == 2094359
    for rlc in (10240, 2 * 1024 * 1024, 1502, 1501, 0):
        assert buffer_bytes_for(rlc) // 1500 == rlc // 1502
    with pytest.raises(ValidateError):
        buffer_bytes_for(-1)


def test_vtlab_spec_resolves_like_ns3():
    spec = vtlab_spec(STATIC_10K, [1, 1, 2, 3], duration_s=12.0, radio_delay_ms=7.464392)
    s = json.loads(_core.expand(json.dumps(spec)))
    links = {ln["name"]: ln for ln in s["links"]}
    assert links["core"]["delay_ns"] == 32_000_000
    assert links["core"]["rate_bps"] == 10_000_000_000
    assert links["cabin"]["delay_ns"] == 0
    lte = links["lte"]
    assert lte["delay_ns"] == 7_464_392
    assert lte["queue_bytes"] == 10226
    assert lte["framing_bytes"] == 0
    assert lte["capacity_ab"] == {
        "kind": "trace",
        "source": "inline",
        "opportunity_bytes": 1500,
        "times_ms": [1, 1, 2, 3],
    }
    assert lte["capacity_ba"]["times_ms"] == [1]
    assert lte["capacity_ba"]["opportunity_bytes"] == 1500
    (flow,) = s["flows"]
    assert (flow["src"], flow["dst"]) == ("server", "laptop")
    tcp = flow["tcp"]
    assert (tcp["profile"], tcp["cc"], tcp["mss"], tcp["timestamps"]) == (
        "ns3",
        "cubic",
        1448,
        True,
    )
    # 1448 B + 40 B headers + 12 B timestamp option = ns-3's 1500-byte packets
    assert tcp["mss"] + tcp["header_bytes"] + 12 == lte_cases.IP_PACKET_BYTES
    assert tcp["send_buffer"] == tcp["recv_buffer"] == 4 * 1024 * 1024
    assert s["stop_ns"] == 12_000_000_000
    # a trace file instead of timestamps; the uplink period of a variant
    spec = vtlab_spec(STATIC_10K, "t.mahimahi", radio_delay_ms=4.5, uplink_period_ms=80)
    assert spec["capacity_down"] == {"trace": "t.mahimahi", "opportunity_bytes": 1500}
    assert spec["capacity_up"] == {"trace_ms": [80], "opportunity_bytes": 80 * 1500}
    # the main variant's uplink is served on request (ns-3's timing)
    spec = vtlab_spec(STATIC_10K, [1], radio_delay_ms=2.5, grant=MAIN.grant)
    assert spec["capacity_up"] == {"trace_ms": [1], "opportunity_bytes": 1500, "grant": True}
    with pytest.raises(ValidateError, match="--uplink-period"):
        vtlab_spec(STATIC_10K, [1], radio_delay_ms=1.0, uplink_period_ms=0)


def test_capacity_trace_shift_packets_and_extension():
    # ms 35: 3 × 1504 B + 100 -> three packets at 0; ms 36: 1404 + 100 carried -> one at 1
    assert capacity_trace_ms([35, 36], [3 * 1504 + 100, 1404], 0.001) == [0, 0, 0, 1]
    # ends at 2 ms, run lasts 4 ms: the last 2 ms (1, 2) are repeated at 3, 4
    assert capacity_trace_ms([5, 6, 7], [3008, 1504, 1504], 0.004) == [0, 0, 1, 2, 3, 4]
    # far too short: repeated whole, like mahimahi
    t = capacity_trace_ms([0, 1], [1504, 1504], 0.005)
    assert t[-1] >= 5 and t == sorted(t)
    with pytest.raises(ValidateError):
        capacity_trace_ms([], [], 1.0)
    with pytest.raises(ValidateError):
        capacity_trace_ms([3], [100], 1.0)


def test_capacity_trace_of_the_stored_run_has_ns3_capacity():
    res = json.loads((STORED / "static_capacity.json").read_text())
    t = capacity_trace_ms(res["tb_ms"], res["tb_bytes"], 12.0)
    assert t[0] == 0 and t[-1] == 12000
    packets_per_s = len(t) / 12.0
    # one 1500 B packet per 1504 TB bytes of ns-3's 35.06 Mbit/s
    assert packets_per_s * 1504 * 8 == pytest.approx(res["tb_bps"], rel=0.01)


def test_toml_scenario_round_trips():
    spec = vtlab_spec(STATIC_10K, "x.mahimahi", radio_delay_ms=7.464392)
    text = lte_cases.spec_toml(spec, "a header\nline two")
    assert text.startswith("# a header\n# line two\n")
    from vtlab.scenario import _tomllib

    assert _tomllib().loads(text) == spec


# -- ns-3's numbers -------------------------------------------------------------------


def _fake_ns3(**over: Any) -> dict[str, Any]:
    res: dict[str, Any] = {
        "rx_bytes": 1_000_000,
        "last_rx_s": 8.0,
        "base_rtt_ms": 80.0,
        "tb_ms": [35, 100],
        "rtt_t_ms": [100.0, 200.0],
        "rtt_ms": [80.0, 160.0],
        "rlc_ms": [60, 170],
        "rlc_bytes": [3 * 3008, 3008],  # 3 ACKs, then 1
        "config": {"duration_s": 1.0},
        "rtt_mean_ms": 120.0,
        "rtt_p95_ms": 156.0,
        "rtt_count": 2,
        "retransmissions": 3,
        "recoveries": 1,
        "loss_episodes": 0,
        "rlc_tx_drops": 3,
        "wall_s": 2.0,
        "process_wall_s": 2.5,
    }
    res.update(over)
    return res


def test_ns3_goodput_as_vtlab_defines_it():
    assert ns3_goodput_bps(_fake_ns3()) == pytest.approx(1_000_000.0)  # 8e6 bit / 8 s
    assert math.isnan(ns3_goodput_bps(_fake_ns3(last_rx_s=0)))


def test_per_ack_rtt_weighs_changes_by_delivered_data():
    # d = 80 − 35 = 45 ms; one ACK per two packets = 2 × 1504 = 3008 RLC bytes.
    # Value 80 holds for ACKs in [100, 200): data delivered in [55, 155) = 10 ACKs;
    # value 160 for [200, 1000): data in [155, 955) = 5 ACKs.
    mean, p95 = per_ack_rtt(_fake_ns3(rlc_bytes=[10 * 3008, 5 * 3008]))
    assert mean == pytest.approx((10 * 80 + 5 * 160) / 15)
    assert p95 == 160.0  # 10/15 < 95 %
    mean, p95 = per_ack_rtt(_fake_ns3(rlc_bytes=[39 * 3008, 3008]))
    assert mean == pytest.approx(82.0) and p95 == 80.0  # 97.5 % of the ACKs at 80
    # a change is at least one ACK, even with no delivery in its window (ACKs of one
    # uplink TB arrive nanoseconds apart): here each counts once, as in lte.cc
    mean, p95 = per_ack_rtt(_fake_ns3(rlc_ms=[], rlc_bytes=[]))
    assert mean == pytest.approx(120.0) and p95 == 160.0
    mean, _ = per_ack_rtt(
        _fake_ns3(
            rtt_t_ms=[100.0, 100.0001, 200.0], rtt_ms=[158.0, 79.0, 79.0], rlc_bytes=[3 * 3008, 0]
        )
    )
    assert mean == pytest.approx((158 + 3 * 79 + 79) / 5)
    assert all(math.isnan(x) for x in per_ack_rtt(_fake_ns3(rtt_t_ms=[], rtt_ms=[])))


# -- comparison and verdicts ----------------------------------------------------------


@pytest.mark.parametrize(
    ("ratios", "expected"),
    [
        ((1.0, 1.0, 1.0), "agree"),
        ((1.15, 0.85, 1.0), "agree"),  # the band's edges are inside
        ((1.151, 1.0, 1.0), "DIFFERS (goodput)"),
        ((5.66, 0.864, 0.515), "DIFFERS (goodput, RTT p95)"),
        ((1.0, 0.5, 2.0), "DIFFERS (RTT mean, RTT p95)"),
        ((1.0, math.nan, 1.0), "missing"),
        ((2.0, math.nan, 1.0), "DIFFERS (goodput)"),
    ],
)
def test_verdict(ratios: tuple[float, float, float], expected: str):
    keys = ("goodput_ratio", "rtt_mean_ratio", "rtt_p95_ratio")
    assert verdict(dict(zip(keys, ratios, strict=True))) == expected


def test_verdict_tolerance():
    r = {"goodput_ratio": 1.12, "rtt_mean_ratio": 1.0, "rtt_p95_ratio": 1.0}
    assert verdict(r, 0.15) == "agree"
    assert verdict(r, 0.10) == "DIFFERS (goodput)"


def _fake_vtlab(**over: Any) -> dict[str, Any]:
    vt: dict[str, Any] = {
        "goodput_bps": 1_100_000.0,
        "rtt_mean_ms": 100.0,
        "rtt_p95_ms": 150.0,
        "rtt_min_ms": 80.0,
        "retransmissions": 2,
        "fast_recoveries": 1,
        "rto_count": 0,
        "lte_drops_down": 2,
        "lte_drops_up": 0,
        "seeds": [1, 2, 3],
        "deterministic": True,
        "radio_delay_ms": 7.464392,
    }
    vt.update(over)
    return vt


def test_compare_on_fake_numbers():
    row = compare(STATIC_10K, _fake_ns3(), _fake_vtlab())
    assert row["ns3_goodput_mbps"] == pytest.approx(1.0)
    assert row["vtlab_goodput_mbps"] == pytest.approx(1.1)
    assert row["goodput_ratio"] == pytest.approx(1.1)
    assert row["ns3_rtt_mean_ms"] == pytest.approx(100.0)  # per-ACK, not the printed 120
    assert row["ns3_rtt_mean_printed_ms"] == 120.0
    assert row["rtt_mean_ratio"] == pytest.approx(1.0)
    assert row["rtt_p95_ratio"] == pytest.approx(150 / 160)
    assert row["verdict"] == "agree"
    assert row["variant"] == MAIN.name
    row = compare(STATIC_10K, _fake_ns3(), _fake_vtlab(goodput_bps=5e6), variant=DIAGNOSTIC)
    assert row["verdict"] == "DIFFERS (goodput)"
    assert row["variant"] == DIAGNOSTIC.name
    row = compare(STATIC_10K, _fake_ns3(rtt_t_ms=[], rtt_ms=[]), _fake_vtlab())
    assert row["verdict"] == "missing"


def test_speed_row():
    s = speed_row(
        STATIC_2M,
        {"wall_s": 6.0, "process_wall_s": 6.1},
        {"engine_wall_s": 0.05, "call_wall_s": 0.061, "events": 10},
        12.0,
    )
    assert s["speedup_simulation"] == pytest.approx(120.0)
    assert s["speedup_whole"] == pytest.approx(100.0)
    assert s["goal_100x"] == "met"
    s = speed_row(
        STATIC_2M,
        {"wall_s": 6.0, "process_wall_s": 6.1},
        {"engine_wall_s": 0.1, "call_wall_s": 0.1},
        12.0,
    )
    assert s["goal_100x"] == "missed"


def test_write_report_on_fake_rows(tmp_path: Path):
    main = compare(STATIC_10K, _fake_ns3(), _fake_vtlab(goodput_bps=5e6))
    diag = compare(STATIC_10K, _fake_ns3(), _fake_vtlab(), variant=DIAGNOSTIC)
    speed = speed_row(STATIC_10K, _fake_ns3(), {"engine_wall_s": 0.01, "call_wall_s": 0.02}, 12.0)
    paths = write_report(
        tmp_path, [main], [diag], [speed], {"command": "vtlab validate lte", "radio_delay_ms": 7.46}
    )
    text = paths["report"].read_text()
    assert "| static_rlc10k | 1.000 | 5.000 | 5.000 |" in text
    assert "### Misses" in text and "ACKs together" in text  # the small-buffer miss
    assert "## Diagnostic: free uplink" in text and "## Speed" in text
    with paths["csv"].open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["variant"] for r in rows] == [MAIN.name, DIAGNOSTIC.name]
    assert rows[0]["verdict"] == "DIFFERS (goodput)"
    assert paths["speed"].is_file()


# -- the ns-3 result cache ------------------------------------------------------------


def test_same_output_ignores_wall_times_and_binary_path():
    a = {"x": 1, "wall_s": 1.0, "process_wall_s": 2.0, "args": ["/a/lte", "--run=1"]}
    b = {"x": 1, "wall_s": 3.0, "process_wall_s": 4.0, "args": ["lte", "--run=1"]}
    assert same_output(a, b)
    assert not same_output(a, {**b, "x": 2})
    assert not same_output(a, {**b, "args": ["lte", "--run=2"]})


def test_cache_lookup_needs_hash_args_and_unchanged_file(tmp_path: Path):
    run = Ns3Run("static_rlc2m", 0.0, 2097152, "tcp")
    f = tmp_path / "ns3-runs" / "r.json"
    f.parent.mkdir()
    f.write_text(json.dumps({"rx_bytes": 1}))
    cache = Ns3Cache(tmp_path)
    cache.add(
        {
            "name": run.name,
            "args": run.args,
            "ns3_hash": "h1",
            "file": "ns3-runs/r.json",
            "sha256": lte_ns3.sha256_of(f),
            "wall_s": 9.0,
            "process_wall_s": 9.5,
        }
    )
    (tmp_path / "ns3-cache.jsonl").open("a").write("not json\n")
    cache = Ns3Cache(tmp_path)  # re-read; the broken line is ignored
    assert cache.lookup(run, "h1") is not None
    assert cache.load(cache.lookup(run, "h1"))["wall_s"] == 9.0
    assert cache.lookup(run, "h2") is None
    assert cache.lookup(run, None) is not None  # any build (no ns-3 here)
    assert cache.lookup(Ns3Run("static_rlc2m", 0.0, 2097152, "tcp", 3.0), "h1") is None
    f.write_text(json.dumps({"rx_bytes": 2}))  # changed behind the cache's back
    assert cache.lookup(run, "h1") is None


def test_ns3_result_without_ns3_uses_stored_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # no shipped data to fall back on: an empty validation folder
    (tmp_path / "shipped").mkdir()
    monkeypatch.setenv("VTLAB_VALIDATION_DIR", str(tmp_path / "shipped"))
    tmp_path = tmp_path / "out"
    run = lte_ns3.capacity_run("static", 12.0)
    with pytest.raises(ns3mod.Ns3Error, match="no cached ns-3 result"):
        ns3_result(run, Ns3Cache(tmp_path), Ns3Source(None, "no wheel"))
    (tmp_path / "ns3").mkdir(parents=True)
    shutil.copy(STORED / "static_capacity.json", tmp_path / "ns3")
    res, src = ns3_result(run, Ns3Cache(tmp_path), Ns3Source(None, "no wheel"))
    assert src == "stored" and res["app"] == "udp"
    # other arguments (3 s) do not match the stored 12 s run
    with pytest.raises(ns3mod.Ns3Error):
        ns3_result(lte_ns3.capacity_run("static", 3.0), Ns3Cache(tmp_path), Ns3Source(None, "x"))


def test_ns3_result_falls_back_to_the_results_vtlab_ships(tmp_path: Path):
    """An output folder without ns-3 results (an installed vtlab, run anywhere): the
    packaged ``lte/ns3-cache.jsonl`` and its files answer."""
    for run in (lte_ns3.capacity_run("static", 12.0), lte_ns3.tcp_run(CASES[0], 12.0)):
        res, src = ns3_result(run, Ns3Cache(tmp_path), Ns3Source(None, "no wheel"))
        assert src == "cache" and res["args"][1:] == run.args
    assert not (tmp_path / lte_ns3.CACHE_FILE).exists()


def test_stored_results_have_the_arguments_of_the_cases():
    for case in CASES:
        res = json.loads((STORED / f"{case.name}.json").read_text())
        assert res["args"][1:] == lte_ns3.tcp_run(case, 12.0).args
    for mobility in ("static", "moving"):
        res = json.loads((STORED / f"{mobility}_capacity.json").read_text())
        assert res["args"][1:] == lte_ns3.capacity_run(mobility, 12.0).args


# -- the replay of the stored ns-3 results (no ns-3 needed) ---------------------------


@pytest.fixture
def no_ns3(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(**_: Any) -> Any:
        raise ns3mod.Ns3NotInstalled()

    monkeypatch.setattr(vl, "ensure_lte_binary", missing)


def _stored_copy(tmp_path: Path, *names: str) -> Path:
    (tmp_path / "ns3").mkdir(parents=True)
    for n in names:
        shutil.copy(STORED / f"{n}.json", tmp_path / "ns3")
    return tmp_path


def test_replay_of_the_stored_static_cases(tmp_path: Path, no_ns3: None):
    out = _stored_copy(tmp_path, "static_capacity", "static_rlc2m", "static_rlc10k")
    res = validate(out, cases=["static_rlc2m", "static_rlc10k"], seeds=2, progress=False)
    assert res.ns3_runs == dict.fromkeys(
        ["static_capacity", "static_rlc10k", "static_rlc2m"], "stored"
    )
    rows = {r["case"]: r for r in res.rows}
    big = rows["static_rlc2m"]
    assert big["verdict"] == "agree"
    for key in ("goodput_ratio", "rtt_mean_ratio", "rtt_p95_ratio"):
        assert abs(big[key] - 1) <= 0.05, (key, big[key])
    assert big["vtlab_retransmissions"] == big["ns3_retransmissions"] == 81
    assert big["vtlab_deterministic"] and big["vtlab_uplink_drops"] == 0
    # ns-3's request-grant uplink returns each window's ACKs in one grant, and the
    # RLC buffer keeps 6 packets of the burst that follows: the main variant serves
    # the uplink on request and loses what ns-3 loses; the free uplink (ACKs as the
    # data arrives) lets the window grow past the buffer (the miss it had)
    small = rows["static_rlc10k"]
    assert small["verdict"] == "agree"
    assert small["vtlab_retransmissions"] == small["ns3_retransmissions"] == 41
    diag = {r["case"]: r for r in res.diag_rows}["static_rlc10k"]
    assert diag["goodput_ratio"] > 3
    assert (out / "scenarios" / "static_rlc2m.toml").is_file()
    assert (out / "traces" / "static_down.mahimahi").is_file()
    assert "static_rlc2m" in res.paths["report"].read_text()


def test_cli_with_stored_results(cli: Cli, tmp_path: Path, no_ns3: None):
    out = _stored_copy(tmp_path / "v", "static_capacity", "static_rlc2m")
    result = cli(
        "validate",
        "lte",
        "--case",
        "static_rlc2m",
        "--seeds",
        "1",
        "--bench",
        "--repeat",
        "1",
        "--no-diagnostic",
        "--quiet",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output + result.stderr
    assert "wrote" in result.stdout
    with (out / "speed.csv").open() as fh:
        (row,) = list(csv.DictReader(fh))
    assert float(row["speedup_simulation"]) > 1


def test_cli_without_ns3_or_cache_fails_cleanly(
    cli: Cli, tmp_path: Path, no_ns3: None, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "shipped").mkdir()  # no shipped results either
    monkeypatch.setenv("VTLAB_VALIDATION_DIR", str(tmp_path / "shipped"))
    line = assert_usage_error(
        cli("validate", "lte", "--case", "static_rlc2m", "--quiet", "--out", str(tmp_path / "v"))
    )
    assert line.startswith("error: no cached ns-3 result for static_capacity")


# -- the command's errors -------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--case", "nosuch"], "error: --case: unknown case 'nosuch' (allowed: "),
        (["--duration", "0"], "error: --duration: 0 s is outside [1, 60] s"),
        (["--duration", "abc"], "error: --duration: "),
        (["--seeds", "0"], "error: --seeds: must be at least 1, got 0"),
        (["--tolerance", "2"], "error: --tolerance: 2 is outside (0, 1)"),
        (["--tolerance", "lots"], "error: --tolerance: invalid fraction 'lots'"),
        (["--uplink-period", "0"], "error: --uplink-period: must be at least 1 ms, got 0"),
        (["--radio-delay", "-1"], "error: --radio-delay: -1 ms is outside [0, 1000] ms"),
        (["--repeat", "0"], "error: --repeat: must be at least 1, got 0"),
        (["--frobnicate"], "error: --frobnicate: no such option"),
    ],
)
def test_cli_errors_name_the_option(cli: Cli, tmp_path: Path, args: list[str], expected: str):
    result = cli("validate", "lte", *args, "--out", str(tmp_path / "v"))
    line = assert_usage_error(result)
    assert line.startswith(expected), line
    assert not (tmp_path / "v").exists()  # nothing written


def test_cli_out_must_be_a_directory(cli: Cli, tmp_path: Path):
    f = tmp_path / "file"
    f.write_text("x")
    line = assert_usage_error(cli("validate", "lte", "--out", str(f)))
    assert line.startswith("error: --out: ")


def test_old_command_name_is_a_hidden_alias(cli: Cli, tmp_path: Path, no_ns3: None):
    out = _stored_copy(tmp_path / "v", "static_capacity", "static_rlc2m")
    args = ["--case", "static_rlc2m", "--seeds", "1", "--no-diagnostic", "--quiet"]
    result = cli("validate-lte", *args, "--out", str(out))
    assert result.exit_code == 0, result.output + result.stderr
    with (out / "agreement.csv").open() as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["case"] == "static_rlc2m" and row["verdict"] == "agree"
    assert "validate-lte" not in cli("--help").stdout
    assert "lte" in cli("validate", "--help").stdout
    line = assert_usage_error(cli("validate-lte", "--seeds", "0", "--out", str(out)))
    assert line.startswith("error: --seeds: must be at least 1, got 0")


def test_python_api_errors(tmp_path: Path):
    with pytest.raises(ValidateError, match="--case"):
        validate(tmp_path, cases=["x"])
    with pytest.raises(ValidateError, match="--tolerance"):
        validate(tmp_path, tolerance=1.5)
    assert vl.parse_tolerance("15%") == pytest.approx(0.15)
    assert vl.parse_tolerance("0.2") == pytest.approx(0.2)
    assert [c.name for c in vl.parse_cases(["moving_rlc2m", "static_rlc10k"])] == [
        "static_rlc10k",
        "moving_rlc2m",
    ]


# -- end to end -----------------------------------------------------------------------


@requires_ns3
def test_end_to_end_static_2mib_three_seconds(tmp_path: Path):
    """ns-3 (compiled on demand, then two 3 s runs) and vtlab agree within ±15 %; a
    second call takes ns-3's results from the cache."""
    res = validate(
        tmp_path,
        cases=["static_rlc2m"],
        duration_s=3.0,
        seeds=1,
        diagnostic=False,
        progress=False,
    )
    assert res.ns3_runs == {"static_capacity": "run", "static_rlc2m": "run"}
    (row,) = res.rows
    for key in ("goodput_ratio", "rtt_mean_ratio", "rtt_p95_ratio"):
        assert abs(row[key] - 1) <= 0.15, (key, row[key])
    assert row["verdict"] == "agree"
    again = validate(
        tmp_path,
        cases=["static_rlc2m"],
        duration_s=3.0,
        seeds=1,
        diagnostic=False,
        progress=False,
    )
    assert set(again.ns3_runs.values()) == {"cache"}
    assert again.rows[0]["goodput_ratio"] == row["goodput_ratio"]
    recs = [json.loads(x) for x in (tmp_path / "ns3-cache.jsonl").read_text().splitlines()]
    assert {r["name"] for r in recs} == {"static_capacity", "static_rlc2m"}
    assert all("--duration=3" in r["args"] and r["ns3_hash"] for r in recs)
