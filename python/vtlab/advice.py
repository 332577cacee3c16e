"""``vtlab advise``: which settings keep a charging session alive on a given cable.

Given the cable (a preset or scenario with the ``v2g`` PLC link), its loss (a mean
loss and burst size, or a measured loss trace fitted to ns-3's burst model) and the
session (profile, loop length, the charger's processing time, the loop period), every
setting of :func:`vtlab.survival.settings` is estimated with the conditional
estimator of :mod:`vtlab.survival` and those whose lower bound reaches the target
are returned. The runs behind each estimate are stored as JSON in ``out`` and reused
when the same question is asked again.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vtlab import survival as sv
from vtlab.api import core_build
from vtlab.errors import CliError as AdviceError
from vtlab.errors import os_problem
from vtlab.forkmap import fork_map
from vtlab.storefiles import write_json_durably

#: The session fields the options set, for errors.
SESSION_OPTIONS = {
    "session.duration": "--duration",
    "session.processing": "--processing",
    "session.period": "--period",
}

#: Session profiles the advice knows.
PROFILES = ("iso15118-2-dc", "iso15118-2-ac", "din70121-dc")


@dataclass(frozen=True)
class Verdict:
    """One setting's estimated survival and the runs behind it."""

    setting: str
    survival: float
    lower: float
    upper: float
    runs: int
    k_max: int
    #: (k, runs, survived) per number of bursts.
    per_k: list[tuple[int, int, int]]
    evidence: str


@dataclass(frozen=True)
class Advice:
    target: float
    mean_loss: float
    burst: tuple[int, int]
    verdicts: list[Verdict]

    @property
    def keeping(self) -> list[Verdict]:
        """The settings whose lower bound reaches the target, best first."""
        return [v for v in self.verdicts if v.lower >= self.target]

    @property
    def best(self) -> Verdict:
        return self.verdicts[0]


def parse_burst(text: str) -> tuple[int, int]:
    """``"1"``, ``"1-4"`` or ``"4–8"`` → (min, max), 1 ≤ min ≤ max ≤ 1000."""
    parts = text.replace("–", "-").split("-")
    try:
        lo, hi = (int(parts[0]), int(parts[-1])) if len(parts) <= 2 else (0, -1)
    except ValueError:
        lo, hi = 0, -1
    if not 1 <= lo <= hi <= 1000:
        raise AdviceError("--burst", f"'{text}' is not N or MIN-MAX with 1 ≤ MIN ≤ MAX ≤ 1000")
    return lo, hi


#: Largest loss trace read (bytes): 10⁹ packets at most, read as a stream.
MAX_TRACE_BYTES = 1_000_000_000


def fit_trace(path: str | os.PathLike[str]) -> tuple[float, tuple[int, int]]:
    """A measured loss trace: one character per packet in arrival order, ``0``
    delivered and ``1`` lost (white space ignored, ``#`` starts a comment). Fitted to
    ns-3's burst model: the mean loss is the share lost, the burst sizes run from the
    shortest to the longest run of consecutive losses. Read line by line (at most
    :data:`MAX_TRACE_BYTES`), keeping only counts."""
    field = "--loss-trace"
    name = os.fspath(path)
    packets = lost = current = 0
    shortest, longest = 0, 0
    try:
        size = os.stat(path).st_size
        if size > MAX_TRACE_BYTES:
            raise AdviceError(
                field, f"{name} is {size} bytes, above the limit of {MAX_TRACE_BYTES}"
            )
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for ch in line.split("#", 1)[0]:
                    if ch == "1":
                        packets, lost, current = packets + 1, lost + 1, current + 1
                    elif ch == "0":
                        packets += 1
                        if current:
                            shortest = min(shortest or current, current)
                            longest, current = max(longest, current), 0
                    elif not ch.isspace():
                        problem = f"line {number}: '{ch}' is not 0 (delivered) or 1 (lost)"
                        raise AdviceError(field, problem)
    except (OSError, UnicodeDecodeError) as e:
        raise AdviceError(field, f"cannot read {name} ({e})") from None
    if current:
        shortest, longest = min(shortest or current, current), max(longest, current)
    if packets == 0:
        raise AdviceError(field, f"{name} holds no packets (0 or 1 per packet)")
    if lost == packets:
        raise AdviceError(field, "every packet is lost: no session can run over it")
    return lost / packets, ((shortest, longest) if lost else (1, 1))


def session_spec(
    link: Any, profile: str, duration: str, processing: str | None, period: str | None
) -> dict[str, Any]:
    """The scenario: the link (a preset name, a scenario file or a dict) with a session
    of ``profile`` on it; checked to have the ``v2g`` preset's PLC link."""
    from vtlab.errors import ScenarioError
    from vtlab.scenario import Scenario

    if profile not in PROFILES:
        allowed = ", ".join(PROFILES)
        raise AdviceError("--session", f"unknown session profile '{profile}' (allowed: {allowed})")
    session: dict[str, Any] = {"profile": profile, "duration": duration}
    if processing is not None:
        session["processing"] = processing
    if period is not None:
        session["period"] = period
    try:
        base = Scenario.coerce(link).spec
        spec = {**base, "session": {**base.get("session", {}), **session}}
        links = Scenario(spec).expanded()["links"]
    except OSError as e:
        raise AdviceError("LINK", f"cannot read {e.filename or link}: {os_problem(e)}") from None
    except (ScenarioError, ValueError) as e:
        text = str(e)
        for key, option in SESSION_OPTIONS.items():
            if text.startswith(f"{key}:"):
                raise AdviceError(option, text[len(key) + 1 :].strip()) from None
        raise AdviceError("LINK", text) from None
    if not any(x["name"] == "plc" and {x["a"], x["b"]} == {"secc", "evcc"} for x in links):
        raise AdviceError("LINK", "needs the v2g cable: a link named plc between secc and evcc")
    return spec


def _key(spec: dict[str, Any], burst: tuple[int, int], runs: int, seed: int) -> str:
    """The stored estimate's name: the setting, the burst sizes, the runs per burst
    count, the seed and the simulator core's build (a rebuilt core, whose TCP may
    behave differently, never reuses an earlier build's runs)."""
    text = json.dumps([spec, burst, runs, seed, core_build()], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def estimate_setting(
    spec: dict[str, Any],
    burst: tuple[int, int],
    runs: int,
    stop: Any,
    out: Path | None,
    seed: int = 1,
) -> tuple[sv.Estimate, str]:
    """The conditional estimate for one setting's spec, from ``out`` when stored."""
    key = _key(spec, burst, runs, seed)
    path = out / f"{key}.json" if out is not None else None
    stored = _stored(path, burst) if path is not None else None
    finished = stored is not None and (
        stop(stored) or stored.per_k[-1].survived == 0 or stored.k_max >= sv.MAX_BURSTS
    )
    if finished and stored is not None and path is not None:
        return stored, os.fspath(path)
    est = sv.estimate(sv.session_runner(spec), burst, runs, stop, seed=seed, resume=stored)
    if path is None:
        return est, "not stored"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"spec": spec, "burst": list(burst), "runs_per_k": runs, "seed": seed}
    record |= {"positions": list(est.positions), "per_k": [asdict(p) for p in est.per_k]}
    # Whole or not at all: a child killed mid-write (Ctrl-C of estimate_settings)
    # leaves no cut file under the estimate's name.
    write_json_durably(path, record, indent=1, default=str)
    return est, os.fspath(path)


def _stored(path: Path, burst: tuple[int, int]) -> sv.Estimate | None:
    """The estimate stored in ``path``; ``None`` when there is none or it does not
    parse (cut short by an earlier version's interrupted write): it is made again."""
    try:
        data = json.loads(path.read_text())
        per_k = [sv.PerK(**p) for p in data["per_k"]]
        return sv.Estimate(tuple(data["positions"]), burst, per_k) if per_k else None
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None


#: One setting's estimate to make: (name, spec, burst sizes, runs per k, stop rule).
Question = tuple[str, dict[str, Any], tuple[int, int], int, Any]


def estimate_settings(
    questions: Sequence[Question],
    out: Path | None,
    jobs: int | None = None,
    log: Callable[[str], None] | None = None,
) -> list[tuple[sv.Estimate, str]]:
    """:func:`estimate_setting` for each question, in order, up to ``jobs`` at once
    (``None``: one per core) in processes forked for them
    (:func:`vtlab.forkmap.fork_map`): a setting's estimate is sessions run one after
    another, and the settings are independent; each stores its own file in ``out``,
    so an interrupted call keeps the estimates finished. ``log`` gets a line as each
    one is done."""
    calls = [
        functools.partial(estimate_setting, spec, burst, runs, stop, out)
        for _, spec, burst, runs, stop in questions
    ]
    finished = itertools.count(1)

    def done(i: int, result: tuple[sv.Estimate, str]) -> None:
        n, est = next(finished), result[0]
        if log is not None:
            name = questions[i][0]
            log(f"{n}/{len(calls)} {name}: {est.runs} sessions, k up to {est.k_max}")

    return fork_map(calls, jobs or os.cpu_count() or 1, done)


def advise(
    link: Any = "v2g",
    *,
    loss: float | None = None,
    burst: str | tuple[int, int] = "1-4",
    loss_trace: str | os.PathLike[str] | None = None,
    session: str = "iso15118-2-dc",
    duration: str = "30min",
    processing: str | None = None,
    period: str | None = None,
    target: float = 0.99,
    runs: int = 200,
    stacks: tuple[str, ...] = tuple(sv.STACKS),
    out: str | os.PathLike[str] | None = "out/advise",
    jobs: int | None = None,
    log: Callable[[str], None] | None = None,
) -> Advice:
    """Every setting's survival of the session over the cable, best lower bound first.
    The settings are estimated up to ``jobs`` at once (``None``: one per core;
    :func:`estimate_settings`, ``log`` a line as each is done).

    Raises:
        AdviceError: bad input, naming the option (``--target``, ``--session``, ...).
    """
    if not 0.0 < target < 1.0:
        raise AdviceError("--target", f"{target} is outside (0, 1)")
    if not 1 <= runs <= 100_000:
        raise AdviceError("--runs", f"{runs} is outside [1, 100000]")
    if jobs is not None and jobs < 1:
        raise AdviceError("--jobs", f"must be at least 1, got {jobs}")
    unknown = [s for s in stacks if s not in sv.STACKS]
    if unknown or not stacks:
        name = unknown[0] if unknown else ""
        allowed = ", ".join(sv.STACKS)
        raise AdviceError("--stack", f"unknown stack '{name}' (allowed: {allowed})")
    if loss_trace is not None and loss is not None:
        raise AdviceError("--loss-trace", "give either --loss or --loss-trace, not both")
    if loss_trace is not None:
        mean_loss, sizes = fit_trace(loss_trace)
    else:
        mean_loss = 0.0 if loss is None else loss
        sizes = parse_burst(burst) if isinstance(burst, str) else burst
        if not 0.0 <= mean_loss < 1.0:
            raise AdviceError("--loss", f"{mean_loss} is outside [0, 1)")
    spec = session_spec(link, session, duration, processing, period)
    store = None if out is None else Path(out)
    stop = sv.enough_at(mean_loss, target)
    questions = [
        (name, sv.apply(spec, overrides), sizes, runs, stop)
        for name, overrides in sv.settings(stacks).items()
    ]
    verdicts = []
    estimates = estimate_settings(questions, store, jobs, log)
    for (name, *_), (est, where) in zip(questions, estimates, strict=True):
        point, lower, upper = est.at(mean_loss)
        per_k = [(p.k, p.runs, p.survived) for p in est.per_k]
        verdicts.append(Verdict(name, point, lower, upper, est.runs, est.k_max, per_k, where))
    verdicts.sort(key=lambda v: (-v.lower, -v.survival))
    return Advice(target, mean_loss, sizes, verdicts)
