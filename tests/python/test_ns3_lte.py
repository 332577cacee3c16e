"""The ns-3 LTE reference (vtlab.ns3.lte): the mahimahi conversion, the argument
translation from the resolved scenario, the output parsing and the build errors; the
end-to-end run needs the ns3 wheel and g++."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import requires_ns3
from vtlab import _core
from vtlab.cellular import to_mahimahi, write_mahimahi
from vtlab.ns3 import lte as ns3_lte
from vtlab.ns3 import program as ns3mod
from vtlab.ns3.lte import case_args, lte_args, parse_lte_output, reference_spec, run_lte

# -- to_mahimahi -----------------------------------------------------------------------


def test_to_mahimahi_splits_and_carries():
    # ms 1: 3008 B = 2 x 1504            -> opportunities 1, 1; remainder 0
    # ms 2: 0 B                          -> nothing
    # ms 3: 1000 B < 1504                -> nothing; remainder 1000
    # ms 4: 1000 + 600 = 1600 >= 1504    -> opportunity 4; remainder 96
    assert to_mahimahi([1, 2, 3, 4], [3008, 0, 1000, 600]) == [1, 1, 4]


def test_to_mahimahi_carries_across_missing_ms():
    # ms 0: 1000                -> nothing, remainder 1000
    # ms 5: 1000 + 1000 = 2000  -> one at 5, remainder 496
    # ms 9: 496 + 2520 = 3016   -> two at 9 (3008), remainder 8
    assert to_mahimahi([0, 5, 9], [1000, 1000, 2520]) == [5, 9, 9]


def test_to_mahimahi_other_opportunity_size():
    # 100-byte opportunities. ms 10: 250 -> 10, 10, remainder 50; ms 11: 50 + 50 = 100 -> 11
    assert to_mahimahi([10, 11], [250, 50], opportunity_bytes=100) == [10, 10, 11]


def test_to_mahimahi_long_run_capacity_is_exact():
    ms = list(range(0, 5000, 3))
    bytes_ = [(i * 7919) % 9000 for i in range(len(ms))]  # 0..8999 B, some > 5 x 1504
    out = to_mahimahi(ms, bytes_)
    total = sum(bytes_)
    assert len(out) * 1504 <= total < (len(out) + 1) * 1504
    assert out == sorted(out)
    assert set(out) <= set(ms)


def test_to_mahimahi_empty_and_errors():
    assert to_mahimahi([], []) == []
    with pytest.raises(ValueError, match="entries"):
        to_mahimahi([1, 2], [100])
    with pytest.raises(ValueError, match="increasing"):
        to_mahimahi([2, 2], [100, 100])
    with pytest.raises(ValueError, match="negative"):
        to_mahimahi([1], [-1])
    with pytest.raises(ValueError, match="positive"):
        to_mahimahi([1], [1], opportunity_bytes=0)


def test_write_mahimahi(tmp_path: Path):
    p = write_mahimahi(tmp_path / "t.trace", [0, 1, 1, 4])
    assert p.read_text() == "0\n1\n1\n4\n"
    with pytest.raises(ValueError, match="at least one"):
        write_mahimahi(tmp_path / "e.trace", [])
    with pytest.raises(ValueError, match="non-decreasing"):
        write_mahimahi(tmp_path / "d.trace", [3, 2])
    with pytest.raises(ValueError, match="nonzero"):
        write_mahimahi(tmp_path / "z.trace", [0, 0])


# -- arguments, parsing, build errors --------------------------------------------------


def test_lte_args():
    args = case_args(16.7, 50, 2097152, "dl", 12, 3, "am", cc="cubic")
    assert "--speed=16.7" in args and "--distance=50" in args
    assert "--rlcBuffer=2097152" in args and "--rlc=am" in args
    assert "--cc=TcpCubic" in args and "--run=3" in args and "--duration=12" in args
    assert "--direction=dl" in args and "--app=tcp" in args
    assert not any(a.startswith("--udpRate") for a in args)
    assert "--udpRate=100" in case_args(0, 50, 10240, app="udp")
    assert "--cc=TcpNewReno" in case_args(0, 50, 10240, cc="newreno")
    for bad in ({"direction": "up"}, {"rlc": "tm"}, {"app": "quic"}, {"cc": "nope"}):
        with pytest.raises(ValueError):
            case_args(0, 50, 10240, **bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        case_args(0, 50, 10240, duration_s=0)


def test_lte_args_read_the_resolved_scenario():
    # The translator reads vtlab's resolved values: the horizon, the channel model's
    # distance and speed (km/h in the scenario), the core delay, the LTE buffer.
    spec = reference_spec(16.7, 50.0, 10240, "ul", 3.0)
    assert spec["speed_kmh"] == pytest.approx(60.12) and spec["direction"] == "uplink"
    expanded = json.loads(_core.expand(json.dumps(spec)))
    args = lte_args(expanded, 2, rtt_series=True)
    assert args[:2] == ["--direction=ul", "--app=tcp"]
    assert "--duration=3" in args and "--speed=16.7" in args and "--coreDelay=32" in args
    assert "--enbTxPower=30" in args and "--segmentSize=1448" in args
    assert "--sndBuf=4194304" in args and "--rcvBuf=4194304" in args
    assert args[-2:] == ["--run=2", "--rttSeries=1"]
    no_model = json.loads(_core.expand(json.dumps({"preset": "lte-cabin", "rsrp_dbm": -90})))
    with pytest.raises(ValueError, match="distance_m"):
        lte_args(no_model, 1)
    with pytest.raises(ValueError, match="tcp.cc"):
        case_args(0, 50, 10240, cc="westwood")  # vtlab has it, ns-3 does not
    with pytest.raises(ValueError, match="lte-cabin"):
        lte_args(json.loads(_core.expand(json.dumps({"preset": "v2g"}))), 1)


def test_parse_lte_output():
    lines = [
        {"kind": "config", "direction": "dl"},
        {"kind": "ping", "rtt_ms": [80.0, 80.0]},
        {"kind": "tb", "ms": [3, 4], "bytes": [4395, 100], "mcs": [28, 28]},
        {"kind": "rlc", "ms": [3], "bytes": [4000]},
        {"kind": "result", "goodput_bps": 1.0, "wall_s": 0.5},
    ]
    out = parse_lte_output("noise\n" + "\n".join(json.dumps(x) for x in lines) + "\n")
    assert out["tb_ms"] == [3, 4] and out["tb_bytes"] == [4395, 100] and out["tb_mcs"] == [28, 28]
    assert out["rlc_ms"] == [3] and out["rlc_bytes"] == [4000]
    assert out["goodput_bps"] == 1.0 and out["wall_s"] == 0.5
    assert out["config"] == {"direction": "dl"} and out["ping_rtt_ms"] == [80.0, 80.0]
    with pytest.raises(ns3mod.Ns3Error, match="result"):
        parse_lte_output(json.dumps(lines[0]) + "\n" + json.dumps(lines[2]))


def test_missing_ns3_is_an_ns3_error(monkeypatch: pytest.MonkeyPatch):
    def missing() -> ns3mod.Ns3Install:
        raise ns3mod.Ns3NotInstalled()

    monkeypatch.setattr(ns3mod, "find_ns3", missing)
    with pytest.raises(ns3mod.Ns3Error, match="ns-3 is not installed"):
        ns3_lte.ensure_lte_binary()


def test_compile_command_links_lte():
    install = ns3mod.Ns3Install(root=Path("/x/ns3"), version="3.44.post0")
    cmd = ns3_lte.lte_compile_command(install, Path("lte.cc"), Path("out/lte"))
    assert "-lns3.44-lte" in cmd and "-lns3.44-mobility" in cmd
    assert "-Wl,--allow-shlib-undefined" in cmd
    assert (
        cmd.index("-Wl,--no-as-needed") < cmd.index("-lns3.44-lte") < cmd.index("-Wl,--as-needed")
    )


@requires_ns3
def test_missing_compiler_and_build_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    src = tmp_path / "bad.cc"
    src.write_text("int main( { return 0; }\n")
    monkeypatch.setenv("CXX", "no-such-compiler-vtlab")
    with pytest.raises(ns3mod.Ns3Error, match="compiler 'no-such-compiler-vtlab' not found"):
        ns3_lte.ensure_lte_binary(source=src, cache=tmp_path)
    monkeypatch.delenv("CXX")
    with pytest.raises(ns3mod.Ns3Error, match="failed"):
        ns3_lte.ensure_lte_binary(source=src, cache=tmp_path)
    with pytest.raises(ns3mod.Ns3Error, match="cannot read"):
        ns3_lte.ensure_lte_binary(source=tmp_path / "absent.cc", cache=tmp_path)


# -- end to end ------------------------------------------------------------------------


@requires_ns3
def test_lte_static_downlink_end_to_end():
    duration = 2.0
    res = run_lte(case_args(0.0, 50.0, 2 * 1024 * 1024, "dl", duration, 1))
    # The flow's transport blocks bound TCP: every payload byte crossed the air in one.
    assert res["goodput_bps"] > 0
    assert res["tb_window_bps"] >= res["goodput_bps"]
    assert sum(res["tb_bytes"]) * 8 / duration >= res["goodput_duration_bps"]
    assert sum(res["tb_bytes"]) * 8 / duration == pytest.approx(res["tb_bps"])
    assert sum(res["rlc_bytes"]) <= sum(res["tb_bytes"])  # padding is in TBs only
    # 10 MHz SISO: at most one TB of 4395 B (MCS 28, 50 RBs) per ms
    assert max(res["tb_bytes"]) <= 4395
    assert res["tb_ms"] == sorted(set(res["tb_ms"])) and min(res["tb_ms"]) >= 0
    assert max(res["tb_ms"]) < duration * 1000
    # base RTT: 2 x 32 ms core + the radio access network, about 80 ms
    assert 70 <= res["base_rtt_ms"] <= 90
    assert res["rtt_count"] > 0 and res["rtt_mean_ms"] >= res["base_rtt_ms"]
    assert res["rtt_p95_ms"] <= res["rtt_max_ms"]
    assert res["wall_s"] > 0 and res["config"]["rlc"] == "um"
    stamps = to_mahimahi(res["tb_ms"], res["tb_bytes"])
    assert len(stamps) * 1504 <= sum(res["tb_bytes"]) < (len(stamps) + 1) * 1504

    # ns-3's default 10240-byte RLC buffer holds fewer packets than one window burst:
    # TCP stalls far below the channel's capacity.
    small = run_lte(case_args(0.0, 50.0, 10240, "dl", duration, 1))
    assert 0 < small["goodput_bps"] < 0.5 * res["goodput_bps"]
    assert small["rlc_tx_drops"] > 0
