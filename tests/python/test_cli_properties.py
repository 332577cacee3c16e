"""Property-based command lines: any generated ``vtlab run`` invocation exits 0 with
sane rows or exits 2 with exactly one ``error:`` line; never a traceback."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtlab import _core

CCS = [c["name"] for c in _core.congestion_controls()]

values = st.one_of(
    st.sampled_from(["1", "0", "-1", "1.5", "1e300", "nan", "inf", "", "x", "5%", "150%"]),
    st.integers(-10, 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
options = st.one_of(
    st.tuples(st.just("--loss"), st.one_of(st.sampled_from(["0", "1%", "5%", "30%"]), values)),
    st.tuples(st.just("--bytes"), st.one_of(st.sampled_from(["1kB", "100kB", "300kB"]), values)),
    st.tuples(st.just("--cc"), st.one_of(st.sampled_from(CCS), values)),
    st.tuples(st.just("--profile"), st.sampled_from(["ns3", "linux", "bsd", ""])),
    st.tuples(st.just("--runs"), st.sampled_from(["1", "2", "0", "-3", "x", "1.5"])),
    st.tuples(st.just("--seed"), st.one_of(st.sampled_from(["1", "0", str(2**64)]), values)),
    st.tuples(
        st.just("--cc-param"),
        st.tuples(st.sampled_from(["beta", "b", "alpha", "k", "nope", ""]), values).map(
            lambda kv: f"{kv[0]}={kv[1]}"
        ),
    ),
    st.tuples(
        st.just("--set"),
        st.tuples(
            st.sampled_from(
                [
                    "plc_rate",
                    "plc_delay",
                    "queue_packets",
                    "tcp.mss",
                    "tcp.rto_min",
                    "tcp.syn_retries",
                    "loss.model",
                    "stop",
                    "max_events",
                    "no.such",
                ]
            ),
            values,
        ).map(lambda kv: f"{kv[0]}={kv[1]}"),
    ),  # fmt: skip
    st.tuples(st.sampled_from(["--xyz", "-z", "--json"]), st.just("")),
)


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(options, max_size=5))
def test_generated_command_lines(cli, opts):
    args = ["run", "v2g", "--bytes", "50kB", "--json"]
    for name, value in opts:
        # An empty value stands for a bare option: a flag, or one missing its value.
        args += [name] if value == "" else [name, value]
    result = cli(*args)
    assert "Traceback" not in result.output + result.stderr
    if result.exit_code == 2:
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        assert len(lines[0]) < 600
        return
    assert result.exit_code == 0, (args, result.exit_code, result.stderr, result.exception)
    for line in result.stdout.splitlines():
        row = json.loads(line)
        assert 0 <= row["goodput_bps"] <= 500e6
        if row["completed"]:
            assert math.isfinite(row["completion_s"]) and row["abort_reason"] == ""
        else:
            assert row["abort_reason"]
