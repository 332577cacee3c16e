"""vtlab's 802.11 medium against ns-3's wifi module (vtlab.validation.wifi): the
scenario translation both ways, the verdicts and orderings on hand-made numbers, the
command against the stored ns-3 runs (no ns-3 needed), its errors, and one ns-3 run
of the reference program compared with the stored one (needs the ns3 wheel and g++).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from conftest import assert_usage_error, requires_ns3
from vtlab import _core
from vtlab.ns3 import program as ns3mod
from vtlab.ns3.process import run_process
from vtlab.ns3.wifi import parse_output, wifi_args
from vtlab.validation import wifi
from vtlab.validation.cache import read_records
from vtlab.validation.errors import ValidateError
from vtlab.validation.runner import NS3
from vtlab.validation.verdict import ratio_ci_delta, verdict

Cli = Callable[..., Result]


H8_RTS1 = next(c for c in wifi.CELLS if c.name == "h8-rts1-tcpnewreno-d1")
#: ns-3's three stored runs of h1-rts0-tcpvegas-d2 (validation/wifi/ns3/summary.csv)
NS3_VEGAS_D2_KBPS = (654_622.72 + 654_172.16 + 655_769.60) / 3 / 1e3


def _expanded(cell: wifi.Cell) -> dict:
    return json.loads(_core.expand(json.dumps(wifi.vtlab_spec(cell))))


def test_the_grid_is_the_issue_s():
    # 16 original cells (hops {1, 8} x RTS x {NewReno, Vegas} x delayed ACK {1, 2}),
    # 2 x 13 one-factor variants of the baseline on 1 and 8 hops (IFQ 2/5/10/20,
    # DupAck 1/6/10, 128 KiB, two error models, SACK), 2 x 5 on 2 and 4 hops
    # (baseline, IFQ 2, 128 KiB, two error models), 10 SACK controls: 16 + 26 + 10 + 10
    assert len(wifi.CELLS) == 62 - 4
    names = [c.name for c in wifi.CELLS]
    assert len(set(names)) == len(names) and set(names) >= set(wifi.QUICK)
    axes = {(c.ifq, c.dupack, c.window, c.error, c.cc, c.hops) for c in wifi.CELLS}
    assert {a[0] for a in axes} == {2, 5, 10, 20, 50}
    assert {a[1] for a in axes} == {1, 3, 6, 10}
    assert {a[2] for a in axes} == {20, 256} and {a[3] for a in axes} == {"none", "onoff", "rx"}
    assert {a[4] for a in axes} == {"newreno", "vegas", "sack"}
    assert {a[5] for a in axes} == {1, 2, 4, 8}
    # three stored ns-3 runs per cell, keyed by the results hash of today's wifi.cc
    stored = read_records(wifi.stored_ns3_runs_path(), wifi.record_key)
    h = ns3mod.program_results_hash(ns3mod.WIFI_PROGRAM)
    assert set(stored) == {
        wifi.run_key(NS3, c.name, r, 100.0, h) for c in wifi.CELLS for r in wifi.NS3_RUNS
    }


def test_the_stored_runs_are_found_without_ns3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    # Without an ns-3 wheel the results hash is taken with the version vtlab's ns3
    # extra pins, the one the stored runs were made with.
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert f'ns3 = ["ns3=={ns3mod.PINNED_NS3_VERSION}"]' in pyproject

    def missing() -> None:
        raise ns3mod.Ns3NotInstalled()

    monkeypatch.setattr(ns3mod, "find_ns3", missing)
    source = ns3mod.WIFI_PROGRAM.source().read_bytes()
    pinned = ns3mod.results_hash(source, ns3mod.PINNED_NS3_VERSION)
    assert ns3mod.program_results_hash(ns3mod.WIFI_PROGRAM) == pinned
    # so validating from them compiles nothing
    res = wifi.validate(wifi.make_grid(quick=True, seeds=1), tmp_path, progress=False)
    assert (len(res.table), res.runs_done, res.errors) == (4, 4, [])


def test_the_vtlab_scenario_is_ns3_s():
    s = _expanded(H8_RTS1)
    w = s["media"][0]["wifi"]
    assert len(s["nodes"]) == 9
    assert w["reception"] == {"model": "dsss-ber", "preamble_snr_db": 4.0}
    # ns-3.44's FrameRetryLimit 7 for RTS and data together, its NAV reset after a
    # failed RTS and WifiMacQueue::MaxDelay 500 ms
    assert w["frame_retry_limit"] == 7 and w["rts_nav_reset"] is True
    assert w["queue_lifetime_ns"] == 500_000_000
    assert w["rts_threshold_bytes"] == 0
    assert s["flows"][0]["start_ns"] == 1_000_000_000
    assert s["stop_ns"] == 101_000_000_000
    # and wifi_args maps it back onto the program's arguments
    args = wifi_args(s, 3)
    for a in ("--hops=8", "--rts=1", "--cc=TcpNewReno", "--delAck=1", "--window=20"):
        assert a in args
    for a in ("--retryLimit=7", "--macMaxDelay=500", "--dupAck=3", "--errorModel=none"):
        assert a in args
    assert "--duration=100" in args and "--run=3" in args
    assert args[:3] == ["--hops=8", "--spacing=200", "--speed=5.5556"]


def _args(spec: dict) -> list[str]:
    return wifi_args(json.loads(_core.expand(json.dumps(spec))), 1)


def test_wifi_args_refuses_what_the_program_cannot_run():
    ns3_like = wifi.vtlab_spec(H8_RTS1)
    with pytest.raises(ValueError, match="tcp.cc"):
        _args({**ns3_like, "tcp": {"cc": "cubic"}})
    # ns-3 always has its retry counter, NAV reset and queue lifetime
    for field in ("frame_retry_limit", "rts_nav_reset", "queue_lifetime"):
        w = {k: v for k, v in ns3_like["wifi"].items() if k != field}
        with pytest.raises(ValueError, match=f"wifi.{field}"):
            _args({**ns3_like, "wifi": w})
    # error models: at the MAC on every frame, on-off both ways or Bernoulli incoming
    for extra in (
        {"error_rate": 0.2, "error_placement": "ip"},
        {"error_rate": 0.2, "error_frames": "data"},
        {"error": {"model": "bernoulli", "mean_loss": 0.02}},
    ):
        with pytest.raises(ValueError, match="wifi.error"):
            _args({**ns3_like, "wifi": {**ns3_like["wifi"], **extra}})
    with pytest.raises(ValueError, match="vanet-chain"):
        _args({"preset": "v2g"})


def test_the_error_models_map_onto_the_program_s():
    # on-off 4 % of the time in 5 ms bursts: lossless sojourns 5 ms x 0.96 / 0.04
    onoff = next(c for c in wifi.CELLS if c.name == "h1-rts1-tcpnewreno-d1-eonoff")
    args = _args(wifi.vtlab_spec(onoff))
    assert args[-4:-1] == ["--errorModel=onoff", "--errorRate=0.04", "--errorBurst=0.005"]
    rx = next(c for c in wifi.CELLS if c.name == "h8-rts1-tcpnewreno-d1-erx")
    assert _args(wifi.vtlab_spec(rx))[-3:-1] == ["--errorModel=rate", "--errorRate=0.02"]


def test_cell_names_spell_their_axes():
    assert wifi.Cell(4, True, "newreno", 1, window=256).name == "h4-rts1-tcpnewreno-d1-w128k"
    assert wifi.Cell(8, True, "sack", 2, ifq=5).name == "h8-rts1-tcpsack-d2-q5"
    cell = wifi.Cell(2, False, "vegas", 1, dupack=6, error="rx")
    assert (cell.name, cell.label) == ("h2-rts0-tcpvegas-d1-dup6-erx", "tcpvegas-d1-dup6-erx")
    # the baseline's axes leave the name as it was before the grid grew
    assert wifi.Cell(1, True, "newreno", 1).name == "h1-rts1-tcpnewreno-d1"


def test_ratio_interval_and_verdicts_by_hand():
    # means 110 and 100: ratio 1.1; sample sd 11.547 over 4 runs and 0 over 4: relative
    # se (11.547/110)/2 = 0.05249, so the interval is 1.1·(1 ± 1.96·0.05249)
    r = ratio_ci_delta([100.0, 120.0, 100.0, 120.0], [100.0] * 4)
    assert r.ratio == pytest.approx(1.1)
    sd = 11.547005383792516  # sample sd of 100, 120, 100, 120
    rel = (sd / 110) / 2
    assert (r.low, r.high) == pytest.approx((1.1 * (1 - 1.96 * rel), 1.1 * (1 + 1.96 * rel)))

    def v(ratio: float) -> str:
        return verdict(ratio, True, wifi.TOLERANCE, wifi.TOLERANCE)

    assert v(1.1) == "agree" and v(0.9) == "agree"
    assert v(1.1001) == "differs" and v(0.8999) == "differs"


def test_orderings_compare_ranks_within_a_group():
    a1, b1 = wifi.Cell(1, False, "newreno", 1), wifi.Cell(1, False, "vegas", 1)
    a8, b8 = wifi.Cell(8, False, "newreno", 1), wifi.Cell(8, False, "vegas", 1)

    def runs(mean: float) -> list[float]:
        return [mean - 0.1, mean, mean + 0.1]  # 95 % half-width 0.25

    goodputs = {
        ("vtlab", a1.name): runs(3.0),
        ("ns-3", a1.name): runs(3.0),
        ("vtlab", b1.name): runs(1.0),
        ("ns-3", b1.name): runs(2.0),
        ("vtlab", a8.name): runs(2.0),
        ("ns-3", a8.name): runs(1.0),
        ("vtlab", b8.name): runs(1.0),
        ("ns-3", b8.name): runs(2.0),
    }
    o = wifi.orderings([a1, b1, a8, b8], goodputs)
    assert [x["significant_inversions"] for x in o] == [[], ["tcpnewreno-d1/tcpvegas-d1"]]
    assert o[1]["ns3_order"] == ["tcpvegas-d1", "tcpnewreno-d1"]
    assert o[1]["vtlab_order"] == ["tcpnewreno-d1", "tcpvegas-d1"]
    # cells ns-3 cannot tell apart (overlapping intervals) are a tie, whatever vtlab's order
    tie = {**goodputs, ("ns-3", b1.name): runs(2.99), ("vtlab", b1.name): runs(3.5)}
    assert wifi.orderings([a1, b1], tie)[0]["significant_inversions"] == []


@pytest.mark.parametrize("command", [("validate", "wifi"), ("validate-wifi",)])
def test_quick_validation_from_the_cli(cli: Cli, tmp_path: Path, command: tuple[str, ...]):
    res = cli(*command, "--quick", "-o", str(tmp_path), "--quiet")
    assert res.exit_code == 0, res.output + res.stderr
    assert "4 of 4 cells agree within ±10 %" in res.output
    rows = list(csv.DictReader((tmp_path / "agreement.csv").open()))
    assert [r["case"] for r in rows] == list(wifi.QUICK)
    for r in rows:
        assert abs(float(r["ratio"]) - 1) <= wifi.TOLERANCE
        assert r["vtlab_runs"] == "3" and r["ns3_runs"] == "3"
    report = (tmp_path / "report.md").read_text()
    # ns-3's stored single hop: 501.555, 501.473 and 501.391 kbit/s (summary.csv)
    assert "| h1-rts1-tcpnewreno-d1 | 501.5 |" in report
    # every vtlab run is in the cache; the same command again runs nothing new and
    # writes the same table
    cache = (tmp_path / "runs.jsonl").read_text()
    table = (tmp_path / "agreement.csv").read_bytes()
    assert len(cache.splitlines()) == 4 * 3
    again = cli(*command, "--quick", "-o", str(tmp_path), "--quiet")
    assert again.exit_code == 0, again.output + again.stderr
    assert (tmp_path / "runs.jsonl").read_text() == cache
    assert (tmp_path / "agreement.csv").read_bytes() == table


def test_the_api_gives_the_same_table(tmp_path: Path):
    res = wifi.validate(wifi.make_grid(["h1-rts0-tcpvegas-d2"], 2), tmp_path, progress=False)
    assert [r["verdict"] for r in res.table] == ["agree"]
    # ns-3's three runs of this cell (summary.csv): their mean
    assert res.table[0]["ns3_kbps"] == pytest.approx(NS3_VEGAS_D2_KBPS, abs=0.01)
    assert (res.runs_done, res.errors) == (2, [])


def test_bad_options_exit_2(cli: Cli, tmp_path: Path):
    assert_usage_error(cli("validate", "wifi", "--case", "h3-x", "-o", str(tmp_path)), "--case")
    assert_usage_error(
        cli("validate", "wifi", "--seeds", "0", "-o", str(tmp_path)), "--seeds", "[1, 1000]"
    )
    assert_usage_error(
        cli("validate", "wifi", "--duration", "50", "-o", str(tmp_path)),
        "--duration",
        "--rerun-ns3",
    )
    missing = tmp_path / "nowhere.jsonl.gz"
    grid = wifi.make_grid([H8_RTS1.name])
    with pytest.raises(ValidateError, match="missing"):
        wifi.validate(grid, tmp_path, stored=[missing], progress=False)


@requires_ns3
def test_the_reference_program_reproduces_its_stored_run(tmp_path: Path):
    # The stored runs are the program's output: a fresh run of the shortest cell, with
    # the arguments of its resolved scenario, matches apart from the wall time.
    cell = next(c for c in wifi.CELLS if c.name == "h1-rts1-tcpnewreno-d2")
    binary = ns3mod.build_program(ns3mod.WIFI_PROGRAM, cache=tmp_path / "cache")
    proc = run_process([str(binary.path), *wifi_args(_expanded(cell), 1)])
    assert proc.returncode == 0, proc.stderr
    got = parse_output(proc.stdout)
    stored = read_records(wifi.stored_ns3_runs_path(), wifi.record_key)
    rec = stored[wifi.run_key(NS3, cell.name, 1, 100.0, binary.results_hash)]

    def strip(d: dict, *keys: str) -> dict:
        return {k: v for k, v in d.items() if k not in keys}

    assert strip(got["result"], "wall_s") == strip(rec["result"], "wall_s")
    assert got["config"] == rec["config"]


def test_quick_without_out_leaves_the_stored_full_report_alone(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Without --out, --quick writes to the family's quick/ folder: the full grid's
    report in validation/wifi (here a stand-in) is not replaced."""
    monkeypatch.chdir(tmp_path)
    full = tmp_path / "validation" / "wifi" / "report.md"
    full.parent.mkdir(parents=True)
    full.write_text("the full grid's report\n")
    res = cli("validate", "wifi", "--quick", "--quiet")
    assert res.exit_code == 0, res.output + res.stderr
    assert full.read_text() == "the full grid's report\n"
    assert "4 of 4 cells agree" in (full.parent / "quick" / "report.md").read_text()
