"""The real stack's session against vtlab's session model, paired on the same losses
(``vtlab study iso15118 --real``, docs/study-iso15118.md, "The real stack").

The simulation runs a ``custom`` session built from the real one (:func:`sim_spec`):
the message sequence and each message's size on the wire as captured, each
message's timeout as the stack sets it, the charger's processing time as the
median the capture measured, and each request no sooner after the previous one than
in the real run (the EVCC's own think time), over the ``v2g`` preset's PLC link with
the ``linux`` profile and RACK-TLP (the kernel's defaults). The losses are the
emulator's decisions, mapped packet by packet (:func:`map_losses`): a lost TCP frame
of the real run — a message's segment (its first transmission or a retransmission),
the handshake, a pure ACK — becomes the position, in the simulation's stream of
that direction of the cable, of the packet with the same role (the same sequence or
acknowledgement number, the next one after the losses already placed), found by
running the simulation with each candidate position and reading its drop event.
Frames the simulation has no counterpart for (neighbour discovery, MLD, SDP over UDP,
a pure ACK the model does not send, the closing FIN) are listed as unmatched.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import vtlab

__all__ = ["map_losses", "pair", "sim_spec"]

#: Candidate positions tried per lost frame before it is called unmatched.
SEARCH_LIMIT = 400

#: The simulation's stream of each direction: its loss key and link direction.
DIRECTIONS = {"secc": ("loss", "plc secc->evcc"), "evcc": ("reverse_loss", "plc evcc->secc")}


def sim_spec(
    rows: Sequence[Mapping[str, Any]], drops: Mapping[str, Sequence[int]] | None = None
) -> dict[str, Any]:
    """The ``v2g`` scenario of a real session's exchanges ``rows`` (as
    :func:`vtlab.experiments.iso15118.real.exchanges` gives them), with ``drops``
    (``{"loss": [...], "reverse_loss": [...]}``) as replay loss models."""
    processing = [r["processing_s"] for r in rows if r["processing_s"] is not None]
    steps = []
    for i, r in enumerate(rows):
        nxt = rows[i + 1] if i + 1 < len(rows) else None
        gap = 0.0 if nxt is None else max(0.0, nxt["request_sent_s"] - r["request_sent_s"])
        steps.append({
            "name": r["message"],
            "request": int(r["request_bytes"]),
            "response": int(r["response_bytes"] or r["request_bytes"]),
            "timeout": f"{round(r['timeout_s'] * 1e6)}us",
            "repeats": 1,
            "period": f"{round(gap * 1e6)}us",
        })  # fmt: skip
    spec: dict[str, Any] = {
        "preset": "v2g",
        "tcp": {"profile": "linux", "tlp": True, "rack": True},
        "session": {
            "profile": "custom",
            "processing": f"{round(statistics.median(processing or [0.0]) * 1e6)}us",
            "steps": steps,
        },
    }
    for key, positions in (drops or {}).items():
        if positions:
            spec[key] = {"model": "replay", "drops": sorted(positions)}
    return spec


def _drop_events(spec: Mapping[str, Any]) -> dict[str, list[tuple[str, int]]]:
    """The simulation's drops of ``spec`` per loss key, in order: (kind, seq)."""
    events = vtlab.run(dict(spec), seed=1, events=True).events
    out: dict[str, list[tuple[str, int]]] = {k: [] for k, _ in DIRECTIONS.values()}
    for row in events.itertuples():
        if row.event != "drop":
            continue
        for key, direction in DIRECTIONS.values():
            if row.detail.endswith(" on " + direction):
                out[key].append((row.detail.split(" ")[1], int(row.seq)))
    return out


def _target(frame: Mapping[str, Any]) -> tuple[str, int] | None:
    """What the simulation's counterpart of a lost real frame looks like: (kind,
    seq) with the simulation's byte offsets (the real ones less the SYN's one)."""
    kind = frame["kind"]
    if kind == "data":
        return ("data", frame["seq"] - 1)
    if kind == "ack":
        return ("ack", frame["ack"] - 1)
    if kind == "syn":
        return ("syn" if frame["from"] == "evcc" else "syn-ack", 0)
    return None


def map_losses(
    frames: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, list[int]], list[dict[str, Any]]]:
    """The simulation's drop positions for the real run's lost frames, and one
    record per lost frame: what it was and the position found (None: unmatched)."""
    lost = sorted((f for f in frames if f["fate"] in ("lost", "queue", "aqm")),
                  key=lambda f: f["sent"])  # fmt: skip
    drops: dict[str, list[int]] = {k: [] for k, _ in DIRECTIONS.values()}
    records = []
    for f in lost:
        key = DIRECTIONS[f["from"]][0]
        target = _target(f)
        rec = {"from": f["from"], "index": f["index"], "kind": f["kind"], "seq": f["seq"],
               "position": None}  # fmt: skip
        start = drops[key][-1] + 1 if drops[key] else 0
        for p in range(start, start + SEARCH_LIMIT) if target else ():
            trial = {k: [*v, p] if k == key else v for k, v in drops.items()}
            got = _drop_events(sim_spec(rows, trial))[key]
            if len(got) <= len(drops[key]):
                break  # the simulation sends no packet at p: nothing later matches
            if got[len(drops[key])] == target:
                drops[key].append(p)
                rec["position"] = p
                break
        records.append(rec)
    return drops, records


def pair(rows: Sequence[Mapping[str, Any]], frames: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The paired comparison of one real session: the simulation on the mapped
    losses, exchange by exchange (response times, the part of them outside the
    charger's processing, retransmissions, misses), and the outcome of both."""
    drops, records = map_losses(frames, rows)
    spec = sim_spec(rows, drops)
    result = vtlab.run(spec, seed=1, events=True)
    msgs = result.messages.reset_index(drop=True)
    processing = float(spec["session"]["processing"].removesuffix("us")) / 1e6
    retx = _sim_retransmissions(result.events, rows)
    sess = result.sessions.iloc[0]
    out_rows = []
    for i, r in enumerate(rows):
        sim = msgs.iloc[i] if i < len(msgs) else None
        st = (
            None
            if sim is None or sim["response_time_s"] != sim["response_time_s"]
            else float(sim["response_time_s"])
        )
        rt, pr = r["response_time_s"], r["processing_s"]
        out_rows.append({
            "index": i,
            "message": r["message"],
            "real_response_s": rt,
            "sim_response_s": st,
            "real_network_s": None if rt is None or pr is None else rt - pr,
            "sim_network_s": None if st is None else st - processing,
            "real_retransmissions": r["request_retransmissions"] + r["response_retransmissions"],
            "sim_retransmissions": retx[i],
            "real_missed": bool(r["missed"]),
            "sim_missed": True if sim is None else bool(sim["missed"]),
        })  # fmt: skip
    return {
        "drops": drops,
        "lost": records,
        "processing_s": processing,
        "sim_completed": bool(sess["completed"]),
        "sim_abort_reason": str(sess["abort_reason"] or ""),
        "sim_exchanges": len(msgs),
        "rows": out_rows,
        "real_first_miss": _first(r["real_missed"] for r in out_rows),
        "sim_first_miss": _first(r["sim_missed"] for r in out_rows),
    }


def _first(flags: Any) -> int | None:
    return next((i for i, x in enumerate(flags) if x), None)


def _sim_retransmissions(events: Any, rows: Sequence[Mapping[str, Any]]) -> list[int]:
    """Retransmissions of each exchange's request and response in the simulation:
    ``retransmit`` events at the message's byte offset in its direction."""
    starts = {"requests": {}, "responses": {}}
    req = resp = 0
    for i, r in enumerate(rows):
        starts["requests"][req] = i
        starts["responses"][resp] = i
        req += int(r["request_bytes"])
        resp += int(r["response_bytes"] or r["request_bytes"])
    counts = [0] * len(rows)
    for row in events.itertuples():
        if row.event != "retransmit":
            continue
        half = "requests" if row.flow.endswith("/requests") else "responses"
        i = starts[half].get(int(row.seq))
        if i is not None:
            counts[i] += 1
    return counts
