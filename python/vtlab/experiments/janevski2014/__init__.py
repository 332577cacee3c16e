"""Janevski & Petrov: TCP over IEEE 802.11 between vehicles
(``vtlab reproduce janevski2014``).

An ns-2 study: Tahoe, Reno, NewReno, Vegas and Sack between vehicles 200 m apart
driving at 20 km/h, over one hop and over an 8-hop chain of 9 vehicles, at the
1 Mbit/s mode of 802.11, sweeping the DupAck threshold (1-10), the interface queue
(IFQ 2-50 packets) and DelAck (1, 2), without errors and with a 20 % two-state on-off
error model (Figs. 3-10). vtlab runs it on the ``vanet-chain`` preset.

The study as data plus small functions, run by :mod:`vtlab.experiments.pipeline`:
``paper.toml`` (the setup, the three results the text states, the figures and every
claim, each with its location), :mod:`.plan` (TCP versions, error-model readings,
plans, grids), :mod:`.analysis` (summaries, tables, comparison), :mod:`.figures`,
:mod:`.findings` and :mod:`.ifq_claims` (the claims as predicates), :mod:`.report`
and :mod:`.assumptions` (the report's sections).
"""

from __future__ import annotations

from vtlab.experiments.janevski2014 import analysis, figures, findings, report
from vtlab.experiments.janevski2014.analysis import findings_frame, paper_claims, paper_figures
from vtlab.experiments.janevski2014.plan import (
    CALIBRATED,
    CLEAN,
    ERROR_20,
    FULL,
    QUICK,
    TCPS,
    Plan,
    grids,
    plan_for,
)
from vtlab.experiments.pipeline import Study

NAME = "janevski2014"
DESCRIPTION = (
    "Janevski & Petrov, TCP over 802.11 between vehicles: 5 TCPs × DupAck × IFQ × DelAck, "
    "1 and 8 hops, 0/20 % errors (Figs. 3-10)"
)
CITATION = (
    "T. Janevski and I. Petrov, *Cross-layer TCP Performance Analysis in IEEE 802.11 "
    "Vehicular Environments* (2014; ns-2: Tahoe, Reno, NewReno, Vegas and Sack between "
    "vehicles over 802.11, single hop and an 8-hop chain; the figures' data are not in "
    "the text, only the numbers and claims quoted below)."
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
    findings_table=findings_frame,
)

#: Figure stems, for tests and docs.
FIGURES = tuple(f.stem for f in STUDY.figures)

#: Names of the files a reproduction writes (besides the run store).
expected_outputs = STUDY.expected_outputs

#: The paper's published numbers (``paper.toml``).
paper = STUDY.paper


__all__ = [
    "CALIBRATED",
    "CITATION",
    "CLEAN",
    "DESCRIPTION",
    "ERROR_20",
    "FIGURES",
    "FULL",
    "NAME",
    "QUICK",
    "STUDY",
    "TCPS",
    "Plan",
    "expected_outputs",
    "grids",
    "paper",
    "paper_claims",
    "paper_figures",
]
