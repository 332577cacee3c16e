"""Hu, Lin, Bai & Tonguz: LTE Internet access in moving vehicles, ARWND + ACWND
(``vtlab reproduce hu-lte``).

A testbed study: a laptop in a car reaches a server about 80 ms away through an LTE
hotspot; CUBIC's fixed receive window throttles it, and a large one fills the base
station's buffer. The proposal adapts the laptop's TCP to the RTT ratio γ = R_m/R_t:
ARWND at its receiver (DL: advertised window, multiplier λ) and ACWND at its sender
(UL: reduce by γ on loss, grow with λ while γ ≈ 1); the server is unmodified. vtlab
runs it on the ``lte-cabin`` preset.

The study as data plus small functions, run by :mod:`vtlab.experiments.pipeline`:
``paper.toml`` (Table I and the numbers the text states, each with its location),
:mod:`.plan` (schemes, plans, grids), :mod:`.analysis` (summaries, tables,
comparison), :mod:`.figures`, :mod:`.findings` (the claims as predicates),
:mod:`.report`, :mod:`.discussion` and :mod:`.assumptions` (the report's sections).
"""

from __future__ import annotations

from vtlab.experiments.hu_lte import analysis, figures, findings, report
from vtlab.experiments.hu_lte.analysis import findings_frame
from vtlab.experiments.hu_lte.plan import (
    ADAPTIVE,
    CUBIC,
    CUBIC_6M,
    FULL,
    QUICK,
    STATIC_RSRP,
    Plan,
    grids,
    plan_for,
    preset_lambda,
)
from vtlab.experiments.pipeline import Study

NAME = "hu-lte"
DESCRIPTION = (
    "Hu et al., LTE in moving vehicles: ARWND+ACWND vs CUBIC, Table I, RTT, λ vs RSRP "
    "(Fig. 9) and speed (Fig. 10), sensitivity"
)
CITATION = (
    "Hu, Lin, Bai & Tonguz, *Performance Enhancement of LTE Internet Access Network in "
    "Moving Vehicles* (testbed: laptop in a car, LTE hotspot, LTE Rel-8 10 MHz, modified "
    "Linux CUBIC)."
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
    "ADAPTIVE",
    "CITATION",
    "CUBIC",
    "CUBIC_6M",
    "DESCRIPTION",
    "FIGURES",
    "FULL",
    "NAME",
    "QUICK",
    "STATIC_RSRP",
    "STUDY",
    "Plan",
    "expected_outputs",
    "grids",
    "paper",
    "preset_lambda",
]
