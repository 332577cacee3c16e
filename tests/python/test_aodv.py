"""AODV routing on 802.11 media (``routing = "aodv"``): what a scenario gets, the
errors of the field, and the AODV validation against ns-3's stored runs (no ns-3
needed). The protocol's rules are tested in Rust (crates/vtlab-core/src/net/routing)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

import vtlab
from conftest import assert_usage_error
from vtlab.validation import wifi_aodv
from vtlab.validation.cache import read_records
from vtlab.validation.runner import NS3

Cli = Callable[..., Result]


def _street(routing: str, gw_x: float) -> dict:
    """Two cars 200 m apart and a gateway at ``gw_x`` on one medium, a server behind it."""
    return {
        "preset": "custom",
        "nodes": ["a", "b", "gw", "server"],
        "media": [
            {
                "nodes": ["a", "b", "gw"],
                "mobility": [{"x_m": 0, "y_m": 0}, {"x_m": 200, "y_m": 0}, {"x_m": gw_x, "y_m": 0}],
                "routing": routing,
            }
        ],
        "links": [{"a": "gw", "b": "server", "rate": "100Mbps", "delay": "10ms"}],
        "flows": [{"src": "a", "dst": "server", "bytes": "20kB"}],
        "stop": "20s",
    }


def test_static_is_the_default_and_keeps_the_scenario_s_identity():
    chain = {"preset": "vanet-chain", "hops": 2, "stop": "3s"}
    plain = vtlab.run(chain, seed=3)
    static = vtlab.run({**chain, "routing": "static"}, seed=3)
    aodv = vtlab.run({**chain, "routing": "aodv"}, seed=3)
    assert static.meta["scenario_hash"] == plain.meta["scenario_hash"]
    assert static.flows["goodput_bps"].tolist() == plain.flows["goodput_bps"].tolist()
    assert aodv.meta["scenario_hash"] != plain.meta["scenario_hash"]


def test_aodv_finds_the_relay_of_a_custom_medium():
    # The gateway at 400 m is out of a's 250 m range: b relays, found by AODV.
    r = vtlab.run(_street("aodv", 400), seed=1)
    assert bool(r.flows["completed"].iloc[0])
    relay = r.links[(r.links["link"] == "wifi0") & (r.links["direction"] == "b")]
    assert int(relay["packets_carried"].iloc[0]) > 0


def test_without_a_path_aodv_drops_what_waited_for_a_route():
    # Static routes refuse a flow without a path before the run; AODV accepts it
    # (every station pair is one hop for the plan) and its searches fail: the
    # packets that waited are dropped, nothing arrives.
    r = vtlab.run(_street("aodv", 1400), seed=1)
    assert not bool(r.flows["completed"].iloc[0])
    assert r.flows["goodput_bps"].iloc[0] == 0
    assert r.flows["drops_link_error"].iloc[0] > 0


def test_an_unknown_routing_is_one_line_naming_the_field(cli: Cli, tmp_path: Path):
    res = cli("run", "vanet-chain", "--set", "routing=ospf")
    assert_usage_error(res, 'routing: unknown routing "ospf" (allowed: static, aodv)')
    spec = tmp_path / "s.toml"
    spec.write_text(
        'preset = "custom"\nnodes = ["a", "b"]\n[[media]]\nnodes = ["a", "b"]\n'
        'mobility = [{x_m = 0, y_m = 0}, {x_m = 100, y_m = 0}]\nrouting = "ospf"\n'
        '[[flows]]\nsrc = "a"\ndst = "b"\nbytes = "1kB"\n'
    )
    res = cli("run", "-s", str(spec))
    assert_usage_error(res, "media[0].routing: unknown routing")


def test_the_stored_ns3_runs_are_today_s_and_validate_without_ns3(tmp_path: Path):
    stored = read_records(wifi_aodv.stored_ns3_runs_path(), wifi_aodv.record_key)
    h = wifi_aodv.ns3_hash()
    assert set(stored) == {
        wifi_aodv.wifi.run_key(NS3, c.name, r, 100.0, h)
        for c in wifi_aodv.CELLS
        for r in wifi_aodv.NS3_RUNS
    }
    res = wifi_aodv.validate(wifi_aodv.make_grid(quick=True, seeds=1), tmp_path, progress=False)
    assert (len(res.table), res.runs_done, res.errors) == (2, 2, [])
    assert (tmp_path / "report.md").read_text().count("-aodv |") == 2


def test_the_validation_s_cases_are_checked(cli: Cli, tmp_path: Path):
    res = cli("validate", "wifi-aodv", "--case", "h3-rts1-aodv", "--out", str(tmp_path))
    assert_usage_error(res, "--case: unknown case 'h3-rts1-aodv' (allowed: h1-rts0-aodv")
