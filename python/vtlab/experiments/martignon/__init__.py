"""Martignon: NewReno with the Vegas loss predictor over wired + wireless paths
(``vtlab reproduce martignon``).

The study (ns-2) gives NewReno a loss predictor: at every loss event the Vegas
predictor V_p = cwnd·(1 − RTT_min/RTT) decides whether the loss came from congestion
(halve, as NewReno) or from the noisy wireless link (ssthresh = flight size, no
halving). It measures the predictor's accuracy, the goodput of NewReno, NewReno-LP,
Westwood-NR and an ideal predictor on the path S —(C_SN, T_SN)— N —(C_ND, T_ND,
losses)— D, short transfers, friendliness and fairness.

The study as data plus small functions, run by :mod:`vtlab.experiments.pipeline`:
``paper.toml`` (the numbers the text states, each with its location), :mod:`.plan`
(senders, plans, grids), :mod:`.analysis` (summaries, tables, comparison),
:mod:`.figures`, :mod:`.findings` (the claims as predicates), :mod:`.report` and
:mod:`.deviations` (the report's sections).
"""

from __future__ import annotations

from vtlab.experiments.martignon import analysis, figures, findings, report
from vtlab.experiments.martignon.analysis import (
    DATA_TABLES,
    class_bounds,
    findings_frame,
    with_accuracy,
)
from vtlab.experiments.martignon.plan import (
    FULL,
    INITIAL_CWND,
    PAIR,
    QDISC,
    QUICK,
    TCP,
    VARIANTS,
    Plan,
    grids,
    other_profile,
    plan_for,
)
from vtlab.experiments.pipeline import Study

NAME = "martignon"
DESCRIPTION = (
    "Martignon, NewReno-LP over wired+wireless paths: accuracy (Fig. 2), goodput "
    "(Figs. 3-6), short transfers, friendliness (Fig. 7), Jain's index"
)
CITATION = (
    "F. Martignon, *TCP NewReno enhanced with the Vegas loss predictor (TCP NewReno-LP)*, "
    "ns-2 study of loss differentiation over heterogeneous wired/wireless networks (the "
    "figures' data are not in the text, only the numbers and claims quoted below)."
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
    "CITATION",
    "DATA_TABLES",
    "DESCRIPTION",
    "FIGURES",
    "FULL",
    "INITIAL_CWND",
    "NAME",
    "PAIR",
    "QDISC",
    "QUICK",
    "STUDY",
    "TCP",
    "VARIANTS",
    "Plan",
    "class_bounds",
    "expected_outputs",
    "grids",
    "other_profile",
    "paper",
    "with_accuracy",
]
