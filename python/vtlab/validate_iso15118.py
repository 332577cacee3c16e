"""``vtlab validate-iso15118``: vtlab's request/response sessions against ns-3.

The reference program ``validation/ns3/iso15118.cc`` (validation/ns3/README-iso15118.md)
runs a session between a vehicle (EVCC) and its charger (SECC) over the V2G
power-line link in ns-3.44: one TCP connection, the vehicle writes a request, the
charger answers as soon as the request is whole, the next request follows the
response no sooner than its period.  Each cell is 10 minutes of CurrentDemand at
4 Hz (2400 exchanges of 60 B requests and 70 B responses, deadline 250 ms, misses
counted, not aborting) under the burst loss model at the same mean rate in both
directions, ns-3 TCP defaults (NewReno, SACK, delayed ACK 2/200 ms, minimum RTO 1 s)
with **timestamps off**: ns-3.44 echoes a stale timestamp on ACKs that ride on data
(``TcpSocketBase::ProcessOptionTimestamp`` updates its echo only for segments at or
below ``m_highTxAck``, which only pure ACKs advance), so with timestamps its RTO grows
with the session's age; vtlab does not copy that defect (docs/iso15118.md).

Paired: vtlab loses the packets ns-3 lost (the positions ns-3's error models report
with ``--traceLoss``, replayed by the ``replay`` loss model), so the two runs differ
only by their TCP and application models. Per cell, the response-time percentiles
(p50, p90, p99, p99.9, nearest rank, pooled over the seeds) must agree within ±10 %;
the fraction of missed deadlines, and vtlab with its own loss draws, are shown beside
them.  ns-3's runs are stored in ``validation/iso15118/ns3/`` (one gzipped JSON-lines
file per cell, a line per seed); ``--rerun-ns3`` recomputes them with the ns-3 wheel.
``--replay LOSS:SEED`` compares one run exchange by exchange (:func:`paired_replay`).
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from vtlab.cli_validate_options import QuietLinesOpt, RerunNs3Opt
from vtlab.errors import fail, user_errors
from vtlab.ns3 import program as _ns3
from vtlab.ns3.iso15118 import iso15118_args, parse_iso15118_output
from vtlab.ns3.process import run_process
from vtlab.outputs import check_output_dir
from vtlab.validation.report import typed_command

#: Tolerance of each percentile: the issue's ±10 %.
TOLERANCE = 0.10
#: The session of every cell: (name, request B, response B, deadline s, repeats, period s).
STEP = ("CurrentDemand", 60, 70, 0.25, 2400, 0.25)
#: Mean loss per direction of the cells.
LOSSES = (0.0, 0.01, 0.05)
QUANTILES = (0.5, 0.9, 0.99, 0.999)
#: Seeds per cell on each side (ns-3: RngRun 1..100). The tail is a ladder of RTO
#: backoffs (1, 3, 7, 15, 31 s): p99.9 of one cell is the 240th longest of 240,000
#: exchanges, so with fewer seeds it jumps a rung on sampling noise alone.
SEEDS = 100
QUICK_SEEDS = 10


class IsoValidateError(ValueError):
    """A bad option or missing reference data (the CLI prints it, exit 2)."""


def stored_dir() -> Path:
    """Where ns-3's runs live in a checkout."""
    return Path(__file__).resolve().parents[2] / "validation" / "iso15118" / "ns3"


def cell_name(loss: float) -> str:
    return f"cd-loss{loss:g}"


def vtlab_spec(loss: float) -> dict[str, Any]:
    """The v2g scenario that mirrors ``iso15118.cc`` for one cell."""
    name, request, response, timeout, repeats, period = STEP
    burst = {"model": "burst", "mean_loss": loss}
    return {
        "preset": "v2g",
        "qdisc": "none",  # iso15118.cc disables flow control: ns-3 installs no qdisc
        "loss": burst,
        "reverse_loss": burst,
        "tcp": {"timestamps": False, "data_retries": 100},
        "session": {
            "profile": "custom",
            "abort_on_miss": False,
            "steps": [
                {
                    "name": name,
                    "request": request,
                    "response": response,
                    "timeout": timeout,
                    "repeats": repeats,
                    "period": period,
                }
            ],
        },
    }


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest rank, as the engine's session percentiles: the smallest value with at
    least a fraction ``q`` of the values at or below it; NaN when empty."""
    if not sorted_values:
        return math.nan
    rank = min(max(math.ceil(q * len(sorted_values)), 1), len(sorted_values))
    return sorted_values[rank - 1]


def ns3_path(directory: Path, loss: float) -> Path:
    """The stored ns-3 runs of a cell: one JSON line per seed, ``{"seed": S,
    "end": why the session ended, "response_time_s": [...], "drops": {"toward_evcc":
    [...], "toward_secc": [...]}}`` (seconds rounded to 0.1 µs, null for a request
    never answered; the positions of the packets ns-3 lost), gzipped."""
    return directory / f"{cell_name(loss)}-nots.jsonl.gz"


def load_ns3(directory: Path, loss: float, seeds: int) -> list[dict[str, Any]]:
    """ns-3's runs of a cell, seeds 1..``seeds`` in order: ``response_time_s`` (a
    list) and ``drops`` (the lost packet positions per direction)."""
    path = ns3_path(directory, loss)
    if not path.is_file():
        raise IsoValidateError(
            f"no stored ns-3 runs {path} (rerun with --rerun-ns3, which needs the ns3 wheel)"
        )
    with gzip.open(path, "rt") as fh:
        runs = {r["seed"]: r for r in map(json.loads, filter(str.strip, fh))}
    missing = [s for s in range(1, seeds + 1) if s not in runs]
    if missing:
        raise IsoValidateError(
            f"{path} has no run for seed {missing[0]} (rerun with --rerun-ns3 --seeds {seeds})"
        )
    return [runs[s] for s in range(1, seeds + 1)]


def traced_reference(
    loss: float,
    seed: int,
    *,
    cache: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, list[int]]]:
    """One run of the reference program for a cell with ``--traceLoss``: its message
    rows, its summary and the positions of the packets its error models lost."""
    from vtlab import _core

    args = iso15118_args(json.loads(_core.expand(json.dumps(vtlab_spec(loss)))), seed)
    binary = _ns3.build_program(_ns3.ISO15118_PROGRAM, cache=cache, log=log)
    cmd = [str(binary.path), *args, "--traceLoss=true"]
    proc = run_process(cmd)
    if proc.returncode != 0:
        raise _ns3.Ns3Error(f"{' '.join(cmd)} exited with {proc.returncode}")
    rows, summary = parse_iso15118_output(proc.stdout)
    return rows, summary, _loss_positions(proc.stderr)


def run_ns3(directory: Path, loss: float, seeds: int, log: Callable[[str], None] | None) -> None:
    """Run ns-3 for a cell, seeds 1..``seeds``, and store the runs (one process at a
    time; about 0.1 s each)."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for seed in range(1, seeds + 1):
        messages, summary, drops = traced_reference(loss, seed, log=log)
        times = [
            None if m["response_time_s"] is None else round(m["response_time_s"], 7)
            for m in messages
        ]
        run = {"seed": seed, "end": summary.get("end"), "response_time_s": times, "drops": drops}
        lines.append(json.dumps(run))
    ns3_path(directory, loss).write_bytes(
        gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0)
    )


def replay_spec(loss: float, drops: Mapping[str, Sequence[int]]) -> dict[str, Any]:
    """The cell's scenario with ns-3's loss decisions instead of vtlab's own draws."""
    spec = vtlab_spec(loss)
    spec["loss"] = {"model": "replay", "drops": list(drops["toward_evcc"])}
    spec["reverse_loss"] = {"model": "replay", "drops": list(drops["toward_secc"])}
    return spec


def summarize(times: Sequence[float | None], deadline: float) -> dict[str, float]:
    answered = sorted(t for t in times if t is not None and not math.isnan(t))
    out = {f"p{q * 100:g}": quantile(answered, q) for q in QUANTILES}
    out["exchanges"] = float(len(times))
    out["miss_fraction"] = (
        sum(t is None or math.isnan(t) or t > deadline for t in times) / len(times)
        if times
        else math.nan
    )
    return out


def agree(a: float, b: float, tolerance: float = TOLERANCE) -> bool:
    """Whether vtlab's ``a`` is within ``tolerance`` of ns-3's ``b`` (relative)."""
    return abs(a - b) <= tolerance * abs(b)


@dataclass
class IsoValidation:
    rows: list[dict[str, Any]]
    agree: int
    cells: int
    report: Path


def validate_iso15118(
    out: Path,
    *,
    seeds: int = SEEDS,
    losses: Sequence[float] = LOSSES,
    rerun_ns3: bool = False,
    command: str = "vtlab validate-iso15118",
    log: Callable[[str], None] | None = None,
) -> IsoValidation:
    """Compare vtlab with ns-3 on every cell; write ``out/report.md``."""
    import vtlab

    if not 1 <= seeds <= SEEDS:
        raise IsoValidateError(f"--seeds: {seeds} is outside [1, {SEEDS}] (the stored ns-3 runs)")
    ns_dir = out / "ns3" if rerun_ns3 else stored_dir()
    rows = []
    deadline = STEP[3]
    for loss in losses:
        if rerun_ns3:
            run_ns3(ns_dir, loss, seeds, log)
        runs = load_ns3(ns_dir, loss, seeds)
        ns = summarize([t for r in runs for t in r["response_time_s"]], deadline)
        paired_times: list[float | None] = []
        own_times: list[float | None] = []
        for seed, run in enumerate(runs, start=1):
            paired = vtlab.run(replay_spec(loss, run["drops"]), seed=seed)
            paired_times += paired.messages["response_time_s"].tolist()
            own_times += vtlab.run(vtlab_spec(loss), seed=seed).messages["response_time_s"].tolist()
        vt = summarize(paired_times, deadline)
        own = summarize(own_times, deadline)
        verdicts = {k: agree(vt[k], ns[k]) for k in ns if k.startswith("p")}
        row = {
            "cell": cell_name(loss),
            "loss": loss,
            "ns3": ns,
            "vtlab": vt,
            "vtlab_own_losses": own,
            "agree": verdicts,
            "verdict": "agree" if all(verdicts.values()) else "differs",
        }
        rows.append(row)
        if log is not None:
            log(f"{row['cell']}: {row['verdict']} ({sum(verdicts.values())}/{len(verdicts)})")
    report = write_report(out, rows, command=command, seeds=seeds, rerun=rerun_ns3)
    n = sum(r["verdict"] == "agree" for r in rows)
    return IsoValidation(rows, n, len(rows), report)


def write_report(
    out: Path, rows: Sequence[dict[str, Any]], *, command: str, seeds: int, rerun: bool
) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# ISO 15118 sessions: vtlab vs ns-3.44",
        "",
        f"Generated by `{command}`. {seeds} seeds per cell on each side; ns-3 runs "
        f"{'recomputed' if rerun else 'stored in validation/iso15118/ns3'}. Each cell: 2400 "
        "CurrentDemand exchanges (60 B / 70 B, deadline 250 ms, period 250 ms) over the "
        "10 Mbit/s, 0.9 ms PLC link, burst loss at the cell's mean rate in both directions, "
        "NewReno, timestamps off (python/vtlab/validate_iso15118.py says why). Percentiles "
        "are nearest rank over all exchanges of all seeds. **Paired**: vtlab loses the "
        "packets ns-3 lost (the stored positions, the `replay` loss model), so the two "
        "differ only by their TCP and application models; a cell agrees when each "
        f"percentile is within ±{TOLERANCE:.0%} of ns-3's. **Own losses**: vtlab draws "
        "its own burst losses (same model and rate, other random numbers); shown, not "
        "judged: the tail is a ladder of RTO backoffs (1, 3, 7, 15, 31 s), and where a "
        "rung holds about 0.1 % of the exchanges p99.9 jumps a rung on sampling noise.",
        "",
        "| cell | percentile | ns-3 (s) | vtlab, paired (s) | agree | vtlab, own losses (s) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        for k, ok in r["agree"].items():
            lines.append(
                f"| {r['cell']} | {k} | {r['ns3'][k]:.6g} | {r['vtlab'][k]:.6g} | "
                f"{'yes' if ok else '**no**'} | {r['vtlab_own_losses'][k]:.6g} |"
            )
    lines += [
        "",
        "| cell | missed deadlines, ns-3 | vtlab, paired | vtlab, own losses |",
        "|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['cell']} | {r['ns3']['miss_fraction']:.4f} | "
            f"{r['vtlab']['miss_fraction']:.4f} | {r['vtlab_own_losses']['miss_fraction']:.4f} |"
        )
    agreed = sum(r["verdict"] == "agree" for r in rows)
    lines += ["", f"**{agreed} of {len(rows)} cells agree.**", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    (out / "agreement.json").write_text(json.dumps(rows, indent=1) + "\n")
    return path


@dataclass
class Replay:
    """A paired replay of one cell and seed: ns-3's loss decisions fed to vtlab."""

    loss: float
    seed: int
    #: Positions of the packets ns-3 lost toward the EVCC and toward the SECC.
    drops: dict[str, list[int]]
    #: Exchanges both sides wrote, and how many of them have the same request and
    #: response times (within :data:`REPLAY_TOLERANCE_S`).
    compared: int
    identical: int
    #: The first exchange that differs: its index and both sides' rows; None if none.
    first: dict[str, Any] | None
    #: Exchanges written by each side (they differ when one side's session ends sooner).
    exchanges: dict[str, int]

    def lines(self) -> list[str]:
        out = [
            f"paired replay of {cell_name(self.loss)}, seed {self.seed}: ns-3 lost "
            f"{len(self.drops['toward_evcc'])} packets toward the EVCC and "
            f"{len(self.drops['toward_secc'])} toward the SECC; vtlab loses the same positions",
            f"exchanges: ns-3 {self.exchanges['ns3']}, vtlab {self.exchanges['vtlab']}; "
            f"{self.identical} of the {self.compared} compared identical "
            f"(request and response within {REPLAY_TOLERANCE_S * 1e6:g} µs)",
        ]
        if self.first is None:
            out.append("no divergence")
        else:
            f = self.first
            out.append(f"first divergence: exchange {f['index']}")
            for side in ("ns3", "vtlab"):
                r = f[side]
                out.append(
                    f"  {side:5}: request {r['request_s']:.9f} s, response "
                    + ("none" if r["response_s"] is None else f"{r['response_s']:.9f} s")
                )
        return out


#: Two times agree in a paired replay when they differ by at most this (ns-3 prints
#: nanoseconds; both sides compute the same serialisation and propagation delays).
REPLAY_TOLERANCE_S = 1e-6


def _loss_positions(stderr: str) -> dict[str, list[int]]:
    drops: dict[str, list[int]] = {}
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "lost":
            drops[parts[1]] = [int(x) for x in parts[2:]]
    if set(drops) != {"toward_evcc", "toward_secc"}:
        raise IsoValidateError("the ns-3 program printed no loss positions (--traceLoss)")
    return drops


def paired_replay(
    loss: float,
    seed: int,
    *,
    cache: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> Replay:
    """Run the reference program for ``loss`` and ``seed`` with ``--traceLoss``, run
    vtlab on the same cell with ns-3's lost packet positions as ``replay`` loss models
    and compare the two timelines exchange by exchange, counting from the first
    request (:func:`_from_first_request`)."""
    import vtlab

    if not 0.0 <= loss < 1.0:
        raise IsoValidateError(f"--replay: loss {loss} is outside [0, 1)")
    if not 1 <= seed <= 2**31 - 1:
        raise IsoValidateError(f"--replay: seed {seed} is outside [1, {2**31 - 1}]")
    ns_rows, _summary, drops = traced_reference(loss, seed, cache=cache, log=log)
    vt = vtlab.run(replay_spec(loss, drops), seed=seed).messages
    vt_rows = [
        {"request_s": float(q), "response_s": None if math.isnan(r) else float(r)}
        for q, r in zip(vt["request_s"], vt["response_s"], strict=True)
    ]
    ns_rows = _from_first_request(ns_rows)
    vt_rows = _from_first_request(vt_rows)

    def same(a: float | None, b: float | None) -> bool:
        if a is None or b is None:
            return a is None and b is None
        return abs(a - b) <= REPLAY_TOLERANCE_S

    compared = min(len(ns_rows), len(vt_rows))
    identical, first = 0, None
    for i in range(compared):
        a, b = ns_rows[i], vt_rows[i]
        if same(a["request_s"], b["request_s"]) and same(a["response_s"], b["response_s"]):
            identical += 1
        elif first is None:
            first = {"index": i, "ns3": a, "vtlab": b}
    if first is None and len(ns_rows) != len(vt_rows):
        i = compared
        first = {
            "index": i,
            "ns3": ns_rows[i] if i < len(ns_rows) else {"request_s": math.nan, "response_s": None},
            "vtlab": vt_rows[i]
            if i < len(vt_rows)
            else {"request_s": math.nan, "response_s": None},
        }
    return Replay(
        loss, seed, drops, compared, identical, first, {"ns3": len(ns_rows), "vtlab": len(vt_rows)}
    )


def _from_first_request(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Times counted from the first request: the two clocks start differently (ns-3's
    client connects at 0.1 s) and the handshakes differ by the SYN options (ns-3's
    SYN and SYN-ACK carry window scale and SACK-permitted, 8 B more than vtlab's
    without timestamps: 12.8 µs on the round trip, docs/validation.md)."""
    if not rows:
        return []
    t0 = rows[0]["request_s"]
    return [
        {
            "request_s": r["request_s"] - t0,
            "response_s": None if r["response_s"] is None else r["response_s"] - t0,
        }
        for r in rows
    ]


def _parse_replay(text: str) -> tuple[float, int]:
    try:
        loss_s, seed_s = text.split(":")
        return float(loss_s), int(seed_s)
    except ValueError:
        raise IsoValidateError(
            f"--replay: {text!r} is not LOSS:SEED (e.g. 0.05:3: mean loss 5 %, RngRun 3)"
        ) from None


def register(app: typer.Typer) -> None:
    """Add ``validate-iso15118`` to the ``vtlab`` CLI."""

    @app.command("validate-iso15118")
    def validate_iso15118_command(
        quick: Annotated[
            bool, typer.Option("--quick", help=f"{QUICK_SEEDS} seeds per cell.")
        ] = False,
        seeds: Annotated[int, typer.Option("--seeds", help="Seeds per cell.")] = SEEDS,
        rerun_ns3: RerunNs3Opt = False,
        out: Annotated[Path, typer.Option("--out", "-o", help="Report directory.")] = Path(
            "validation/iso15118"
        ),
        quiet: QuietLinesOpt = False,
        replay: Annotated[
            str | None,
            typer.Option(
                "--replay",
                metavar="LOSS:SEED",
                help="Paired replay of one run instead: ns-3's loss decisions fed to vtlab, "
                "the first exchange that differs (needs the ns3 wheel and g++).",
            ),
        ] = None,
    ) -> None:
        """Validate vtlab's request/response sessions against ns-3: CurrentDemand
        response-time percentiles within ±10 % at 0, 1 and 5 % loss."""
        log = None if quiet else (lambda line: typer.echo(line, err=True))
        if replay is not None:
            try:
                rep = paired_replay(*_parse_replay(replay), log=log)
            except (IsoValidateError, _ns3.Ns3Error) as exc:
                fail(str(exc))
            typer.echo("\n".join(rep.lines()))
            return
        with user_errors():
            check_output_dir("--out", out)
        try:
            res = validate_iso15118(
                out,
                seeds=QUICK_SEEDS if quick and seeds == SEEDS else seeds,
                rerun_ns3=rerun_ns3,
                command=typed_command(),
                log=log,
            )
        except (IsoValidateError, _ns3.Ns3Error) as exc:
            fail(str(exc))
        typer.echo(f"{res.agree} of {res.cells} cells agree within ±10 %; report: {res.report}")
