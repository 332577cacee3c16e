"""Property tests over the features added after the first property suite: queue discs
and byte queue limits, request/response sessions, LTE (the channel model, mahimahi
traces, byte-limited buffers), 802.11 chains. Every drawn scenario is valid; every run
must keep the sanity rules of feature_checks.py (goodput within capacity, completion
within its loss-free bound, abort reasons, bytes and packets conserved), with bounds
derived by hand from the resolved scenario. Hypothesis draws the same examples on
every run (conftest.py's repeatable profile)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from feature_checks import (
    check_chain,
    check_flow_rows,
    check_links,
    check_sessions,
    check_transfer_bounds,
    rows,
)
from feature_props import (
    NS,
    Net,
    chain_scenarios,
    expand,
    lte_scenarios,
    p2p_scenarios,
    sessions,
)
from vtlab import _core

seeds = st.integers(0, 2**64 - 1)


def props(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )


def run(spec: dict[str, Any], seed: int, **kwargs: Any) -> dict[str, Any]:
    return _core.run(json.dumps(spec), seed, **kwargs)


def check_run(spec: dict[str, Any], seed: int, out: dict[str, Any]) -> None:
    """Every rule of feature_checks.py on one run's rows."""
    x = expand(spec)
    flows, links = rows(out["flows"]), rows(out["links"])
    check_flow_rows(x, flows, sessions_too=False)
    if x.get("media"):
        check_chain(x, flows, links)
    else:
        check_transfer_bounds(Net(spec, seed, round(out["meta"]["sim_time_s"] * NS)), flows)
    check_links(x, links, flows)
    check_sessions(Net(spec, seed, 0), out, flows)
    outcomes(flows, links, rows(out["sessions"]))


def outcomes(flows: list[dict], links: list[dict], sessions: list[dict]) -> None:
    """What the drawn runs exercised (`pytest --hypothesis-show-statistics`)."""
    for f in flows:
        event(f"flow {'completed' if f['completed'] else 'incomplete: ' + f['abort_reason']}")
    for s in sessions:
        event(f"session {'completed' if s['completed'] else 'ended: ' + s['abort_reason']}")
    for col in ("drops_queue", "qdisc_drops_aqm", "drops_link_error", "drops_harq", "mac_retries"):
        if any(r[col] for r in links):
            event(f"links with {col}")


@props(400)
@given(p2p_scenarios(), seeds)
def test_queue_discs_and_sessions_keep_the_sanity_rules(spec, seed):
    check_run(spec, seed, run(spec, seed))


@props(200)
@given(lte_scenarios(), seeds)
def test_lte_traces_and_channel_keep_the_sanity_rules(spec, seed):
    check_run(spec, seed, run(spec, seed))


@props(200)
@given(chain_scenarios(), seeds)
def test_80211_chains_keep_the_sanity_rules(spec, seed):
    check_run(spec, seed, run(spec, seed))


@st.composite
def unfinished_sessions(draw: Any) -> dict[str, Any]:
    """Sessions that often end early: deadlines shorter than a loss-free exchange
    (a 2-6 kB request alone takes 1.6 ms or more at 10 Mbit/s, plus 1.8 ms of
    propagation; the deadline is 1 or 3 ms), lossy cables, short stops."""
    session = draw(sessions())
    if draw(st.booleans()):
        session = {
            "profile": "custom",
            "steps": [
                {
                    "name": "big",
                    "request": draw(st.integers(2000, 6000)),
                    "response": draw(st.integers(1, 3000)),
                    "timeout": draw(st.sampled_from(["1ms", "3ms"])),
                    "repeats": draw(st.integers(1, 20)),
                }
            ],
        }
    session["abort_on_miss"] = True
    spec = {
        "preset": draw(st.sampled_from(["v2g", "station"])),
        "session": session,
        "loss": {"mean_loss": draw(st.sampled_from(["0%", "5%", "20%", "40%"]))},
        "stop": draw(st.sampled_from(["200ms", "2s"])),
    }
    if spec["preset"] == "station":
        spec["vehicles"] = 2
    if draw(st.booleans()):
        spec["bytes"] = 300_000
    return spec


@props(60)
@given(unfinished_sessions(), seeds)
def test_every_incomplete_session_flow_has_an_abort_reason(spec, seed):
    flows = rows(run(spec, seed)["flows"])
    check_flow_rows(expand(spec), flows, sessions_too=True)
