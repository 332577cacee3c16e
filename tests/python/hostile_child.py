"""Property-based hostile input, run by test_properties.py in a child process that
has a memory limit (so an allocation bomb fails the test instead of the machine).

For every generated scenario the core must either run it and return sane rows, or
refuse it with a one-line ScenarioError naming a field. Usage:
``python hostile_child.py N_EXAMPLES SEED``.
"""

from __future__ import annotations

import json
import math
import resource
import sys

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))

from vtlab import _core  # noqa: E402 - after the memory limit, on purpose

CCS = [c["name"] for c in _core.congestion_controls()]
PARAMS = {c["name"]: [p["name"] for p in c["params"]] for c in _core.congestion_controls()}

numbers = st.one_of(
    st.integers(-10, 10**7),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e12),
    st.sampled_from([0, 1, 2**32, 2**63, 2**64 - 1, 10**30, -1, 1e-12, 0.5]),
)


# Each value has a valid and a hostile strategy. A generated scenario is valid
# except, half of the time, in one field chosen at random: so both the checks
# (one hostile field at a time, each must be named) and the runs (the rows of
# valid scenarios must be sane) are exercised in volume.
rates = (
    st.sampled_from(["1bps", "1kbps", "56kbps", "1Mbps", "10Mbps", "1Gbps"]),
    st.one_of(st.sampled_from(["0Mbps", "-5Mbps", "10 Mbit/s", "fast", "", "1e3Mbps"]), numbers),
)
durations = (
    st.sampled_from(["0s", "1ns", "1us", "0.9ms", "10ms", "1s", "100s", "30min"]),
    st.one_of(st.sampled_from(["-1ms", "x", "1e30s", "1w"]), numbers),
)
sizes = (
    st.one_of(st.sampled_from(["1B", "1kB", "100kB", "1.5kB", "1MB"]), st.integers(1, 500_000)),
    st.one_of(st.sampled_from(["0B", "-1kB", "1e3B", "lots"]), st.integers(-5, 2_000_000)),
)
fractions = (
    st.one_of(
        st.sampled_from(["0%", "0.25%", "1%", "5%", "30%", "90%", "99.9%"]),
        st.floats(min_value=0, max_value=0.999),
    ),
    st.one_of(
        st.sampled_from(["100%", "150%", "-1%"]),
        st.floats(min_value=-0.5, max_value=1.5, allow_nan=False),
    ),
)
FIELDS = [
    "preset", "bytes", "rate", "delay", "loss", "model", "mean_loss", "sojourn", "burst",
    "cc", "cc_params", "tcp", "topology", "count", "limits", "cell",
]  # fmt: skip


def pick(draw, bad, name, pair):
    """Draw from the valid strategy of `pair`, or from the hostile one if `name` is
    the scenario's bad field."""
    return draw(pair[1] if bad == name else pair[0])


@st.composite
def losses(draw, bad):
    model = pick(draw, bad, "model", (st.sampled_from([None, "none", "bernoulli", "burst"]),
                                      st.sampled_from(["x", 3, ""])))  # fmt: skip
    if draw(st.integers(0, 3)) == 0:
        return {
            "model": "gilbert-elliott",
            "mean_good": pick(draw, bad, "sojourn", (st.floats(1e-3, 10), numbers)),
            "mean_bad": draw(st.floats(1e-3, 1)),
            "sojourn": pick(draw, bad, "sojourn", (st.just("time"), st.just("fortnights"))),
            "loss_bad": pick(draw, bad, "mean_loss", fractions),
        }
    spec = {} if model is None else {"model": model}
    if model in ("bernoulli", "burst", None) and draw(st.booleans()):
        spec["mean_loss"] = pick(draw, bad, "mean_loss", fractions)
    if bad == "burst":
        key = draw(st.sampled_from(["burst_start", "burst_min", "burst_max"]))
        spec["model"] = "burst"
        spec[key] = draw(st.one_of(fractions[1], st.integers(-1, 20_000)))
    return spec


@st.composite
def cells(draw, bad):
    """lte-cabin fields: the channel model's inputs, a trace, the buffer, a short run."""
    spec = {
        "stop": draw(st.sampled_from(["200ms", "1s", "3s"])),
        "direction": draw(st.sampled_from(["downlink", "uplink", "both"])),
        "speed_kmh": pick(draw, bad, "cell", (st.floats(0, 200),
                                               st.one_of(st.just(-5.0), st.just("fast"), numbers))),
        "rsrp_dbm": pick(draw, bad, "cell", (st.floats(-115, -60),
                                              st.one_of(st.just(-400.0), numbers))),
        "buffer": pick(draw, bad, "cell", sizes),
        "adaptive": draw(st.booleans()),
    }  # fmt: skip
    if draw(st.integers(0, 3)) == 0:
        good = st.lists(st.integers(0, 50), min_size=1, max_size=40).map(
            lambda xs: sorted(xs) + [max(xs) + 1]
        )
        hostile = st.one_of(st.just([]), st.just([0]), st.just([5, 3]), st.just(["x"]))
        spec["capacity_down"] = {"trace_ms": pick(draw, bad, "cell", (good, hostile))}
    if bad == "cell" and draw(st.booleans()):
        spec["channel"] = {draw(st.sampled_from(["share", "bler", "bandwidth_rb", "harq_max_tx"])):
                           draw(st.one_of(numbers, st.integers(-1, 200)))}  # fmt: skip
    return spec


@st.composite
def chains(draw, bad):
    """vanet-chain fields: the geometry, the radio, the MAC, the error model, a short run."""
    spec = {
        "stop": draw(st.sampled_from(["1200ms", "3s", "6s"])),
        "hops": pick(draw, bad, "count", (st.integers(1, 10), st.integers(-1, 10**6))),
        "spacing_m": pick(draw, bad, "cell", (st.floats(1, 400), st.one_of(st.just(-1.0), numbers))),  # noqa: E501
        "speed_kmh": pick(draw, bad, "cell", (st.floats(0, 200), st.just("fast"))),
        "ifq": pick(draw, bad, "limits", (st.integers(1, 60), st.integers(-1, 2_000_000))),
        "rts": draw(st.booleans()),
        "delack": draw(st.integers(1, 2)),
    }  # fmt: skip
    if draw(st.integers(0, 2)) == 0:
        spec["error_rate"] = pick(
            draw,
            bad,
            "loss",
            (st.sampled_from(["5%", "20%"]), st.sampled_from(["100%", "-1%", "x"])),
        )
    if draw(st.integers(0, 2)) == 0:
        good = st.fixed_dictionaries(
            {},
            optional={
                "standard": st.sampled_from(["b", "a", "g"]),
                "tx_power_dbm": st.floats(0, 30),
                "cw_min": st.sampled_from([7, 15, 31]),
                "error_burst": st.sampled_from(["1ms", "50ms"]),
                "reception": st.just({"model": "dsss-ber", "preamble_snr_db": 4}),
            },
        )
        hostile = st.fixed_dictionaries(
            {},
            optional={
                "rate": st.sampled_from(["3Mbps", "0bps", "x"]),
                "cw_max": st.integers(-1, 10**6),
                "error_burst": durations[1],
                "rx_sensitivity_dbm": numbers,
                "propagation": st.just({"model": "friis", "frequency_hz": -1}),
            },
        )
        spec["wifi"] = pick(draw, bad, "cell", (good, hostile))
    return spec


@st.composite
def tcps(draw, bad):
    cc = pick(draw, bad, "cc", (st.sampled_from(CCS), st.sampled_from(["bogus", "", 7])))
    spec = {"cc": cc}
    optional = [
        ("profile", st.sampled_from(["ns3", "linux"]), st.sampled_from(["windows", 1])),
        ("recovery", st.sampled_from(["tahoe", "reno", "newreno", "sack"]), st.just("magic")),
        ("prr", st.booleans(), st.just("yes")),
        ("mss", st.integers(500, 9000), st.integers(-1, 70_000)),
        ("send_buffer", st.integers(64_000, 4_000_000), sizes[1]),
        ("recv_buffer", st.integers(64_000, 4_000_000), sizes[1]),
        ("initial_cwnd", st.integers(1, 100), st.integers(-1, 2_000_000)),
        ("dupack_threshold", st.integers(1, 10), st.integers(-1, 2_000)),
        ("timestamps", st.booleans(), st.just(2)),
        ("delayed_ack", st.booleans(), st.just("no")),
        ("rto_min", st.sampled_from(["200ms", "1s"]), durations[1]),
        ("syn_timeout", st.sampled_from(["1s", "3s"]), durations[1]),
    ]
    for key, valid, _hostile in optional:
        if draw(st.integers(0, 8)) == 0:
            spec[key] = draw(valid)
    if bad == "tcp":
        key, _, hostile = draw(st.sampled_from(optional))
        spec[key] = draw(hostile)
    if PARAMS.get(cc) and (bad == "cc_params" or draw(st.integers(0, 3)) == 0):
        name = draw(st.sampled_from(PARAMS[cc] + (["nope"] if bad == "cc_params" else [])))
        spec["cc_params"] = {name: draw(numbers if bad == "cc_params" else st.floats(0.1, 10))}
    return spec


@st.composite
def scenarios(draw):
    bad = draw(st.one_of(st.none(), st.sampled_from(FIELDS)))
    presets = st.sampled_from(
        ["v2g", "station", "wired-wireless", "custom", "lte-cabin", "vanet-chain"]
    )
    preset = pick(draw, bad, "preset", (presets, st.sampled_from(["lunar", "", None])))
    spec: dict = {"preset": preset, "bytes": pick(draw, bad, "bytes", sizes)}
    if preset == "custom":
        ends = (st.just("c"), st.sampled_from(["a", "z"]))
        spec["nodes"] = ["a", "b", "c"]
        spec["links"] = [
            {"a": "a", "b": "b", "rate": pick(draw, bad, "rate", rates),
             "delay": pick(draw, bad, "delay", durations)},
            {"a": "b", "b": pick(draw, bad, "topology", ends), "rate": draw(rates[0]),
             "delay": draw(durations[0]), "loss_ab": draw(losses(bad))},
        ]  # fmt: skip
        spec["flows"] = [{"src": "a", "dst": pick(draw, bad, "topology", ends)}]
    elif preset == "lte-cabin":
        spec.update(draw(cells(bad)))
    elif preset == "vanet-chain":
        spec.update(draw(chains(bad)))
    else:
        spec["loss"] = draw(losses(bad))
    if preset == "v2g":
        spec["plc_rate"] = pick(draw, bad, "rate", rates)
        spec["plc_delay"] = pick(draw, bad, "delay", durations)
    if preset == "station":
        spec["vehicles"] = pick(draw, bad, "count", (st.integers(1, 30), st.integers(-1, 10**6)))
        spec["vehicles_per_segment"] = draw(st.integers(1, 5))
    if preset == "wired-wireless":
        n = pick(draw, bad, "count", (st.integers(1, 300), st.integers(-1, 200_000)))
        spec["groups"] = [{"flows": n, "stagger": pick(draw, bad, "delay", durations)}]
    spec["tcp"] = draw(tcps(bad))
    if preset != "custom" and bad == "limits":
        key, strat = draw(
            st.sampled_from(
                [
                    ("queue_packets", st.integers(-1, 2_000_000)),
                    ("framing_bytes", st.integers(-1, 2**32)),
                    ("stop", durations[1]),
                    ("max_events", st.integers(-1, 10**13)),
                    ("trace_interval", durations[1]),
                ]
            )
        )
        spec[key] = draw(strat)
    return spec


def min_rate(expanded: dict) -> float:
    """The slowest rate-based link direction: a bound on any flow's goodput (a cellular
    direction's capacity has no fixed rate; its other links still bound the flow)."""
    rates = [
        link["rate_bps"]
        for link in expanded["links"]
        if not (link.get("capacity_ab") and link.get("capacity_ba"))
    ]
    rates += [m["wifi"]["data_rate_kbps"] * 1000 for m in expanded.get("media", [])]
    return min(rates)


counts = {"ran": 0, "refused": 0}


@settings(
    max_examples=int(sys.argv[1]),
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@seed(int(sys.argv[2]))
@given(scenarios(), st.integers(0, 2**64 - 1))
def check(spec, run_seed):
    text = json.dumps(spec)
    try:
        expanded = json.loads(_core.expand(text))
        out = _core.run(text, run_seed)
    except _core.ScenarioError as e:
        msg = str(e)
        assert "\n" not in msg and msg.strip(), msg
        assert len(msg) < 600, msg
        counts["refused"] += 1
        if len(sys.argv) > 3:
            print(msg)
        return
    counts["ran"] += 1
    f = out["flows"]
    bound = min_rate(expanded)
    for i in range(len(f["flow"])):
        goodput, done, secs = f["goodput_bps"][i], f["completed"][i], f["completion_s"][i]
        assert 0 <= goodput <= bound * 1.000001, (spec, goodput, bound)
        if done:
            assert f["abort_reason"][i] == ""
            # The payload alone needs bytes·8/rate on the slowest link.
            assert math.isfinite(secs) and secs >= f["bytes"][i] * 8 / bound * 0.999999, spec
        else:
            assert math.isnan(secs) and f["abort_reason"][i], spec
        assert f["retransmissions"][i] <= f["segments_sent"][i]
    assert out["meta"]["sim_time_s"] <= 31 * 86400 + 1


if __name__ == "__main__":
    check()
    print(json.dumps(counts))
