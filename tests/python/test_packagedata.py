"""The data vtlab ships (vtlab.packagedata): found inside the package, never beside
the source tree; ``$VTLAB_VALIDATION_DIR`` replaces them; a bad value is one error
line. The installed-wheel side is ``make smoke`` (tests/smoke/readme_smoke.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import assert_usage_error
from vtlab import packagedata
from vtlab.errors import CliError

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "vtlab"


def test_the_validation_data_lie_inside_the_package(monkeypatch):
    monkeypatch.delenv(packagedata.VALIDATION_ENV, raising=False)
    from vtlab.ns3 import lte, program
    from vtlab.validation import iso15118, v2g, wifi, wifi_aodv

    found = packagedata.validation_dir()
    assert found == PACKAGE / "_data" / "validation"
    for source in ("v2g.cc", "wifi.cc", "wifi_aodv.cc", "iso15118.cc", "lte.cc"):
        assert (packagedata.ns3_source_dir() / source).is_file()
    assert program.source_path() == found / "ns3" / "v2g.cc"
    assert lte.lte_source_path() == found / "ns3" / "lte.cc"
    for family in (v2g, wifi, wifi_aodv, iso15118):
        assert family.stored_ns3_runs_path().is_file()
        assert family.stored_ns3_runs_path().is_relative_to(found)


def test_the_environment_variable_points_elsewhere(monkeypatch, tmp_path):
    from vtlab.ns3 import program
    from vtlab.validation import wifi

    monkeypatch.setenv(packagedata.VALIDATION_ENV, str(tmp_path))
    monkeypatch.delenv("VTLAB_NS3_SOURCE", raising=False)
    assert packagedata.validation_dir() == tmp_path
    assert program.source_path() == tmp_path / "ns3" / "v2g.cc"
    assert wifi.stored_ns3_runs_path() == tmp_path / "wifi" / "ns3" / "runs.jsonl.gz"
    monkeypatch.setenv(packagedata.VALIDATION_ENV, str(tmp_path / "absent"))
    with pytest.raises(CliError, match="is not a folder"):
        packagedata.validation_dir()


def test_a_bad_validation_folder_is_one_error_line(cli, monkeypatch, tmp_path):
    monkeypatch.setenv(packagedata.VALIDATION_ENV, str(tmp_path / "absent"))
    monkeypatch.chdir(tmp_path)
    result = cli("validate", "wifi", "--quick", "-q")
    assert_usage_error(result, "VTLAB_VALIDATION_DIR", "is not a folder")


def test_no_module_finds_data_beside_the_source_tree():
    """Paths from ``__file__`` stop at the package: no ``parents[...]`` climbing out
    of it, no ``__file__`` on a line that names a folder of the repository."""
    for path in PACKAGE.rglob("*.py"):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            assert "parents[" not in line, f"{path}:{n}: {line.strip()}"
            if "__file__" in line:
                assert not re.search(r"validation|examples|docs", line), f"{path}:{n}"
