"""The examples gallery: every ``examples/*.toml`` runs through ``vtlab run --scenario
FILE --json`` with exit 0, and shows what its header says.

The expected flow names, bottleneck rates and message counts are derived by hand from
each file (the comments say how), not from a run.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from conftest import V2G_IDEAL_GOODPUT
from vtlab.scenario import _tomllib

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FILES = sorted(p.name for p in EXAMPLES.glob("*.toml"))

#: The 1504-byte opportunity once per ms of examples/cell-12mbps.down: 12.032 Mbit/s.
TRACE_RATE = 1504 * 8 / 1e-3

#: file → (flow names, a rate in bit/s no flow's goodput can reach).  Flow names come
#: from the preset's naming rule (docs/scenarios.md) or, for ``custom``, the file's
#: ``[[flows]]``; the rate is the file's bottleneck link (a flow's payload crosses it
#: with headers, so goodput stays below it).
EXPECTED: dict[str, tuple[list[str], float]] = {
    "custom-medium.toml": (["a-up", "b-up", "c-up"], 12e6),  # the 12 Mbit/s 802.11g medium
    "lte-cabin-trace.toml": (["down"], TRACE_RATE),
    # The default 10 MHz cell (50 RBs) peaks at 75 Mbit/s (docs/cellular.md, `share`).
    "lte-cabin.toml": (["down", "up"], 75e6),
    "qdisc-codel.toml": (["first", "second"], 10e6),  # the 10 Mbit/s plc link
    "qdisc-fq-codel.toml": (["evcc"], V2G_IDEAL_GOODPUT),
    "qdisc-pie.toml": (["ev1", "ev2", "ev3"], 10e6),  # one 10 Mbit/s segment
    "qdisc-red.toml": (["newreno-1", "newreno-2"], 5e6),  # the 5 Mbit/s wireless hop
    "station-sessions.toml": (
        ["ev1", "ev2", "ev3", "ev4"]
        + [f"ev{i}/{d}" for i in range(1, 5) for d in ("requests", "responses")],
        10e6,
    ),
    "station.toml": ([f"ev{i}" for i in range(1, 7)], 10e6),
    "v2g-5pct.toml": (["evcc"], V2G_IDEAL_GOODPUT),
    "v2g-iso15118.toml": (["session/requests", "session/responses"], 10e6),
    "vanet-chain.toml": (["tcp"], 1e6),  # 802.11b at 1 Mbit/s
    "wired-wireless-groups.toml": (
        ["newreno-lp-1", "newreno-lp-2", "newreno-lp-3", "newreno-1", "newreno-2"],
        5e6,  # the 5 Mbit/s wired hop
    ),
    "wired-wireless.toml": (["download"], 5e6),  # the 5 Mbit/s wireless link
}

#: file → {session: exchanges}, counted from the profile table of docs/scenarios.md.
SESSIONS: dict[str, dict[str, int]] = {
    # iso15118-2-dc, pnc, 5 s loop: SupportedAppProtocol, SessionSetup, ServiceDiscovery,
    # PaymentServiceSelection, Authorization, ChargeParameterDiscovery (6) + the two TLS
    # handshake exchanges (2) + PaymentDetails (1) + CableCheck, PreCharge (2) +
    # PowerDelivery (1) + CurrentDemand ⌈5 / 0.22⌉ = 23 + PowerDelivery, WeldingDetection,
    # SessionStop (3) = 38.
    "v2g-iso15118.toml": {"session": 38},
    # din70121-dc, 2 s loop, cable_check 0.5 s: 6 + CableCheck ⌊0.5 / 0.25⌋ + 1 = 3 +
    # PreCharge 1 + PowerDelivery 1 + CurrentDemand ⌈2 / 0.22⌉ = 10 + 3 = 24, per vehicle.
    "station-sessions.toml": {f"ev{i}": 24 for i in range(1, 5)},
}


def test_every_example_has_its_expectations():
    assert sorted(EXPECTED) == FILES
    assert (EXAMPLES / "cell-12mbps.down").stat().st_size < 8192


def test_custom_flow_names_are_the_files():
    for name, (flows, _) in EXPECTED.items():
        spec = _tomllib().loads((EXAMPLES / name).read_text())
        if spec["preset"] == "custom" and "flows" in spec:
            assert flows == [f["name"] for f in spec["flows"]], name


@pytest.mark.parametrize("name", FILES)
def test_example_runs(cli, name):
    path = EXAMPLES / name
    text = path.read_text()
    assert text.startswith("# ") and f"vtlab run --scenario examples/{name}" in text
    result = cli("run", "--scenario", str(path), "--json")
    assert result.exit_code == 0, result.output + result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    flows = [r for r in rows if "table" not in r]
    flow_names, rate = EXPECTED[name]
    assert [r["flow"] for r in flows] == flow_names
    for r in flows:
        assert r["completed"], r
        assert 0 < r["goodput_bps"] < rate, r
    sessions = {r["session"]: r for r in rows if r.get("table") == "sessions"}
    expected = SESSIONS.get(name, {})
    assert sorted(sessions) == sorted(expected)
    for session, messages in expected.items():
        assert sessions[session]["completed"] and sessions[session]["messages"] == messages


def test_trace_rate_is_one_opportunity_per_ms():
    times = [int(t) for t in (EXAMPLES / "cell-12mbps.down").read_text().split()]
    assert times == list(range(1, 1001))
    assert math.isclose(TRACE_RATE, 12.032e6)


def test_quick_look_notebook_runs() -> None:
    """examples/quick-look.ipynb executes in a real Jupyter kernel (nbclient, ipykernel)
    without an error, shows its Result and figure, and its numbers are possible: the
    resolved links are the preset's 500 Mbit/s wan and 10 Mbit/s plc (docs/scenarios.md),
    every mean goodput is below the cable's ideal goodput, and the trace's largest
    cwnd is at least the initial window of 10 segments of 1448 B."""
    import nbclient  # the dev extra's; a missing one fails the test
    import nbformat

    nb = nbformat.read(EXAMPLES / "quick-look.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    outs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outs if o.output_type == "error"]
    data = [o.get("data", {}) for o in outs]
    assert data[0]["text/plain"] == "[('wan', 500000000), ('plc', 10000000)]"
    assert any("<b>vtlab Result</b>: 5 run(s)" in d.get("text/html", "") for d in data)
    assert any("image/png" in d for d in data)
    means = [line.split() for d in data for line in d.get("text/plain", "").splitlines()]
    goodputs = [float(w[4]) for w in means if len(w) == 7 and w[2] == "goodput_bps"]
    assert len(goodputs) == 4  # the cubic summary, then newreno, cubic, bbr
    assert all(0 < g < V2G_IDEAL_GOODPUT for g in goodputs)
    cwnd = [line.split() for d in data for line in d.get("text/plain", "").splitlines()]
    assert any(w[0] == "cwnd" and float(w[1]) >= 10 * 1448 for w in cwnd if len(w) == 2)
