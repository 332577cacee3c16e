"""Inputs that scale work or output stay within a stated bound (docs/reliability.md,
"Bounds on work and output"): each case runs in a child process under an
address-space limit and a timeout, so a regression fails the test instead of
exhausting the machine."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import assert_usage_error
from vtlab import _core
from vtlab.scenario import ScenarioError

#: Sets the child's address-space limit (MiB, argv[1]), then runs the command line
#: with the remaining arguments.
CLI_CHILD = """
import resource, sys
limit = int(sys.argv[1]) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.argv = ["vtlab", *sys.argv[2:]]
from vtlab.cli import main
main()
"""


def capped_cli(limit_mib: int, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``vtlab ARGS`` in a child limited to ``limit_mib`` of address space."""
    return subprocess.run(
        [sys.executable, "-c", CLI_CHILD, str(limit_mib), *args],
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def test_lte_trace_series_grows_linearly_with_its_length(tmp_path: Path):
    """The per-TTI series kept the whole cqi/itbs column as one bytes value in every
    row, so memory grew with the square of the length: the default 60 s ended in an
    ArrowMemoryError at 2.5 GB, 120 s would need 29 GB. Now each row holds one value
    per column, and 120 s fits in 1.5 GiB of address space."""
    import pandas as pd

    out, series = tmp_path / "cell.down", tmp_path / "cell.parquet"
    proc = capped_cli(1536, "lte-trace", str(out), "--seconds", "120", "--series", str(series))
    assert proc.returncode == 0, proc.stderr[-2000:]
    df = pd.read_parquet(series)
    assert len(df) == 120_000
    for column in ("time_ms", "bytes", "cqi", "itbs"):
        assert pd.api.types.is_integer_dtype(df[column]), (column, df[column].dtype)
    # CQI is a 4-bit index (36.213 table 7.2.3-1) and I_TBS at most 26 (table 7.1.7.2.1-1).
    assert df["cqi"].between(0, 15).all() and df["itbs"].between(0, 26).all()
    assert list(df["time_ms"][:3]) == [1, 2, 3] and df["time_ms"].is_monotonic_increasing
    # The trace holds one line per 1504 B of the delivered bytes (less than one left over).
    stamps = out.read_text().split()
    delivered = int(df["bytes"][~df["lost"]].sum())
    assert len(stamps) * 1504 <= delivered < (len(stamps) + 1) * 1504


def test_mahimahi_writer_refuses_an_invalid_trace_and_leaves_no_file(tmp_path: Path):
    from vtlab.cellular import write_mahimahi

    path = tmp_path / "t.mahimahi"
    with pytest.raises(ValueError, match="non-decreasing"):
        write_mahimahi(path, [1, 2, *range(3, 200_000), 5])
    assert not path.exists()
    with pytest.raises(ValueError, match="at least one"):
        write_mahimahi(path, [])
    assert not path.exists()
    # 150 000 lines cross the 65 536-line chunks: every line arrives, in order.
    write_mahimahi(path, range(1, 150_001))
    assert path.read_text().split() == [str(i) for i in range(1, 150_001)]


def pie_spec(t_update: str, second_start: str) -> str:
    """Two 100 kB transfers through a PIE queue, the second ``second_start`` after
    the first: the queue sits idle in between."""
    return json.dumps(
        {
            "preset": "custom",
            "nodes": ["a", "b"],
            "links": [
                {"a": "a", "b": "b", "rate": "10Mbps", "delay": "1ms",
                 "qdisc": {"kind": "pie", "t_update": t_update}},
            ],
            "flows": [
                {"src": "a", "dst": "b", "bytes": "100KB"},
                {"src": "a", "dst": "b", "bytes": "100KB", "start": second_start},
            ],
        }
    )  # fmt: skip


def test_pie_update_period_has_a_floor(cli):
    """t_update = 10 µs took 11 s for an hour of idle queue, 1 µs over 100 s without
    answering Ctrl-C: below 1 ms it is refused, naming the field."""
    with pytest.raises(ScenarioError, match=r"^links\[0\]\.qdisc\.t_update: must be at least 1 ms"):
        _core.run(pie_spec("999us", "1s"), 1)
    assert_usage_error(cli("run", "v2g", "--set", "qdisc={kind='pie', t_update='1us'}"), "t_update")


def test_pie_idle_day_costs_no_more_than_its_packets():
    """A day between two transfers is 86.4 million updates at the 1 ms floor; the
    catch-up skips those that cannot change the controller, and the run's event
    count (scheduler events plus the updates run, what the budget counts) stays
    that of the packets: under 10 000, where a catch-up of every update would
    count twice 86.4 million (both directions' queues); before, it took 5 s."""
    out = _core.run(pie_spec("1ms", "86400s"), 1)
    assert out["flows"]["completed"] == [True, True]
    assert out["meta"]["events"] < 10_000


def test_request_stop_ends_a_run_through_pie():
    spec = '{"preset": "v2g", "bytes": "100GB", "qdisc": {"kind": "pie", "t_update": "1ms"}}'
    result: list[BaseException] = []

    def work():
        try:
            _core.run(spec, 1)
        except BaseException as e:  # noqa: BLE001 - the interrupt is what we expect
            result.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join(timeout=0.3)
    _core.request_stop()
    t.join(timeout=60)
    _core.request_stop(clear=True)
    assert not t.is_alive()
    assert len(result) == 1 and isinstance(result[0], KeyboardInterrupt)


#: Runs a spec (argv[2], JSON) through the core in a child limited to argv[1] MiB of
#: address space; prints the result's meta and flow rows (and message count) as JSON.
CORE_CHILD = """
import json, resource, sys
limit = int(sys.argv[1]) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from vtlab import _core
trace = len(sys.argv) > 3
out = _core.run(sys.argv[2], 1, trace)
print(json.dumps({"abort_reason": out["flows"]["abort_reason"] + out["sessions"]["abort_reason"],
                  "messages": len(out["messages"]["index"]),
                  "trace_rows": len((out["traces"] or {"time_s": []})["time_s"])}))
"""


def capped_core(limit_mib: int, spec: dict, *, trace: bool = False) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CORE_CHILD, str(limit_mib), json.dumps(spec), *(["t"] * trace)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def custom_session(repeats: int) -> dict:
    return {
        "preset": "v2g",
        "session": {
            "profile": "custom",
            "abort_on_miss": False,
            "steps": [{"name": "X", "request": 40, "response": 60, "repeats": repeats}],
        },
    }


#: A message row in memory counts 32 B for each of its 3 identity and 8 own values.
MESSAGE_ROW_BYTES = 11 * 32
#: The default output budget, 1 GiB, holds this many message rows.
DEFAULT_MESSAGE_ROWS = (1 << 30) // MESSAGE_ROW_BYTES


def test_a_session_at_the_exchange_limit_is_refused_before_the_run():
    """10⁷ exchanges (the documented limit of one session) aborted on a 400 MB
    allocation (exit 134): its message rows need 3.5 GB. Now the output budget
    refuses it before anything runs, naming the field and the numbers."""
    proc = capped_cli(
        1024, "run", "v2g", "--set", "session.profile=custom",
        "--set", "session.steps=[{name='X', request=40, response=60, repeats=10000000}]",
        timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: max_output_bytes: 10000000 exchanges")
    assert f"{10_000_000 * MESSAGE_ROW_BYTES} bytes" in lines[0] and "1073741824" in lines[0]
    # The same for 1000 vehicles of 30-minute DC sessions (8194 exchanges each), which
    # needed 5 GB: refused, and accepted with a budget that says so.
    station = {"preset": "station", "vehicles": 1000, "session": {}}
    with pytest.raises(ScenarioError, match="^max_output_bytes: 8194000 exchanges in 1000"):
        _core.run(json.dumps(station), 1)


def test_the_largest_session_the_default_budget_accepts_fits_its_memory():
    # 3 050 402 exchanges (1 GiB / 352 B): 0.84 GB of process memory now, a crash
    # under this 1.5 GiB limit before (about 490 B an exchange).
    out = capped_core(1536, custom_session(DEFAULT_MESSAGE_ROWS))
    # Two flows (requests, responses) and the session, all complete.
    assert out["messages"] == DEFAULT_MESSAGE_ROWS and out["abort_reason"] == ["", "", ""]
    with pytest.raises(ScenarioError, match="^max_output_bytes: "):
        _core.run(json.dumps(custom_session(DEFAULT_MESSAGE_ROWS + 1)), 1)


def test_a_trace_every_nanosecond_ends_at_the_output_budget(tmp_path: Path):
    """trace_interval = 1ns was accepted and wrote 4.2 GB of trace a minute. It still
    is (a fine interval over a short run is legitimate), but the rows count against
    the output budget: kept in memory a trace row counts 13 values × 32 B = 416 B,
    so the default 1 GiB ends the run at row ⌊2³⁰ / 416⌋ + 1 = 2 581 111."""
    out = capped_core(2048, {"preset": "v2g", "trace_interval": "1ns"}, trace=True)
    assert out == {"abort_reason": ["output_budget"], "messages": 0, "trace_rows": 2_581_111}
    # Streamed to a file a row counts 13 × 8 = 104 B: 2 MiB end the run at row
    # ⌊2 097 152 / 104⌋ + 1 = 20 165, and the command says which budget ended it.
    trace = tmp_path / "t.parquet"
    proc = capped_cli(
        1536, "run", "v2g", "--set", "trace_interval=1ns", "--set", "max_output_bytes=2MiB",
        "--trace", str(trace), "--out", str(tmp_path / "runs.parquet"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    import pyarrow.parquet as pq

    assert pq.read_metadata(trace).num_rows == 20_165
    flows = pq.read_table(tmp_path / "runs.parquet").to_pydict()
    assert flows["abort_reason"] == ["output_budget"] and flows["completed"] == [False]
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("warning: ")]
    assert len(warnings) == 1 and warnings[0].startswith("warning: max_output_bytes: ")


def test_captures_stop_at_the_output_budget(tmp_path: Path):
    """An 800 MB transfer wrote 3.4 GB of captures. The bytes written count against
    the output budget: with 4 MiB the three files stop within one event's frames of
    it (one event may hand the device up to 64 packets, ns-3's queue disc quota, of
    at most 1514 B and a 16 B record header each, seen at up to two points)."""
    pcap = tmp_path / "pcap"
    proc = capped_cli(
        1536, "run", "v2g", "--bytes", "800MB", "--set", "max_output_bytes=4MiB",
        "--pcap", str(pcap), "--out", str(tmp_path / "runs.parquet"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    written = sum(f.stat().st_size for f in pcap.iterdir())
    assert 4 << 20 < written <= (4 << 20) + 64 * 2 * (1514 + 16)
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "runs.parquet").to_pydict()["abort_reason"] == ["output_budget"]
