"""Request/response sessions from Python and the command line: the ``sessions`` and
``messages`` tables of :class:`vtlab.Result` (lazy, concatenated, written beside
``--out`` and read back), the run command's session table, ``--json`` session rows,
``--session`` and ``--set session.*``; the exchange count of a DC session and the
response times of a custom one, both derived by hand."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import Result as CliResult

import vtlab
from conftest import assert_usage_error
from vtlab import _core
from vtlab.api import FLOW_COLUMNS, MESSAGE_COLUMNS, SESSION_COLUMNS, Result, sibling_paths

Cli = Callable[..., CliResult]

#: A loss-free ISO 15118-2 DC session whose charging loop lasts 10 s.
DC_10S = {"preset": "v2g", "session": {"profile": "iso15118-2-dc", "duration": "10s"}}

#: The exchanges of that session, from the message list of crates/vtlab-core/src/
#: spec/session.rs (profile iso15118-2-dc, payment eim, no TLS):
#:   SupportedAppProtocol, SessionSetup, ServiceDiscovery, PaymentServiceSelection,
#:   Authorization, ChargeParameterDiscovery                        6 exchanges
#:   CableCheck and PreCharge: cable_check = pre_charge = 0 (default), so
#:   0 // poll + 1 = 1 exchange each                                2 exchanges
#:   PowerDelivery (start)                                          1 exchange
#:   CurrentDemand: duration / period rounded up, 10 s / 220 ms
#:   = 45.45... -> 46                                              46 exchanges
#:   PowerDelivery (stop), WeldingDetection, SessionStop            3 exchanges
#: in all 6 + 2 + 1 + 46 + 3 = 58.
DC_10S_LOOP = math.ceil(10 / 0.22)
DC_10S_EXCHANGES = 6 + 2 + 1 + DC_10S_LOOP + 3


@pytest.fixture(scope="module")
def dc() -> Result:
    return vtlab.run(DC_10S, seed=1)


# -- the API ---------------------------------------------------------------------------


def test_schema_and_the_run_return_the_two_tables(dc: Result) -> None:
    assert {"sessions", "messages"} <= set(_core.schema())
    raw = _core.run(vtlab.Scenario(DC_10S).to_json(), 1)
    assert {"sessions", "messages"} <= set(raw)
    assert tuple(dc.sessions.columns) == SESSION_COLUMNS
    assert tuple(dc.messages.columns) == MESSAGE_COLUMNS
    assert SESSION_COLUMNS[:3] == MESSAGE_COLUMNS[:3] == ("scenario_hash", "seed", "version")
    # The session's two directions are flows of their own.
    assert list(dc.flows["flow"]) == ["session/requests", "session/responses"]
    assert "sessions=<1 rows>" in repr(dc) and f"messages=<{DC_10S_EXCHANGES} rows>" in repr(dc)


def test_loss_free_dc_session_completes_with_the_hand_counted_exchanges(dc: Result) -> None:
    s = dc.sessions.iloc[0]
    assert bool(s["completed"]) and s["abort_reason"] == "" and s["failed_message"] == ""
    assert s["profile"] == "iso15118-2-dc" and s["deadline_misses"] == 0
    assert s["messages"] == DC_10S_EXCHANGES == 58
    m = dc.messages
    assert len(m) == DC_10S_EXCHANGES
    assert list(m["index"]) == list(range(DC_10S_EXCHANGES))
    counts = m["message"].value_counts()
    assert counts["CurrentDemand"] == DC_10S_LOOP == 46
    assert counts["PowerDelivery"] == 2
    assert list(m["message"].iloc[:9]) == [
        "SupportedAppProtocol",
        "SessionSetup",
        "ServiceDiscovery",
        "PaymentServiceSelection",
        "Authorization",
        "ChargeParameterDiscovery",
        "CableCheck",
        "PreCharge",
        "PowerDelivery",
    ]
    assert list(m["message"].iloc[-3:]) == ["PowerDelivery", "WeldingDetection", "SessionStop"]
    assert not m["missed"].any() and m["response_time_s"].notna().all()
    # CurrentDemand's deadline is V2G_EVCC_Msg_Timeout = 250 ms; its requests are
    # 220 ms apart (each is written 220 ms after the previous one, the response
    # having come long before).
    loop = m[m["message"] == "CurrentDemand"]
    assert (loop["deadline_s"] == 0.25).all()
    assert loop["request_s"].diff().dropna().to_numpy() == pytest.approx(0.22, abs=1e-9)
    # Energy flows from the first CurrentDemand request on.
    assert s["time_to_energy_s"] == pytest.approx(loop["request_s"].iloc[0], abs=1e-12)


def test_custom_session_response_times_by_hand() -> None:
    """Derivation (crates/vtlab-core/tests/sessions.rs, checked there against ns-3.44):
    a 100 B message with 40 B TCP/IP headers, 12 B timestamp option and 2 B framing is
    154 B on the 10 Mbit/s PLC: 154 * 8 / 1e7 = 123.2 us to send, + 0.9 ms to cross =
    1.0232 ms one way, 2.0464 ms for request + response. The first exchange also waits
    behind two 54 B pure ACKs (the vehicle's handshake ACK, the charger's immediate
    ACK of the first data segment), 43.2 us each: 2 * (43.2 + 123.2 + 900) us =
    2.1328 ms."""
    res = vtlab.run(
        {
            "preset": "v2g",
            "session": {
                "profile": "custom",
                "steps": [{"name": "A", "request": 100, "response": 100, "repeats": 4}],
            },
        }
    )
    times = res.messages["response_time_s"].to_numpy()
    one_way = (100 + 40 + 12 + 2) * 8 / 10e6 + 0.9e-3
    ack = (40 + 12 + 2) * 8 / 10e6
    assert times[0] == pytest.approx(2 * (ack + one_way), abs=1e-12)
    assert times[0] == pytest.approx(2.1328e-3, abs=1e-12)
    assert times[1:] == pytest.approx([2 * one_way] * 3, abs=1e-12)
    assert times[1] == pytest.approx(2.0464e-3, abs=1e-12)
    s = res.sessions.iloc[0]
    assert s["profile"] == "custom" and bool(s["completed"]) and s["messages"] == 4
    # No charging loop: no loop percentiles, no time to energy.
    assert math.isnan(s["loop_p99_s"]) and math.isnan(s["time_to_energy_s"])


def test_a_run_without_sessions_has_empty_tables_with_the_columns() -> None:
    res = vtlab.run({"preset": "v2g", "bytes": "200kB"})
    assert not res.has_sessions() and res.session_records() == []
    assert res.sessions.empty and tuple(res.sessions.columns) == SESSION_COLUMNS
    assert res.messages.empty and tuple(res.messages.columns) == MESSAGE_COLUMNS


def test_run_many_concatenates_the_session_rows() -> None:
    res = vtlab.run_many(DC_10S, seeds=[3, 4, 5], progress=False)
    assert list(res.sessions["seed"]) == [3, 4, 5]
    assert len(res.messages) == 3 * DC_10S_EXCHANGES
    assert res.has_sessions() and len(res.session_records()) == 3
    # Mixed with a run without sessions: only the session rows are kept.
    mixed = Result.concat([vtlab.run({"preset": "v2g", "bytes": "200kB"}), res])
    assert len(mixed.sessions) == 3 and len(mixed.flows) == 1 + 6


def test_parquet_round_trip_writes_the_sibling_files(tmp_path: Path, dc: Result) -> None:
    out = tmp_path / "res.parquet"
    written = dc.to_parquet(out)
    assert written == {
        "flows": out,
        "links": tmp_path / "res.links.parquet",
        "sessions": tmp_path / "res.sessions.parquet",
        "messages": tmp_path / "res.messages.parquet",
    }
    assert sibling_paths(out)["sessions"] == written["sessions"]
    back = Result.from_parquet(out)
    pd.testing.assert_frame_equal(back.sessions, dc.sessions, check_dtype=False)
    pd.testing.assert_frame_equal(back.messages, dc.messages, check_dtype=False)
    pd.testing.assert_frame_equal(back.flows, dc.flows, check_dtype=False)
    # A result without sessions written to the same name leaves no stale files that
    # would be read back with it.
    vtlab.run({"preset": "v2g", "bytes": "200kB"}).to_parquet(out)
    assert not written["sessions"].exists() and not written["messages"].exists()
    assert Result.from_parquet(out).sessions.empty


# -- the command line ------------------------------------------------------------------


def test_run_prints_a_session_table_after_the_flows(cli: Cli) -> None:
    res = cli(
        "run", "v2g", "--session", "iso15118-2-dc", "--set", "session.duration=10s", "-n", "2"
    )
    assert res.exit_code == 0, res.output + res.stderr
    text = res.stdout
    assert text.index("vtlab: mean ± 95 % CI over 2 runs") < text.index(
        "sessions: mean ± 95 % CI over 2 runs"
    )
    row = next(ln for ln in text.splitlines() if "iso15118-2-dc" in ln)
    cells = [c for c in re.split(r"\s{2,}", row.strip())]
    # session, profile, done, ok (fraction completed), misses, p99 ms, energy s
    # (no deadline misses: an all-zero column is left out)
    assert cells[:4] == ["session", "iso15118-2-dc", "2/2", "1.00 ±0.00"]
    assert "misses" not in text
    # Loss-free, every CurrentDemand takes the same time (the timing rules of
    # test_custom_session_response_times_by_hand): the request is 8 B V2GTP header +
    # 39 B EXI = 47 B, + 52 B TCP/IP with timestamps + 2 B framing = 101 B ->
    # 80.8 us + 0.9 ms; the response 8 + 58 = 66 B -> 120 B -> 96 us + 0.9 ms; in all
    # 1.9768 ms (the previous response's ACK left long before, 200 ms after it).
    loop_ms = ((47 + 52 + 2) * 8 / 10e6 + 0.9e-3 + (66 + 52 + 2) * 8 / 10e6 + 0.9e-3) * 1e3
    assert cells[4] == f"{loop_ms:.2f} ±0.00" == "1.98 ±0.00"


def test_run_without_sessions_prints_no_session_table(cli: Cli) -> None:
    res = cli("run", "v2g", "--bytes", "200kB")
    assert res.exit_code == 0 and "sessions:" not in res.stdout


def test_json_types_the_session_rows_and_keeps_flow_rows_as_they_were(cli: Cli) -> None:
    res = cli("run", "v2g", "--session", "iso15118-2-dc", "--set", "session.duration=10s", "--json")
    assert res.exit_code == 0, res.output
    rows = [json.loads(ln) for ln in res.stdout.splitlines() if ln.strip()]
    flows = [r for r in rows if "table" not in r]
    sessions = [r for r in rows if r.get("table") == "sessions"]
    assert len(rows) == 3 and len(flows) == 2 and len(sessions) == 1
    assert all(set(r) == set(FLOW_COLUMNS) for r in flows)
    assert set(sessions[0]) == {"table", *SESSION_COLUMNS}
    assert sessions[0]["messages"] == DC_10S_EXCHANGES and sessions[0]["completed"] is True


def test_set_session_duration(cli: Cli) -> None:
    """``--set session.duration=5min`` creates the session table: 300 s / 220 ms =
    1363.6 -> 1364 CurrentDemand exchanges, plus the 9 before and 3 after."""
    res = cli("run", "v2g", "--set", "session.duration=5min", "--json")
    rows = [json.loads(ln) for ln in res.stdout.splitlines() if ln.strip()]
    (session,) = [r for r in rows if r.get("table") == "sessions"]
    assert session["profile"] == "iso15118-2-dc"  # the default profile
    assert session["messages"] == 9 + math.ceil(300 / 0.22) + 3 == 1376


def test_session_option_sets_the_profile_and_set_overrides_it(cli: Cli) -> None:
    res = cli("run", "station", "--session", "din70121-dc", "--set", "vehicles=2", "--json")
    rows = [json.loads(ln) for ln in res.stdout.splitlines() if ln.strip()]
    sessions = [r for r in rows if r.get("table") == "sessions"]
    assert [r["session"] for r in sessions] == ["ev1", "ev2"]
    assert {r["profile"] for r in sessions} == {"din70121-dc"}
    res = cli(
        "run",
        "v2g",
        "--session",
        "din70121-dc",
        "--set",
        "session.profile=iso15118-2-ac",
        "--set",
        "session.duration=5s",
        "--json",
    )
    rows = [json.loads(ln) for ln in res.stdout.splitlines() if ln.strip()]
    assert [r["profile"] for r in rows if r.get("table") == "sessions"] == ["iso15118-2-ac"]


def test_session_option_on_a_preset_without_sessions_is_a_usage_error(cli: Cli) -> None:
    for preset in ("lte-cabin", "wired-wireless"):
        res = cli("run", preset, "--session", "iso15118-2-dc")
        err = assert_usage_error(res, "--session", "v2g", "station")
        assert preset in err


def test_unknown_session_profile_names_the_field(cli: Cli) -> None:
    assert_usage_error(
        cli("run", "v2g", "--session", "iso15118-20"),
        "error: --session: unknown session profile 'iso15118-20'",
    )


def test_out_writes_and_checks_the_session_files(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "runs.parquet"
    args = ("run", "v2g", "--session", "iso15118-2-dc", "--set", "session.duration=10s")
    res = cli(*args, "-n", "2", "--out", str(out))
    assert res.exit_code == 0, res.output + res.stderr
    back = Result.from_parquet(out)
    assert len(back.sessions) == 2 and len(back.messages) == 2 * DC_10S_EXCHANGES
    # A stale sessions file is an output like the others: refused without --force.
    out.unlink()
    (tmp_path / "runs.links.parquet").unlink()
    assert_usage_error(cli(*args, "--out", str(out)), "--out", "runs.sessions.parquet")
    assert cli(*args, "--out", str(out), "--force").exit_code == 0


# -- the sweep's run store -------------------------------------------------------------


def _spread(values: list[float]) -> tuple[list[float], int]:
    """(the answered response times in order, how many never came)."""
    return sorted(v for v in values if not math.isnan(v)), sum(math.isnan(v) for v in values)


def _expand(counts: pd.DataFrame) -> tuple[list[float], int]:
    pairs = zip(counts["response_time_s"], counts["count"], strict=True)
    return _spread([float(v) for v, n in pairs for _ in range(int(n))])


def test_sweep_stores_the_session_tables_and_reloads_them(tmp_path: Path, monkeypatch) -> None:
    from vtlab.store import Store
    from vtlab.sweep import MESSAGE_COUNT_COLUMNS, Axis, Sweep

    base = {**DC_10S, "reverse_loss": {"model": "burst", "mean_loss": 0.0}}
    axes = [Axis.variants("loss", {"0": {}, "2%": {"loss.mean_loss": 0.02}})]
    rows = Sweep(base, axes, seeds=[1, 2]).run(tmp_path / "rows", progress=False)
    counts = Sweep(base, axes, seeds=[1, 2], messages="counts")
    first = counts.run(tmp_path / "counts", progress=False)
    index = Store.open(tmp_path / "counts").index()
    assert len(index) == 4
    assert all(e.sessions and e.messages == "counts" for e in index.values())
    for table in ("runs", "flows", "links", "sessions", "messages"):
        assert len(list((tmp_path / "counts" / table).glob("part-*.parquet"))) == 1, table
    assert list(first.sessions["loss"]) == ["0", "0", "2%", "2%"]
    assert tuple(first.messages.columns) == ("loss", *MESSAGE_COUNT_COLUMNS)
    # The counts hold exactly the rows' response times, run by run and message by message.
    for key, group in rows.messages.groupby(["loss", "seed", "message"]):
        c = first.messages.set_index(["loss", "seed", "message"]).loc[key]
        c = c.to_frame().T if isinstance(c, pd.Series) else c
        assert int(c["count"].sum()) == len(group)
        assert _expand(c) == _spread(list(group["response_time_s"]))
    assert int(first.messages["count"].sum()) == len(rows.messages)
    assert rows.messages["missed"].any()  # seed 2 at 2 % gives up on a response

    def no_simulation(*args, **kwargs):
        raise AssertionError("stored runs must not be simulated again")

    monkeypatch.setattr("vtlab.sweep._core.run", no_simulation)
    again = counts.run(tmp_path / "counts", progress=False)
    pd.testing.assert_frame_equal(again.sessions, first.sessions, check_dtype=False)
    pd.testing.assert_frame_equal(again.messages, first.messages, check_dtype=False)


def test_sweep_out_writes_and_checks_the_session_files(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "grid.parquet"
    args = ("sweep", "v2g", "--set", "session.duration=10s", "--axis", "loss:loss.mean_loss=0%,1%")
    res = cli(*args, "--runs", "2", "--out", str(out), "-q")
    assert res.exit_code == 0, res.output + res.stderr
    back = Result.from_parquet(out)
    assert sorted(back.sessions["loss"]) == ["0%", "0%", "1%", "1%"]
    out.unlink()
    (tmp_path / "grid.links.parquet").unlink()
    assert_usage_error(cli(*args, "--out", str(out)), "--out", "grid.sessions.parquet")


def test_a_runs_message_counts_are_pandas_groupby_of_its_rows() -> None:
    """The counts a sweep keeps for each run (``raw_message_counts``, built from the
    core's columns without a frame) are the rows of pandas' own group-by of that run's
    message rows (:func:`vtlab.sweep.message_counts`: sorted by the keys, NaN response
    times last, as their own group), the same columns and values in the same order;
    and nothing for a run without messages. At 20 % loss several exchanges of the
    2 s sessions are never answered (a NaN response time), so both kinds of rows are
    there."""
    import numpy as np

    from vtlab.sweep import Sweep, message_counts
    from vtlab.sweeprows import raw_message_counts

    spec = {**DC_10S, "session": {"profile": "iso15118-2-dc", "duration": "2s"}}
    spec["loss"] = {"model": "burst", "mean_loss": 0.2}
    missed = 0
    for p in Sweep(spec, seeds=range(1, 9)).points():
        raw = _core.run(p.scenario.to_json(), p.seed, False)["messages"]
        want = message_counts(pd.DataFrame(raw))
        got = pd.DataFrame(raw_message_counts(raw))
        missed += int(np.isnan(want["response_time_s"]).sum())
        pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert missed > 0
    empty = raw_message_counts({k: [] for k in raw})
    assert all(v == [] for v in empty.values()) and "count" in empty
