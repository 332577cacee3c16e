"""The one pipeline every study runs through: plan → run store → tables → figures →
findings → report.

A study (one package under :mod:`vtlab.experiments`) declares a :class:`Study`: how to
build its plan and grids, how to summarise the runs, which tables and figures it
writes, the paper's published numbers (``paper.toml`` in the package, loaded as
:class:`PaperValues`), the paper's qualitative claims as :class:`Claim` predicates,
and the report as a list of :class:`Section` renderers. :func:`run` does the rest:

1. run (or load from the resumable store ``OUT/runs``) every grid of the plan
   (:class:`~vtlab.experiments.common.Campaign`; store format and keys unchanged);
2. summarise the rows and write every table (CSV + Parquet, optional Markdown);
3. draw every figure (PNG + SVG);
4. compare the paper's numbers with vtlab's and evaluate every claim; a claim that
   does not hold is reported as such;
5. render the report from the sections, each of which reads only the context
   (data, paper values, comparisons, findings), never a number typed into prose.

The sections every report shares are built here from what is the study's own
(:func:`header_section`, :func:`comparison_section`, :func:`findings_section`,
:func:`files_section`); a study's ``report.py`` lists them among its own sections.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from vtlab.experiments import common, figcache
from vtlab.experiments.common import Campaign, Comparison, Config, Grid, Outcome

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = [
    "PAPER_FILE",
    "Claim",
    "Context",
    "FigureSpec",
    "Finding",
    "PaperValue",
    "PaperValues",
    "Section",
    "Study",
    "TableSpec",
    "comparison_section",
    "evaluate_claims",
    "files_section",
    "findings_section",
    "header_section",
    "held",
    "run",
]

#: Name of the paper-values file in every study package.
PAPER_FILE = "paper.toml"


# -- the paper's numbers ---------------------------------------------------------------


@dataclass(frozen=True)
class PaperValue:
    """One published number: its value, where it is in the paper and a short label.

    ``extra`` keeps the entry's other keys (e.g. which grid, variant and loss level
    give vtlab's value for it). A ``ratio_of = [a, b]`` entry is the quotient of two
    other entries; its ``value`` is computed at load time.
    """

    id: str
    value: float
    unit: str
    where: str
    label: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def section(self) -> str:
        """The section name used in comparison tables (``where`` unless given)."""
        return str(self.extra.get("section", self.where))


class PaperValues(Mapping[str, PaperValue]):
    """The entries of a study's ``paper.toml``, by id, in file order."""

    def __init__(self, entries: Sequence[PaperValue], meta: Mapping[str, Any] | None = None):
        self._entries = {e.id: e for e in entries}
        if len(self._entries) != len(entries):
            raise ValueError("duplicate id in the paper values")
        self.meta = dict(meta or {})

    def __getitem__(self, key: str) -> PaperValue:
        return self._entries[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def value(self, key: str) -> float:
        return self._entries[key].value

    def group(self, prefix: str) -> list[PaperValue]:
        """Entries whose id starts with ``prefix`` (e.g. ``"table2/"``), in file order."""
        return [e for k, e in self._entries.items() if k.startswith(prefix)]

    @classmethod
    def parse(cls, text: str) -> PaperValues:
        """Parse a ``paper.toml``: ``[meta]`` and ``[[value]]`` tables with ``id``,
        ``value`` (or ``ratio_of``), ``unit``, ``where`` and ``label``."""
        doc = tomllib.loads(text)
        raw = list(doc.get("value", []))
        by_id = {str(r.get("id")): r for r in raw}
        entries = []
        for r in raw:
            missing = [k for k in ("id", "where", "label") if not str(r.get(k, "")).strip()]
            if missing:
                raise ValueError(f"paper value {r.get('id')!r} lacks {', '.join(missing)}")
            if "ratio_of" in r:
                a, b = (float(by_id[k]["value"]) for k in r["ratio_of"])
                value = a / b
            else:
                value = float(r["value"])
            extra = {
                k: v for k, v in r.items() if k not in ("id", "value", "unit", "where", "label")
            }
            entries.append(
                PaperValue(
                    id=str(r["id"]),
                    value=value,
                    unit=str(r.get("unit", "")),
                    where=str(r["where"]),
                    label=str(r["label"]),
                    extra=extra,
                )
            )
        return cls(entries, doc.get("meta", {}))

    @classmethod
    def of_package(cls, package: str) -> PaperValues:
        """The ``paper.toml`` shipped in ``package`` (package data)."""
        return cls.parse(resources.files(package).joinpath(PAPER_FILE).read_text("utf-8"))


# -- claims and findings ---------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """A claim of the paper evaluated on vtlab's data.

    ``holds``: True, False, a qualified verdict (``"partly"``) or None when the
    campaign has no data to decide it.
    """

    where: str
    claim: str
    evidence: str
    holds: bool | str | None


#: What a claim's check returns: (evidence text, verdict).
Check = Callable[["Context"], tuple[str, bool | str | None]]


@dataclass(frozen=True)
class Claim:
    """A claim of the paper and the predicate that checks it on the context."""

    where: str
    claim: str
    check: Check


def evaluate_claims(claims: Sequence[Claim], ctx: Context) -> list[Finding]:
    """Evaluate every claim. A claim whose data are missing from this campaign (a
    lookup fails) is kept, with verdict None, rather than dropped."""
    findings = []
    for c in claims:
        try:
            evidence, holds = c.check(ctx)
        except (KeyError, IndexError, ValueError, ZeroDivisionError) as exc:
            evidence, holds = f"not evaluated: no data ({type(exc).__name__})", None
        if isinstance(holds, bool) or holds is None or isinstance(holds, str):
            findings.append(Finding(c.where, c.claim, evidence, holds))
        else:
            findings.append(Finding(c.where, c.claim, evidence, bool(holds)))
    return findings


# -- what a study declares -------------------------------------------------------------


@dataclass
class Context:
    """Everything the tables, figures, claims and report sections read."""

    study: Study
    config: Config
    plan: Any
    data: Mapping[str, Any]
    s: dict[str, Any]
    paper: PaperValues
    runs: int
    comparisons: list[Comparison] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    wall_s: float = math.nan
    campaign_wall_s: float = math.nan
    simulated: int = 0
    loaded: int = 0


@dataclass(frozen=True)
class TableSpec:
    """A table written as ``<stem>.csv``/``.parquet`` (and ``.md`` if ``markdown``)."""

    stem: str
    build: Callable[[Context], Any]
    markdown: Callable[[Context, Any], str] | None = None


@dataclass(frozen=True)
class FigureSpec:
    """A figure saved as ``<stem>.png``/``.svg``; ``draw`` returns the figure (or
    None when the plan has nothing to draw)."""

    stem: str
    draw: Callable[[Context], Any]


@dataclass(frozen=True)
class Section:
    """One part of the report: ``render`` returns Markdown (its own heading)."""

    name: str
    render: Callable[[Context], str]


def verdict_word(
    holds: bool | str | None, *, na: str = "n/a", yes: str = "holds", no: str = "does not hold"
) -> str:
    """A finding's verdict as a word: ``yes``/``no``, a qualified word as is, ``na``
    when it could not be evaluated."""
    if holds is None:
        return na
    if isinstance(holds, str):
        return holds
    return yes if holds else no


def findings_frame(findings: Sequence[Finding], *, where: str = "where", na: str = "n/a") -> Any:
    """The findings as a table (``where`` names the first column): a study's
    ``findings_table``."""
    import pandas as pd

    return pd.DataFrame(
        {
            where: [f.where for f in findings],
            "claim": [f.claim for f in findings],
            "vtlab": [f.evidence for f in findings],
            "verdict": [verdict_word(f.holds, na=na) for f in findings],
        }
    )


@dataclass(frozen=True)
class Study:
    """A study, declared as data and small functions: a paper reproduction, or with
    ``paper_file = None`` one of vtlab's own studies (no paper values, no comparison
    table; its claims are its own findings)."""

    name: str
    description: str
    #: The paper (or what the study is), printed as is under the report's title.
    citation: str
    package: str
    plan_for: Callable[[Config], Any]
    default_runs: Callable[[Any], int]
    grids: Callable[[Any, str, int], dict[str, Grid]]
    summarize: Callable[[Mapping[str, Any], Any], dict[str, Any]]
    tables: Sequence[TableSpec]
    figures: Sequence[FigureSpec]
    compare: Callable[[Context], list[Comparison]]
    claims: Callable[[Context], Sequence[Claim]]
    sections: Sequence[Section]
    #: Also write the findings as ``findings.csv``/``.parquet`` with these verdict words.
    findings_table: Callable[[Sequence[Finding]], Any] | None = None
    #: The paper's values in the package (``None``: an own study, without a paper).
    paper_file: str | None = PAPER_FILE

    @classmethod
    def of_modules(
        cls,
        *,
        name: str,
        description: str,
        citation: str,
        package: str,
        plan_for: Callable[[Config], Any],
        grids: Callable[[Any, str, int], dict[str, Grid]],
        analysis: Any,
        figures: Any,
        findings: Any,
        report: Any,
        findings_table: Callable[[Sequence[Finding]], Any] | None = None,
        paper_file: str | None = PAPER_FILE,
    ) -> Study:
        """A study whose modules follow the house layout: ``analysis`` has
        ``summarize_all``, ``tables()`` and ``compare``; ``figures`` has ``figures()``;
        ``findings`` has ``claims``; ``report`` has ``sections()``; the plan's
        ``runs`` is the default number of runs."""
        return cls(
            name=name,
            description=description,
            citation=citation,
            package=package,
            plan_for=plan_for,
            default_runs=lambda plan: plan.runs,
            grids=grids,
            summarize=analysis.summarize_all,
            tables=tuple(analysis.tables()),
            figures=tuple(figures.figures()),
            compare=analysis.compare,
            claims=findings.claims,
            sections=tuple(report.sections()),
            findings_table=findings_table,
            paper_file=paper_file,
        )

    @property
    def has_paper(self) -> bool:
        return self.paper_file is not None

    def paper(self) -> PaperValues:
        """The paper's values (none for an own study)."""
        if self.paper_file is None:
            return PaperValues([])
        text = resources.files(self.package).joinpath(self.paper_file).read_text("utf-8")
        return PaperValues.parse(text)

    def expected_outputs(self) -> list[str]:
        """Names of the files a reproduction writes (besides the run store)."""
        names = [f"{f.stem}.{ext}" for f in self.figures for ext in ("png", "svg")]
        stems = [t.stem for t in self.tables]
        if self.findings_table is not None:
            stems.append("findings")
        if self.has_paper:
            stems.append("comparison")
        names += [f"{t}.{ext}" for t in stems for ext in ("csv", "parquet")]
        names += [f"{t.stem}.md" for t in self.tables if t.markdown is not None]
        names += ["report.md", common.CAMPAIGN_LOG]
        return names

    def reproduce(self, config: Config) -> Outcome:
        return run(self, config)


# -- the report's common sections ------------------------------------------------------

#: The last row of every report's file list.
STORE_FILES = (
    "`runs/`, `flows/`, `links/`, ..., `campaign.json`",
    "the run store (one Parquet dataset per table) and the session log",
)

#: A study's own rows of a report table, from the context.
Rows = Callable[[Context], Sequence[Sequence[str]]]


def held(findings: Sequence[Finding]) -> int:
    """How many findings hold in full."""
    return sum(1 for f in findings if f.holds is True)


def header_section(title: str, rows: Rows, quick: Callable[[Context], str]) -> Section:
    """The report's head: ``# title``, the study's citation, the setup table — the
    command, the vtlab version, the study's own ``rows``, the campaign's and this
    invocation's wall times — and with ``--quick`` the study's ``quick`` note."""

    def render(ctx: Context) -> str:
        cfg = ctx.config
        table = [
            ["command", f"`{cfg.command(ctx.study.name)}`"],
            ["vtlab version", f"{common.version()} (core build {common.core_build()})"],
            *rows(ctx),
            *common.session_rows(ctx.campaign_wall_s, ctx.wall_s, ctx.simulated, ctx.loaded),
        ]
        text = [
            f"# {title}\n",
            f"{ctx.study.citation}\n",
            common.md_table(["", ""], table, align="ll"),
        ]
        if cfg.quick:
            text.append(quick(ctx))
        return "\n".join(text)

    return Section("header", render)


def comparison_section(
    digits: int,
    *,
    note: str = "",
    lead: Callable[[Context], str] | None = None,
    after: Callable[[Context], str] | None = None,
) -> Section:
    """The section "The paper's numbers beside vtlab's": every comparison (``digits`` decimals),
    relative differences beyond :data:`~vtlab.experiments.common.LARGE_DEVIATION` in
    bold. ``lead`` opens the paragraph, ``note`` ends its sentence on the bold
    differences (e.g. ``"; gains are in per cent"``), ``after`` follows the table."""

    def render(ctx: Context) -> str:
        big = common.LARGE_DEVIATION * 100
        return (
            "## The paper's numbers beside vtlab's\n\n"
            + (lead(ctx) if lead is not None else "")
            + f"Relative differences beyond {big:g} % are in bold{note}.\n\n"
            + common.within_sentence(ctx.comparisons)
            + common.comparison_table(ctx.comparisons, digits=digits)
            + (after(ctx) if after is not None else "")
        )

    return Section("paper numbers", render)


def findings_section(
    heading: str,
    intro: str = "",
    *,
    note: Callable[[Context], str] | None = None,
    headers: Sequence[str] = ("where", "paper", "vtlab", "verdict"),
    verdict: Callable[[bool | str | None], str] = verdict_word,
) -> Section:
    """The findings as a table (where, claim, evidence, ``verdict`` word) under
    ``## heading``. ``intro`` is formatted with ``held`` (the findings that hold in
    full) and ``total``; ``note`` adds to it."""

    def render(ctx: Context) -> str:
        text = f"## {heading}\n\n"
        if intro:
            text += intro.format(held=held(ctx.findings), total=len(ctx.findings))
            text += (note(ctx) if note is not None else "") + "\n\n"
        rows = [[f.where, f.claim, f.evidence, verdict(f.holds)] for f in ctx.findings]
        return text + common.md_table(list(headers), rows, align="llll")

    return Section("findings", render)


def files_section(rows: Sequence[Sequence[str]] | Rows) -> Section:
    """``## Files``: the study's output files and what each holds (``rows``, or a
    function of the context giving them), then the run store and the session log."""

    def render(ctx: Context) -> str:
        own = rows(ctx) if callable(rows) else rows
        table = [*own, list(STORE_FILES)]
        return "## Files\n\n" + common.md_table(["file", "content"], table, align="ll")

    return Section("files", render)


# -- the pipeline ----------------------------------------------------------------------


def run_grids(study: Study, config: Config) -> tuple[Any, dict[str, Any], Campaign]:
    """Run (or load from the store) every grid of the study's plan."""
    plan = study.plan_for(config)
    campaign = Campaign(config, study.default_runs(plan))
    grids = study.grids(plan, config.profile, campaign.runs)
    data = {name: campaign.run(grid) for name, grid in grids.items()}
    return plan, data, campaign


def write_tables(ctx: Context, out: Path) -> list[Path]:
    """Every table of the study."""
    files: list[Path] = []
    for t in ctx.study.tables:
        frame = t.build(ctx)
        md = t.markdown(ctx, frame) if t.markdown is not None else None
        files += common.write_table(frame, out, t.stem, md)
    return files


def drawing_figures(
    ctx: Context, out: Path
) -> contextlib.AbstractContextManager[Callable[[], list[Path]]]:
    """Every figure of the study, drawn while the block runs, ``--jobs`` at a time in
    forked processes (with one job, here before it; :func:`figcache.drawing`): gives
    a function that waits for them, records them in ``OUT/.figures.json`` and returns
    their files. A figure is drawn again only when its inputs changed: re-rendering a
    finished campaign then redraws nothing."""
    config = {"study": ctx.study.name, "quick": ctx.config.quick, "runs": ctx.runs}
    cache = figcache.FigureCache(
        out, figcache.inputs_key(Path(ctx.config.out), {**config, "profile": ctx.config.profile})
    )

    def draw(f: FigureSpec) -> Callable[[], list[Path] | None]:
        def drawn() -> list[Path] | None:
            with common.style():
                fig = f.draw(ctx)
                return None if fig is None else common.save_figure(fig, out, f.stem)

        return drawn

    draws = {f.stem: draw(f) for f in ctx.study.figures}
    return figcache.drawing(cache, draws, ctx.config.jobs or os.cpu_count() or 1)


def check(ctx: Context, out: Path) -> list[Path]:
    """The paper's numbers compared and the study's claims checked (into ``ctx``),
    and their tables."""
    study = ctx.study
    ctx.comparisons = study.compare(ctx)
    ctx.findings = evaluate_claims(study.claims(ctx), ctx)
    files: list[Path] = []
    if study.has_paper:
        files += common.write_table(common.comparison_frame(ctx.comparisons), out, "comparison")
    if study.findings_table is not None:
        files += common.write_table(study.findings_table(ctx.findings), out, "findings")
    return files


def render_report(ctx: Context) -> str:
    return "\n".join(section.render(ctx) for section in ctx.study.sections)


def run(study: Study, config: Config) -> Outcome:
    """Run the study's campaign into ``config.out`` and write its tables, figures and
    ``report.md``."""
    started, out, plan, data, campaign, campaign_wall = common.run_campaign(
        config, study.name, lambda cfg: run_grids(study, cfg)
    )
    ctx = Context(
        study=study,
        config=config,
        plan=plan,
        data=data,
        s=study.summarize(data, plan),
        paper=study.paper(),
        runs=campaign.runs,
        campaign_wall_s=campaign_wall,
        simulated=campaign.simulated,
        loaded=campaign.loaded,
    )
    files = write_tables(ctx, out)
    # The figures are drawn while this process compares and checks the claims: each
    # needs only the summaries, which neither changes.
    with drawing_figures(ctx, out) as figures:
        checked = check(ctx, out)
        files += figures()
    files += checked
    ctx.wall_s = time.perf_counter() - started
    (out / "report.md").write_text(render_report(ctx))
    files += [out / "report.md", out / common.CAMPAIGN_LOG]
    return Outcome(
        out=out,
        files=files,
        wall_s=time.perf_counter() - started,
        simulated=campaign.simulated,
        loaded=campaign.loaded,
        campaign_wall_s=campaign_wall,
        findings=ctx.findings,
        paper_within=common.within_counts(ctx.comparisons) if study.has_paper else None,
    )
