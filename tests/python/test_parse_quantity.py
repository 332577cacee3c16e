"""The core's unit parser as Python sees it (values derived by hand)."""

import json

import pytest

from vtlab import _core
from vtlab._core import ScenarioError


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        ("fraction", "5%", 0.05),
        ("fraction", "0.25 %", 0.0025),
        ("fraction", "0.01", 0.01),
        ("rate", "10Mbps", 10_000_000),
        ("rate", "500 Mbit/s", 500_000_000),
        ("bytes", "128KiB", 131_072),
        ("bytes", "100MB", 100_000_000),
        ("duration", "0.9ms", 900_000),
        ("duration", "2min", 120_000_000_000),
        ("duration", "1h", 3_600_000_000_000),  # 3600 s
        ("duration", "1.5h", 5_400_000_000_000),  # 5400 s
        ("duration", "2d", 172_800_000_000_000),  # 2 × 86400 s
    ],
)
def test_parse_quantity_values(kind: str, text: str, expected: float) -> None:
    value = _core.parse_quantity(kind, text)
    assert value == expected
    assert type(value) is type(expected)


def test_parse_quantity_errors_match_the_scenario_path() -> None:
    with pytest.raises(ScenarioError) as bad:
        _core.parse_quantity("bytes", "abc")
    with pytest.raises(ScenarioError) as field:
        _core.expand('{"preset": "v2g", "bytes": "abc"}')
    assert str(field.value) == f"bytes: {bad.value}"
    with pytest.raises(ScenarioError, match="must be positive"):
        _core.parse_quantity("rate", "0Mbps")
    with pytest.raises(ScenarioError, match="unknown quantity kind 'speed'"):
        _core.parse_quantity("speed", "1")


def test_hours_and_days_in_a_scenario_and_an_unknown_unit() -> None:
    # stop = 2 h = 7200 s; 1 d = 86400 s
    assert json.loads(_core.expand('{"preset": "v2g", "stop": "2h"}'))["stop_ns"] == 7_200 * 10**9
    assert json.loads(_core.expand('{"preset": "v2g", "stop": "1d"}'))["stop_ns"] == 86_400 * 10**9
    with pytest.raises(ScenarioError, match="unknown unit 'w'.*h, d"):
        _core.parse_quantity("duration", "1w")
