"""Outputs are checked before the first simulation and never silently overwritten;
sweep axes refuse repeated values."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import Result

from conftest import assert_usage_error
from vtlab import outputs
from vtlab.cli import run as run_module
from vtlab.sweep import Axis, Sweep

Cli = Callable[..., Result]


@pytest.fixture
def no_simulation(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Make every simulation entry point of the CLI record its call and fail."""
    calls: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        raise AssertionError("a simulation started although the outputs are invalid")

    monkeypatch.setattr(run_module, "run_many", refuse)
    monkeypatch.setattr(Sweep, "run", refuse)
    import vtlab.cctable

    monkeypatch.setattr(vtlab.cctable, "cc_table", refuse)
    return calls


def refused(result: Result, calls: list[Any], *needles: str) -> str:
    """An output error: one line, exit 2, nothing simulated, nothing printed on stdout."""
    line = assert_usage_error(result, *needles)
    assert result.stdout == ""
    assert calls == []
    return line


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


RUN = ("run", "v2g", "--bytes", "1MB")


# -- run --------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--out", "--trace"])
def test_missing_directory(cli: Cli, tmp_path: Path, no_simulation: list[Any], option: str) -> None:
    target = tmp_path / "missing_dir" / "x.parquet"
    line = refused(cli(*RUN, "--runs", "6", option, str(target)), no_simulation)
    assert line == (
        f"error: {option}: '{target}': directory '{tmp_path / 'missing_dir'}' does not exist"
    )
    assert files(tmp_path) == []


def test_out_and_trace_the_same_file(cli: Cli, tmp_path: Path, no_simulation: list[Any]) -> None:
    same = tmp_path / "same.parquet"
    line = refused(cli(*RUN, "--out", str(same), "--trace", str(same)), no_simulation)
    assert line == (
        f"error: --trace: '{same}' is the same file as --out {same} (flows file); "
        "give different names"
    )
    assert files(tmp_path) == []


def test_trace_on_the_links_file_of_out(cli: Cli, tmp_path: Path, no_simulation: list[Any]) -> None:
    out = tmp_path / "o2.parquet"
    links = tmp_path / "o2.links.parquet"
    line = refused(cli(*RUN, "--out", str(out), "--trace", str(links)), no_simulation)
    assert line == (
        f"error: --trace: '{links}' is the same file as --out {links} (links file); "
        "give different names"
    )
    assert files(tmp_path) == []


def test_same_file_through_another_spelling(
    cli: Cli, tmp_path: Path, no_simulation: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    refused(cli(*RUN, "--out", "../r.parquet", "--trace", str(tmp_path / "r.parquet")), [])
    assert files(tmp_path) == ["sub"]


@pytest.mark.parametrize("name", ["x.txt", "x", "x.parquet.tmp"])
def test_out_must_be_parquet_or_csv(
    cli: Cli, tmp_path: Path, no_simulation: list[Any], name: str
) -> None:
    target = tmp_path / name
    line = refused(cli(*RUN, "--out", str(target)), no_simulation)
    assert line == f"error: --out: '{target}': the file name must end in .parquet or .csv"
    assert files(tmp_path) == []


def test_trace_must_be_parquet_or_csv(cli: Cli, tmp_path: Path, no_simulation: list[Any]) -> None:
    target = tmp_path / "t.txt"
    line = refused(cli(*RUN, "--trace", str(target)), no_simulation)
    assert line == f"error: --trace: '{target}': the file name must end in .parquet or .csv"


def test_out_is_a_directory(cli: Cli, tmp_path: Path, no_simulation: list[Any]) -> None:
    folder = tmp_path / "d.parquet"
    folder.mkdir()
    line = refused(cli(*RUN, "--out", str(folder)), no_simulation)
    assert line == f"error: --out: '{folder}' is a directory"


def test_unwritable_directory(
    cli: Cli, tmp_path: Path, no_simulation: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root may write anywhere, so the permission answer is replaced, not the mode.
    real_access = os.access
    monkeypatch.setattr(
        outputs.os, "access", lambda p, mode: False if Path(p) == tmp_path else real_access(p, mode)
    )
    target = tmp_path / "x.parquet"
    line = refused(cli(*RUN, "--out", str(target)), no_simulation)
    assert line == f"error: --out: '{target}': directory '{tmp_path}' is not writable"


def test_existing_outputs_need_force(cli: Cli, tmp_path: Path, no_simulation: list[Any]) -> None:
    out = tmp_path / "runs.parquet"
    out.write_bytes(b"old flows")
    line = refused(cli(*RUN, "--out", str(out)), no_simulation)
    assert line == (
        f"error: --out: '{out}' (flows file) already exists; add --force to overwrite it"
    )
    assert out.read_bytes() == b"old flows"
    assert files(tmp_path) == ["runs.parquet"]

    out.unlink()
    links = tmp_path / "runs.links.parquet"
    links.write_bytes(b"old links")  # the derived file counts too
    line = refused(cli(*RUN, "--out", str(out)), no_simulation)
    assert line == (
        f"error: --out: '{links}' (links file) already exists; add --force to overwrite it"
    )
    assert links.read_bytes() == b"old links"

    trace = tmp_path / "t.csv"
    trace.write_text("old trace")
    line = refused(cli(*RUN, "--trace", str(trace)), no_simulation)
    assert line == f"error: --trace: '{trace}' already exists; add --force to overwrite it"
    assert trace.read_text() == "old trace"


def test_force_overwrites(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "runs.parquet"
    links = tmp_path / "runs.links.parquet"
    trace = tmp_path / "t.csv"
    for path in (out, links, trace):
        path.write_bytes(b"old")
    res = cli(*RUN, "--runs", "2", "--out", str(out), "--trace", str(trace), "--force", "-q")
    assert res.exit_code == 0, res.output
    assert pd.read_parquet(out)["seed"].tolist() == [1, 2]
    assert pd.read_parquet(links)["seed"].unique().tolist() == [1, 2]
    assert pd.read_csv(trace)["seed"].unique().tolist() == [1, 2]


def test_outputs_written_when_all_is_well(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "o.parquet"
    trace = tmp_path / "o.trace.parquet"
    res = cli(*RUN, "--out", str(out), "--trace", str(trace), "-q")
    assert res.exit_code == 0, res.output
    assert files(tmp_path) == ["o.links.parquet", "o.parquet", "o.trace.parquet"]


# -- sweep, cc table, validate ----------------------------------------------------------


def test_sweep_out_checked_before_running(
    cli: Cli, tmp_path: Path, no_simulation: list[Any]
) -> None:
    target = tmp_path / "nope" / "s.parquet"
    line = refused(
        cli("sweep", "v2g", "--axis", "tcp.cc=newreno,cubic", "--out", str(target)), no_simulation
    )
    assert line.startswith("error: --out: ") and "does not exist" in line
    existing = tmp_path / "s.parquet"
    existing.write_bytes(b"old")
    refused(cli("sweep", "v2g", "--out", str(existing)), no_simulation, "--force")
    assert existing.read_bytes() == b"old"
    refused(cli("sweep", "v2g", "--out", str(tmp_path / "s.txt")), no_simulation, ".parquet")


def test_sweep_store_must_be_a_directory(
    cli: Cli, tmp_path: Path, no_simulation: list[Any]
) -> None:
    a_file = tmp_path / "store"
    a_file.write_text("not a folder")
    line = refused(cli("sweep", "v2g", "--store", str(a_file)), no_simulation)
    assert line == f"error: --store: '{a_file}' exists and is not a directory"
    assert files(tmp_path) == ["store"]


def test_cc_table_out(cli: Cli, tmp_path: Path, no_simulation: list[Any]) -> None:
    refused(cli("cc", "table", "--out", str(tmp_path / "t.txt")), no_simulation, "must end in .md")
    existing = tmp_path / "t.md"
    existing.write_text("old table")
    refused(cli("cc", "table", "--out", str(existing)), no_simulation, "already exists", "--force")
    assert existing.read_text() == "old table"


def test_validate_out_checked_before_ns3(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vtlab.validation import v2g

    calls: list[Any] = []
    monkeypatch.setattr(v2g, "ensure_binary", lambda *a, **k: calls.append(a))
    a_file = tmp_path / "report"
    a_file.write_text("x")
    line = refused(cli("validate", "--quick", "--out", str(a_file)), calls)
    assert line == f"error: --out: '{a_file}' exists and is not a directory"


def test_check_output_dir_accepts_creatable_and_existing(tmp_path: Path) -> None:
    outputs.check_output_dir("--store", tmp_path / "a" / "b")  # parents will be created
    outputs.check_output_dir("--store", tmp_path)
    assert files(tmp_path) == []


# -- dangling links, FIFOs and devices --------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option", "name"),
    [
        (RUN, "--out", "runs.parquet"),
        (RUN, "--trace", "trace.csv"),
        (RUN, "--events", "events.qlog"),
        (RUN, "--pcap", "caps"),
        (("sweep", "v2g"), "--store", "store"),
        (("sweep", "v2g"), "--out", "sweep.parquet"),
        (("cc", "table"), "--out", "table.md"),
    ],
)
def test_a_dangling_link_is_refused_before_anything_runs(
    cli: Cli,
    tmp_path: Path,
    no_simulation: list[Any],
    args: tuple[str, ...],
    option: str,
    name: str,
) -> None:
    # Before: `--out` through a link to a missing directory passed the check, the runs
    # were simulated, and writing failed after them.
    link = tmp_path / name
    link.symlink_to(tmp_path / "gone" / name)
    line = refused(cli(*args, option, str(link), "--force"), no_simulation)
    assert line == (
        f"error: {option}: '{link}' is a symbolic link to '{tmp_path / 'gone' / name}', "
        "which does not exist"
    )
    assert files(tmp_path) == [name]


def test_a_dangling_link_above_a_store_is_refused(
    cli: Cli, tmp_path: Path, no_simulation: list[Any]
) -> None:
    (tmp_path / "campaigns").symlink_to(tmp_path / "gone")
    store = tmp_path / "campaigns" / "grid"
    line = refused(cli("sweep", "v2g", "--store", str(store)), no_simulation)
    assert line == (
        f"error: --store: '{tmp_path / 'campaigns'}' is a symbolic link to "
        f"'{tmp_path / 'gone'}', which does not exist"
    )


# -- repeated axis values ---------------------------------------------------------------


def test_repeated_axis_value_refused(cli: Cli, no_simulation: list[Any]) -> None:
    line = refused(cli("sweep", "v2g", "--axis", "v:tcp.cc=newreno,newreno"), no_simulation)
    assert line == "error: --axis v: value 'newreno' is given more than once"
    line = refused(cli("sweep", "v2g", "--axis", "loss.mean_loss=0.05,1%,5e-2"), no_simulation)
    assert line == (
        "error: --axis loss_mean_loss: values '0.05' and '5e-2' are the same value; give each once"
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--profile", "ns3", "--profile", "ns3"],
            "error: --profile: value 'ns3' is given more than once",
        ),
        (
            ["--loss", "1%", "--loss", "5%", "--loss", "1%"],
            "error: --loss: value '1%' is given more than once",
        ),
        (["--cc", "cubic", "--cc", "cubic"], "error: --cc: value 'cubic' is given more than once"),
    ],
)
def test_cc_table_repeated_values(
    cli: Cli, no_simulation: list[Any], args: list[str], expected: str
) -> None:
    assert refused(cli("cc", "table", *args), no_simulation) == expected


def test_axis_api_refuses_repeated_labels() -> None:
    with pytest.raises(ValueError, match="axis 'tcp_cc': value 'newreno' is given more than once"):
        Axis.values("tcp.cc", ["newreno", "cubic", "newreno"])
    # Equal but of different types are different levels (1, 1.0 and True).
    assert len(Axis.values("x", [1, 1.0, True]).levels) == 3
    with pytest.raises(ValueError, match="more than once"):
        Axis.variants("v", {"a": {"tcp.cc": "newreno"}}).__class__(
            "v", (("a", ()), ("a", (("tcp.cc", "cubic"),)))
        )


def test_distinct_axis_values_still_run(cli: Cli) -> None:
    res = cli("sweep", "v2g", "--bytes", "1MB", "--runs", "1", "--axis", "v:tcp.cc=newreno,cubic")
    assert res.exit_code == 0, res.output
    assert "cubic" in res.stdout and "newreno" in res.stdout
