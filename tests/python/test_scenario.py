"""Unit tests of the spec helpers: value parsing, --set parsing, Scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import vtlab
from vtlab import Scenario, ScenarioError
from vtlab.scenario import apply_assignment, parse_assignment, parse_value, set_path

# -- parse_value -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("false", False),
        ("true", True),
        ("3", 3),
        ("-7", -7),
        ("0.5", 0.5),
        ("1e3", 1000.0),
        ('"x"', "x"),
        ("'quoted'", "quoted"),
        ("[1, 2]", [1, 2]),
        ("{a = 1, b = 'c'}", {"a": 1, "b": "c"}),
        ("10Mbps", "10Mbps"),
        ("5%", "5%"),
        ("0.9ms", "0.9ms"),
        ("bernoulli", "bernoulli"),
        ("gilbert-elliott", "gilbert-elliott"),
        ("128KiB", "128KiB"),
        ("", ""),
        (" 3 ", 3),
        # values JSON cannot carry stay strings
        ("1979-05-27", "1979-05-27"),
        ("inf", "inf"),
        ("nan", "nan"),
        # a second assignment smuggled in is not a single value
        ("1\nx = 2", "1\nx = 2"),
        ("  10Mbps ", "10Mbps"),
        ('" padded "', " padded "),
    ],
)
def test_parse_value(text: str, expected: object) -> None:
    assert parse_value(text) == expected
    assert type(parse_value(text)) is type(expected)


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_parse_value_integers_round_trip(n: int) -> None:
    assert parse_value(str(n)) == n


@given(st.booleans())
def test_parse_value_booleans(b: bool) -> None:
    assert parse_value(str(b).lower()) is b


@given(st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1).filter(str.isalpha))
def test_parse_value_bare_words_stay_strings(word: str) -> None:
    if word in ("true", "false", "inf", "nan"):
        return
    assert parse_value(word) == word


# -- parse_assignment / set_path -----------------------------------------------------------


def test_parse_assignment_splits_at_first_equals() -> None:
    assert parse_assignment("tcp.delayed_ack=false") == ("tcp.delayed_ack", False)
    assert parse_assignment(" plc_delay = 2ms") == ("plc_delay", "2ms")
    assert parse_assignment('name="a=b"') == ("name", "a=b")
    assert parse_assignment("x=") == ("x", "")


@pytest.mark.parametrize("text", ["novalue", "=3", " =3", "a..b=1", ".a=1", "a.=1", "a b=1"])
def test_parse_assignment_rejects_malformed(text: str) -> None:
    with pytest.raises(ScenarioError, match=r"^--set"):
        parse_assignment(text)


def test_parse_assignment_names_the_option() -> None:
    with pytest.raises(ScenarioError, match=r"^--cc-param: expected key=value, got 'beta'"):
        parse_assignment("beta", option="--cc-param")


def test_set_path_creates_intermediate_tables() -> None:
    spec: dict = {"preset": "v2g"}
    set_path(spec, "tcp.delayed_ack", False)
    set_path(spec, "tcp.cc_params.beta", 0.7)
    set_path(spec, "loss.model", "bernoulli")
    assert spec == {
        "preset": "v2g",
        "tcp": {"delayed_ack": False, "cc_params": {"beta": 0.7}},
        "loss": {"model": "bernoulli"},
    }


def test_set_path_overwrites_and_keeps_siblings() -> None:
    spec = {"loss": {"model": "burst", "mean_loss": 0.01}}
    set_path(spec, "loss.mean_loss", "5%")
    assert spec == {"loss": {"model": "burst", "mean_loss": "5%"}}


def test_set_path_indexes_lists() -> None:
    spec = {"flows": [{"bytes": 1}, {"bytes": 2}]}
    set_path(spec, "flows.1.bytes", "1MB")
    assert spec["flows"] == [{"bytes": 1}, {"bytes": "1MB"}]
    with pytest.raises(ScenarioError, match=r"flows\.2\.bytes: 'flows' is a list of 2"):
        set_path(spec, "flows.2.bytes", 3)
    with pytest.raises(ScenarioError, match="not a valid index"):
        set_path(spec, "flows.x", 3)


def test_set_path_parent_not_a_table_names_path() -> None:
    spec = {"bytes": "5MB"}
    with pytest.raises(ScenarioError, match=r"^bytes\.unit: 'bytes' is not a table"):
        set_path(spec, "bytes.unit", "MB")
    assert spec == {"bytes": "5MB"}


def test_apply_assignment_prefixes_option() -> None:
    spec = {"bytes": "5MB"}
    with pytest.raises(ScenarioError, match=r"^--set bytes\.x: 'bytes' is not a table"):
        apply_assignment(spec, "bytes.x=1")
    apply_assignment(spec, "tcp.mss=1200")
    assert spec["tcp"] == {"mss": 1200}


# -- Scenario ----------------------------------------------------------------------------


def test_scenario_preset_and_set_chain() -> None:
    sc = Scenario.preset("v2g", bytes="5MB").set("tcp.cc", "newreno").set("plc_delay", "2ms")
    assert sc.spec == {
        "preset": "v2g",
        "bytes": "5MB",
        "tcp": {"cc": "newreno"},
        "plc_delay": "2ms",
    }
    assert json.loads(sc.to_json()) == sc.spec


def test_scenario_copies_its_input() -> None:
    spec = {"preset": "v2g", "tcp": {"cc": "newreno"}}
    sc = Scenario(spec)
    sc.set("tcp.mss", 1000)
    assert spec == {"preset": "v2g", "tcp": {"cc": "newreno"}}
    other = sc.copy().set("bytes", 1)
    assert "bytes" not in sc.spec and other != sc


def test_scenario_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('preset = "v2g"\nbytes = "1MB"\n\n[tcp]\ncc = "newreno"\ndelayed_ack = false\n')
    sc = Scenario.from_toml(path)
    assert sc.spec == {
        "preset": "v2g",
        "bytes": "1MB",
        "tcp": {"cc": "newreno", "delayed_ack": False},
    }
    assert sc.source == path
    assert Scenario.coerce(path) == sc
    assert Scenario.coerce(str(path)) == sc


def test_scenario_from_toml_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Scenario.from_toml(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text('preset = "v2g"\nbytes = \n')
    with pytest.raises(ScenarioError, match=r"bad\.toml: TOML syntax error: .*line 2"):
        Scenario.from_toml(bad)


def test_scenario_coerce() -> None:
    assert Scenario.coerce("v2g").spec == {"preset": "v2g"}
    assert Scenario.coerce({"preset": "v2g"}).spec == {"preset": "v2g"}
    sc = Scenario.preset("v2g")
    assert Scenario.coerce(sc) is sc
    with pytest.raises(TypeError):
        Scenario.coerce(42)  # type: ignore[arg-type]


def test_scenario_rejects_non_finite_numbers() -> None:
    with pytest.raises(ScenarioError, match="^bytes: nan is not a finite number"):
        Scenario.preset("v2g", bytes=float("nan")).to_json()


def test_scenario_expanded_is_resolved() -> None:
    expanded = Scenario.preset("v2g", bytes="1MB").expanded()
    assert isinstance(expanded, dict)
    text = json.dumps(expanded)
    assert "1MB" not in text  # quantities are resolved to base units
    assert "1000000" in text


def test_scenario_to_toml_round_trips(tmp_path: Path) -> None:
    pytest.importorskip("tomli_w")
    sc = Scenario.preset("v2g", bytes="1MB", tcp={"cc": "newreno", "delayed_ack": False})
    path = tmp_path / "out.toml"
    path.write_text(sc.to_toml())
    assert Scenario.from_toml(path) == sc


def test_package_exports() -> None:
    assert isinstance(vtlab.__version__, str) and vtlab.__version__
    assert issubclass(vtlab.ScenarioError, ValueError)
    assert "v2g" in vtlab.presets()
    ccs = vtlab.congestion_controls()
    assert any(c["name"] == "newreno" for c in ccs)
    for c in ccs:
        assert {"name", "description", "source", "params"} <= set(c)
