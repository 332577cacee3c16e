"""ISO 15118-2 charging sessions over a lossy power-line link (``vtlab study
iso15118``): vtlab's own study, not a paper reproduction.

How often does a 30-minute ISO 15118-2 DC charging session survive — every
CurrentDemand answered within its 250 ms deadline — when the charging cable's
power-line link loses packets, for ns-3's TCP stack and Linux's without and with
RACK-TLP, four congestion controls, and losses from single packets to bursts of 8;
and what happens to the sessions of 21 vehicles whose power-line segments also carry
bulk transfers.

The study as data plus small functions, run by :mod:`vtlab.experiments.pipeline`:
:mod:`.plan` (stacks, grid, full and quick plans), :mod:`.analysis` (survival with
Wilson intervals, the pooled response-time tail, the headline), :mod:`.figures`,
:mod:`.findings` (the study's own statements, checked) and :mod:`.report`. It has no
``paper.toml``.
"""

from __future__ import annotations

from vtlab.experiments.iso15118 import analysis, figures, findings, report
from vtlab.experiments.iso15118.analysis import wilson
from vtlab.experiments.iso15118.plan import FULL, QUICK, STACKS, Plan, grids, plan_for
from vtlab.experiments.pipeline import Study, findings_frame

NAME = "iso15118"
DESCRIPTION = (
    "ISO 15118-2 DC sessions over a lossy PLC link: survival of a 30-minute session "
    "(Wilson 95 %) by loss, burst size, stack (ns3, linux, linux+rack-tlp) and cc; "
    "21 vehicles beside bulk transfers"
)
CITATION = (
    "vtlab's own study (no paper): the survival of ISO 15118-2 DC charging sessions "
    "(DIN SPEC 70121's sibling; V2G_EVCC_Msg_Timeout of CurrentDemand 250 ms) over the "
    "charging cable of Park et al. 2019's V2G topology, by loss rate, burst size, TCP "
    "stack and congestion control"
)

STUDY = Study.of_modules(
    name=NAME,
    description=DESCRIPTION,
    citation=CITATION,
    package=__name__,
    plan_for=plan_for,
    grids=grids,
    analysis=analysis,
    figures=figures,
    findings=findings,
    report=report,
    findings_table=lambda found: findings_frame(found, where="where"),
    paper_file=None,
)

#: Names of the files a run of the study writes (besides the run store).
expected_outputs = STUDY.expected_outputs

__all__ = [
    "CITATION",
    "DESCRIPTION",
    "FULL",
    "NAME",
    "QUICK",
    "STACKS",
    "STUDY",
    "Plan",
    "expected_outputs",
    "grids",
    "plan_for",
    "wilson",
]
