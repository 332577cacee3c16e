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
