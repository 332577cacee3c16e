"""The result tables' columns, as declared once in the core (``vtlab._core.schema()``).

``python -m vtlab.schema`` prints the Markdown column reference kept in
docs/metrics.md (a test checks that the file is up to date).
"""

from __future__ import annotations

from vtlab import _core

TITLES = {
    "flows": "Flow rows (`Result.flows`, `--out`): one per flow per run",
    "links": "Link rows (`Result.links`, the `.links.parquet` beside `--out`): one per link "
    "direction per run",
    "sessions": "Session rows (`Result.sessions`, the `.sessions.parquet` beside `--out`): one "
    "per request/response session per run (ISO 15118 / DIN 70121 or custom; docs/scenarios.md)",
    "messages": "Message rows (`Result.messages`, the `.messages.parquet` beside `--out`): one "
    "per request/response exchange of a session",
    "traces": "Trace rows (`Result.traces`, `--trace`): one per flow per sample, or per "
    "change with `--trace-mode changes`",
    "events": "Event rows (`Result.events`, `--events`): typed events of senders and links, "
    "in time order",
}


def markdown() -> str:
    """The column reference of every table as Markdown."""
    out = [
        "# Result columns",
        "",
        "Generated from the column declarations in `crates/vtlab-core/src/metrics.rs` by",
        "`python -m vtlab.schema > docs/metrics.md`; do not edit by hand. Every table starts",
        "with the identity columns `scenario_hash`, `seed` and `version`.",
    ]
    for table, cols in _core.schema().items():
        out += [
            "",
            f"## {TITLES[table]}",
            "",
            "| column | type | unit | meaning |",
            "|---|---|---|---|",
        ]
        out += [f"| `{c['name']}` | {c['kind']} | {c['unit']} | {c['doc']} |" for c in cols]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
