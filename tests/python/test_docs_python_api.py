"""docs/python-api.md's worked example runs as written, and the outputs it shows (the
commented tables under an expression) are what that expression gives now. On a
mismatch the message holds the block with the current outputs, to paste into the
document."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

DOC = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"


def worked_example() -> str:
    text = DOC.read_text()
    section = text[text.index("## Worked example") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def shown_outputs(lines: list[str]) -> dict[int, list[str]]:
    """Line number of each expression whose output the example shows → the output
    lines (a table: its header line starts with spaces after ``# ``)."""
    found: dict[int, list[str]] = {}
    for i, line in enumerate(lines):
        if not line.strip() or line.startswith("#"):
            continue
        shown = []
        for below in lines[i + 1 :]:
            if not below.startswith("# "):
                break
            shown.append(below[2:])
        if shown and shown[0].startswith(" "):
            found[i] = shown
    return found


def regenerated(lines: list[str], shown: dict[int, list[str]], now: dict[int, list[str]]) -> str:
    """The example with each shown output replaced by the current one: the header and
    as many rows as the document shows, then ``...`` where it had one."""
    out: list[str] = []
    skip = 0
    for i, line in enumerate(lines):
        if skip:
            skip -= 1
            continue
        out.append(line)
        if i in shown:
            skip = len(shown[i])
            rows = [x for x in shown[i] if x.strip() != "..."]
            out += ["# " + x for x in now[i][: len(rows)]]
            out += ["# ..."] if len(rows) < len(shown[i]) else []
    return "\n".join(out)


def test_the_worked_example_shows_what_it_gives(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # it writes lossy.parquet
    code = worked_example()
    lines = code.splitlines()
    namespace: dict[str, object] = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    assert (tmp_path / "lossy.parquet").is_file()
    shown = shown_outputs(lines)
    assert len(shown) == 2, "the example shows two outputs (the flows, the summary)"
    now: dict[int, list[str]] = {}
    stale = []
    for i, output in shown.items():
        value = eval(lines[i], namespace)
        assert isinstance(value, pd.DataFrame), lines[i]
        now[i] = value.to_string().splitlines()
        rows = [x for x in output if x.strip() != "..."]
        if now[i][: len(rows)] != rows:
            stale.append(lines[i])
    assert not stale, f"stale output of {stale}; now:\n{regenerated(lines, shown, now)}"
