"""Park, Kim & Choi 2019: TCP over the V2G charging cable (``vtlab reproduce park2019``).

J. Park, H. Kim, J.-Y. Choi, "Improving TCP Performance in Vehicle-To-Grid (V2G)
Communication", Electronics 8(11):1206, 2019 (doi:10.3390/electronics8111206).

The study as data plus small functions, run by :mod:`vtlab.experiments.pipeline`:

* ``paper.toml``: every published number (Table 2 and the numbers the text quotes),
  each with its location in the paper and a label;
* :mod:`.plan`: the algorithms, the full and quick plans and the grids (the single-
  vehicle ``v2g`` preset, paper Fig. 3, and the 21-vehicle ``station``, Fig. 5);
* :mod:`.analysis`: summaries, tables, the comparison with the paper, ns-3.44
  reference values from ``validation/``;
* :mod:`.figures`, :mod:`.findings` (+ :mod:`.fig11`): figures and the paper's claims
  as predicates;
* :mod:`.report` (+ :mod:`.deviations`): the report's sections.
"""

from __future__ import annotations

from vtlab.experiments.park2019 import analysis, figures, findings, report
from vtlab.experiments.park2019.plan import (
    FIG8_VARIANTS,
    FIG11_VARIANTS,
    FIG12_VARIANTS,
    FULL,
    QUICK,
    VARIANTS,
    WESTWOOD_ORIGINAL,
    Plan,
    grids,
    plan_for,
)
from vtlab.experiments.pipeline import Study, TableSpec

NAME = "park2019"
DESCRIPTION = (
    "Park, Kim & Choi 2019, TCP over the V2G charging cable: Table 2, Figs. 4, 6, 7, 8, 11, 12"
)
CITATION = (
    "J. Park, H. Kim, J.-Y. Choi, *Improving TCP Performance in Vehicle-To-Grid (V2G) "
    "Communication*, Electronics 8(11):1206, 2019, doi:10.3390/electronics8111206."
)

STUDY = Study(
    name=NAME,
    description=DESCRIPTION,
    citation=CITATION,
    package=__name__,
    plan_for=plan_for,
    default_runs=lambda plan: plan.runs,
    grids=grids,
    summarize=analysis.summarize_all,
    tables=(
        TableSpec("table2", analysis.table2_table, analysis.table2_markdown),
        TableSpec("fig4", analysis.goodput_table("fig4")),
        TableSpec("fig6", analysis.goodput_table("fig6")),
        TableSpec("fig11", analysis.fig11_table),
        TableSpec("fig8", analysis.fig8_table),
    ),
    figures=tuple(figures.figures()),
    compare=analysis.compare,
    claims=findings.claims,
    sections=tuple(report.sections()),
)

#: Figure stems, for tests and docs.
FIGURES = tuple(f.stem for f in STUDY.figures)


def expected_outputs() -> list[str]:
    """Names of the files a reproduction writes (besides the run store)."""
    return STUDY.expected_outputs()


def paper():
    """The paper's published numbers (``paper.toml``)."""
    return STUDY.paper()


__all__ = [
    "CITATION",
    "DESCRIPTION",
    "FIG8_VARIANTS",
    "FIG11_VARIANTS",
    "FIG12_VARIANTS",
    "FULL",
    "FIGURES",
    "NAME",
    "QUICK",
    "STUDY",
    "VARIANTS",
    "WESTWOOD_ORIGINAL",
    "Plan",
    "expected_outputs",
    "grids",
    "paper",
]
