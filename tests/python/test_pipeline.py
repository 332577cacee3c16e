"""The study pipeline (:mod:`vtlab.experiments.pipeline`) on a tiny fake study: plan →
run store → table → figure → findings → report, resumption without re-simulating,
a claim that does not hold reported as such; the paper-values format; the registry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from vtlab import experiments
from vtlab.experiments import common, figcache, pipeline
from vtlab.experiments.common import Comparison, Config, Grid
from vtlab.experiments.pipeline import (
    Claim,
    Context,
    FigureSpec,
    Finding,
    PaperValues,
    Section,
    Study,
    TableSpec,
    evaluate_claims,
)
from vtlab.storefiles import ROOT_FILES
from vtlab.sweep import Axis

PAPER_TOML = """
[[value]]
id = "goodput"
value = 9.0
unit = "Mbit/s"
where = "Table 1, row 1"
label = "goodput, 1 connection, no loss"

[[value]]
id = "link"
value = 10.0
unit = "Mbit/s"
where = "§2, Fig. 1"
label = "PLC link rate"

[[value]]
id = "share"
ratio_of = ["goodput", "link"]
unit = ""
where = "§3"
label = "goodput / link rate"
"""


def _fake_study(package: str) -> Study:
    """Two runs (seeds 1 and 2) of a 200 kB transfer over the loss-free V2G cable."""

    def grids(plan, profile, runs):
        base = {"preset": "v2g", "bytes": "200kB"}
        axes = (Axis.values("loss.mean_loss", [0.0], name="loss"),)
        return {"only": Grid("only", "the only grid", base, axes)}

    def summarize(data, plan):
        flows = data["only"].flows
        return {"goodput": common.summarize_runs(flows, ["loss"], "goodput_bps", scale=1e-6)}

    def compare(ctx: Context) -> list[Comparison]:
        row = ctx.s["goodput"].iloc[0]
        e = ctx.paper["goodput"]
        return [Comparison(e.where, e.label, e.value, float(row["mean"]), n=int(row["n"]))]

    def draw(ctx: Context):
        fig, ax = common.figure()
        ax.plot([0, 1], [0, float(ctx.s["goodput"]["mean"].iloc[0])])
        return fig

    def mean(ctx: Context) -> float:
        return float(ctx.s["goodput"]["mean"].iloc[0])

    def claims(ctx: Context) -> list[Claim]:
        link = ctx.paper.value("link")
        return [
            # Holds: a transfer over a link of 10 Mbit/s has a positive goodput.
            Claim("Fig. 1", "goodput is positive", lambda c: (f"{mean(c):.3f}", mean(c) > 0)),
            # Cannot hold: goodput is below the link rate.
            Claim(
                "Fig. 1",
                f"goodput exceeds the {link:g} Mbit/s link",
                lambda c: (f"{mean(c):.3f} Mbit/s", mean(c) > link),
            ),
        ]

    def report(ctx: Context) -> str:
        rows = [[f.where, f.claim, "holds" if f.holds else "does not hold"] for f in ctx.findings]
        return "# fake\n\n" + common.md_table(["where", "claim", "verdict"], rows)

    return Study(
        name="fake",
        description="a fake study",
        citation="nobody",
        package=package,
        plan_for=lambda config: {"runs": 2},
        default_runs=lambda plan: plan["runs"],
        grids=grids,
        summarize=summarize,
        tables=(TableSpec("goodput", lambda c: c.s["goodput"], lambda c, f: "| x |\n"),),
        figures=(FigureSpec("fig1", draw),),
        compare=compare,
        claims=claims,
        sections=(Section("all", report),),
    )


@pytest.fixture
def study(tmp_path, monkeypatch) -> Study:
    pkg = tmp_path / "pkgs" / "fakestudy"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "paper.toml").write_text(PAPER_TOML)
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    return _fake_study("fakestudy")


def test_fake_study_end_to_end_then_resumes_without_simulating(study, tmp_path, monkeypatch):
    out = tmp_path / "out"
    config = Config(out=out, progress=False, jobs=1)
    first = pipeline.run(study, config)
    assert (first.simulated, first.loaded) == (2, 0)
    written = [p.name for p in out.iterdir() if p.is_file() and p.name not in ROOT_FILES]
    assert sorted(written) == sorted([*study.expected_outputs(), figcache.CACHE_FILE])
    table = pd.read_csv(out / "goodput.csv")
    assert list(table["n"]) == [2]
    assert 0 < table["mean"].iloc[0] < 10  # below the 10 Mbit/s PLC link
    comparison = pd.read_csv(out / "comparison.csv")
    assert list(comparison["paper"]) == [9.0]
    assert list(comparison["quantity"]) == ["goodput, 1 connection, no loss"]
    report = (out / "report.md").read_text()
    assert "| Fig. 1 | goodput is positive | holds |" in report
    assert "| Fig. 1 | goodput exceeds the 10 Mbit/s link | does not hold |" in report
    assert [f.holds for f in first.findings] == [True, False]

    def no_simulation(*args, **kwargs):
        raise AssertionError("stored runs must not be simulated again")

    monkeypatch.setattr("vtlab.sweep._core.run", no_simulation)
    again = pipeline.run(study, config)
    assert (again.simulated, again.loaded) == (0, 2)
    assert pd.read_csv(out / "goodput.csv").equals(table)


def test_a_rerender_draws_only_the_figures_whose_inputs_changed(study, tmp_path, monkeypatch):
    """A finished campaign re-rendered draws no figure (same runs, same code, same
    options); a figure file changed or removed is drawn again; new runs in the store
    (another runs count) draw every figure again."""
    out = tmp_path / "out"
    config = Config(out=out, progress=False, jobs=1)
    pipeline.run(study, config)
    png = (out / "fig1.png").read_bytes()
    drawn: list[str] = []
    real_save = common.save_figure

    def counting_save(fig, where, stem):
        drawn.append(stem)
        return real_save(fig, where, stem)

    monkeypatch.setattr(common, "save_figure", counting_save)
    pipeline.run(study, config)
    assert drawn == [], "nothing changed: nothing drawn"
    (out / "fig1.svg").write_text("changed")
    pipeline.run(study, config)
    assert drawn == ["fig1"] and (out / "fig1.png").read_bytes() == png
    (out / "fig1.png").unlink()
    pipeline.run(study, config)
    assert drawn == ["fig1", "fig1"] and (out / "fig1.png").read_bytes() == png
    pipeline.run(study, Config(out=out, progress=False, jobs=1, runs=3))  # a third seed
    assert drawn == ["fig1", "fig1", "fig1"]


def test_figures_drawn_side_by_side_are_the_files_drawn_one_by_one(study, tmp_path):
    """With two jobs a study's figures are drawn in forked children (vtlab.forkmap),
    each the same bytes as drawn in this process one after another."""
    import dataclasses

    pids = tmp_path / "pids"

    def figure(stem: str, height: float) -> FigureSpec:
        def draw(ctx: Context):
            with open(pids, "a") as fh:
                fh.write(f"{stem} {os.getpid()}\n")
            fig, ax = common.figure(height=height)
            ax.plot([0, 1, 2], [0, float(ctx.s["goodput"]["mean"].iloc[0]), height])
            return fig

        return FigureSpec(stem, draw)

    three = dataclasses.replace(
        study, figures=tuple(figure(f"fig{i}", 2.0 + i) for i in range(1, 4))
    )
    for jobs in (1, 2):
        pipeline.run(three, Config(out=tmp_path / f"jobs{jobs}", progress=False, jobs=jobs))
        drew = [line.split() for line in pids.read_text().splitlines()]
        pids.unlink()
        assert sorted(stem for stem, _ in drew) == ["fig1", "fig2", "fig3"]
        here = {int(pid) == os.getpid() for _, pid in drew}
        assert here == ({True} if jobs == 1 else {False})
    for name in (f"fig{i}.{ext}" for i in range(1, 4) for ext in ("png", "svg")):
        assert (tmp_path / "jobs1" / name).read_bytes() == (tmp_path / "jobs2" / name).read_bytes()


def test_a_claim_without_data_is_kept_and_marked(study, tmp_path):
    ctx = Context(study, Config(out=tmp_path), None, {}, {}, PaperValues([]), runs=1)
    claims = [
        Claim("x", "needs a missing table", lambda c: ("", c.s["nothing"]["mean"] > 0)),
        Claim("y", "holds partly", lambda c: ("2 of 4", "partly")),
    ]
    found = evaluate_claims(claims, ctx)
    assert [(f.where, f.holds) for f in found] == [("x", None), ("y", "partly")]
    assert "no data" in found[0].evidence


def test_the_report_sections_every_study_shares(study, tmp_path):
    ctx = Context(
        study,
        Config(out=tmp_path, quick=True),
        None,
        {},
        {},
        PaperValues([]),
        runs=2,
        comparisons=[Comparison("Table 1", "goodput", 9.0, 12.0, ci=0.5, n=2)],
        findings=[
            Finding("Fig. 1", "first", "1.0", True),
            Finding("Fig. 2", "second", "0.5", False),
            Finding("Fig. 3", "third", "no data", None),
        ],
        wall_s=1.0,
        campaign_wall_s=3.0,
        simulated=2,
    )
    header = pipeline.header_section(
        "A title", lambda c: [["runs per point", str(c.runs)]], lambda c: "> quick\n"
    ).render(ctx)
    assert header.startswith("# A title\n\nnobody\n\n")
    rows = [line.split(" | ")[0] for line in header.splitlines() if line.startswith("| ")]
    assert rows[1:] == [
        "| command",
        "| vtlab version",
        "| runs per point",
        "| campaign wall time",
        "| this invocation",
        "| generated",
    ]
    assert "`vtlab reproduce fake --quick`" in header and header.endswith("> quick\n")
    paper = pipeline.comparison_section(1, note="; gains in per cent").render(ctx)
    assert "beyond 25 % are in bold; gains in per cent.\n\n" in paper
    assert "| goodput | 9.0 Mbit/s | 12.0 ± 0.5 | **+33.3 %** |" in paper
    found = pipeline.findings_section("Claims", "{held} of {total} hold.").render(ctx)
    assert found.startswith("## Claims\n\n1 of 3 hold.\n\n| where | paper | vtlab | verdict |")
    assert "| Fig. 2 | second | 0.5 | does not hold |" in found
    assert "| Fig. 3 | third | no data | n/a |" in found
    files = pipeline.files_section([["`fig1.png`", "the figure"]]).render(ctx)
    assert files.splitlines()[-2:] == [
        "| `fig1.png` | the figure |",
        "| `runs/`, `flows/`, `links/`, ..., `campaign.json` | the run store (one Parquet "
        "dataset per table) and the session log |",
    ]


def test_paper_values_parse_ratios_and_refuse_entries_without_location():
    paper = PaperValues.parse(PAPER_TOML)
    assert list(paper) == ["goodput", "link", "share"]
    assert paper.value("share") == pytest.approx(0.9)
    assert paper["link"].where == "§2, Fig. 1" and paper["link"].section == "§2, Fig. 1"
    no_where = 'value = [{id = "a", value = 1.0, label = "a", where = ""}]'
    with pytest.raises(ValueError, match="lacks where"):
        PaperValues.parse(no_where)
    twice = '[[value]]\nid = "a"\nvalue = 1\nwhere = "p"\nlabel = "a"\n' * 2
    with pytest.raises(ValueError, match="duplicate"):
        PaperValues.parse(twice)


def test_every_registered_study_is_a_package_with_paper_values():
    for name in experiments.names():
        study = experiments.load_study(name)
        assert study.name == name
        paper = study.paper()
        assert len(paper) > 0
        assert all(e.where and e.label for e in paper.values())
        pkg = Path(experiments.load(name).__file__).parent
        assert (pkg / pipeline.PAPER_FILE).is_file()


@pytest.mark.parametrize(
    ("kind", "name"),
    [(kind, name) for kind in experiments.KINDS for name in experiments.names(kind)],
)
@pytest.mark.parametrize("quick", [False, True], ids=["full", "quick"])
def test_every_grid_of_every_study_is_a_sweep_it_may_run(kind, name, quick, tmp_path):
    """Each grid builds its sweep and its points as a campaign does, before any run.
    The full `vtlab study iso15118` was refused at its start: 8 losses × 3 bursts × 3
    stacks × 4 algorithms × 400 seeds = 115 200 runs, above a sweep's limit then
    (100 000; vtlab.api.MAX_SWEEP_RUNS is 1 000 000 now)."""
    study = experiments.load_study(name, kind)
    config = Config(out=tmp_path, quick=quick)
    plan = study.plan_for(config)
    runs = study.default_runs(plan)
    grids = study.grids(plan, config.profile, runs)
    assert grids
    for grid in grids.values():
        sweep = grid.sweep(runs, config.profile)
        assert len(sweep.points()) >= 1


def test_reproduce_command_imports_no_study_and_no_matplotlib():
    code = textwrap.dedent(
        """
        import sys
        import vtlab.cli.reproduce
        heavy = [m for m in sys.modules if m.startswith(("matplotlib", "vtlab.experiments."))]
        print(heavy)
        """
    )
    import vtlab

    env = {**os.environ, "PYTHONPATH": str(Path(vtlab.__file__).parents[1])}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert res.stdout.strip() == "[]"


def test_studies_import_vtlab_at_the_top():
    """No study imports a vtlab module inside a function (the package-wide import
    graph, cycles included, is test_house.py's)."""
    import ast

    inner = []
    for path in Path(experiments.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    targets = [node.module or ""] if not node.level else ["vtlab"]
                else:
                    continue
                if any(t.startswith("vtlab") for t in targets):
                    inner.append(f"{path.name}:{node.lineno}")
    assert inner == []


def test_no_function_in_a_study_exceeds_80_lines():
    import ast

    root = Path(experiments.__file__).parent
    long = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.end_lineno - node.lineno + 1 > 80:
                long.append(f"{path.name}:{node.name}")
    assert long == []
    studies = [p for p in root.rglob("*.py") if p.parent != root]
    assert max(len(p.read_text().splitlines()) for p in studies) <= 600
