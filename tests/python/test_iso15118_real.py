"""`vtlab study iso15118 --real --quick`: the iso15118 package's EVCC and SECC in
real network namespaces over the emulated cable, paired with the session model (CI
runs as root, with Java and tshark from .ci/run and iso15118 from the dev extra).

Expected values are derived by hand in each test: the message sequence from the EVCC
simulator's counters, the smallest possible network time from the cable's rate and
delay, the replayed loss positions and Linux's 200 ms RTO floor; message sizes from
the captures of other implementations (docs/iso15118.md); never from the code
under test."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_usage_error
from vtlab.experiments.iso15118 import real, real_study


def _missing() -> str | None:
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return "the emulator needs root (network namespaces, TAP devices); CI runs as root"
    if shutil.which("java") is None:
        return "needs a Java runtime (.ci/run installs default-jre-headless)"
    if shutil.which("tshark") is None:
        return "needs tshark (.ci/run installs it)"
    try:
        metadata.version("iso15118")
        metadata.version("aiofile")
    except metadata.PackageNotFoundError:
        return "needs iso15118==0.31.2 and aiofile (the dev extra)"
    return None


MISSING = _missing()
needs_stack = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

#: The ISO 15118-2 DC sequence of the EVCC simulator with chargeLoopCycle 10: its
#: state of charge starts at 10 % and gains 100/10 % per CurrentDemand until 100 %
#: (9 exchanges); PreCharge repeats until its counter reaches 5 (6 exchanges),
#: WeldingDetection until 3 (4); the SECC simulator answers the first CableCheck
#: "ongoing" (2 exchanges).
SEQUENCE = (
    ["SupportedAppProtocol", "SessionSetup", "ServiceDiscovery", "PaymentServiceSelection",
     "Authorization", "ChargeParameterDiscovery"] + ["CableCheck"] * 2 + ["PreCharge"] * 6
    + ["PowerDelivery"] + ["CurrentDemand"] * 9 + ["PowerDelivery"]
    + ["WeldingDetection"] * 4 + ["SessionStop"]
)  # fmt: skip

#: Wire bytes (EXI + 8 B V2GTP header) that other implementations' captures show for
#: messages whose content does not vary (docs/iso15118.md, "Message sizes").
CAPTURED = {"SessionSetup": (22, 39), "PaymentServiceSelection": (24, 22),
            "Authorization": (21, 23), "CableCheck": (24, 27), "SessionStop": (22, 22)}  # fmt: skip


def min_network_s(request: int, response: int) -> float:
    """The least time a request and its response of these V2GTP sizes spend on the
    v2g cable (10 Mbit/s, 0.9 ms, 2 B framing): IPv6 40 B + TCP 20 B + timestamps
    12 B around each payload."""
    return sum((72 + b + 2) * 8 / 10e6 + 0.9e-3 for b in (request, response))


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("real") / "out"
    cmd = [sys.executable, "-m", "vtlab", "study", "iso15118", "--real", "--quick", "-q"]
    done = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True,
                          timeout=400)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def _csv(path: Path) -> list[dict[str, Any]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _session(study: Path, case: str) -> real.RealSession:
    return real.load_session(study / "sessions" / case)


@needs_stack
def test_a_loss_free_session_completes_over_the_emulated_cable(study: Path) -> None:
    sess = _session(study, "iso15118-2-lossfree")
    assert sess.completed, sess.reason
    rows = real.exchanges(sess)
    assert [r["message"] for r in rows] == SEQUENCE
    assert all(d["fate"] == "delivered" for d in sess.decisions)
    for r in rows:
        # The emulator never delivers early.
        net = r["response_time_s"] - r["processing_s"]
        assert net >= min_network_s(r["request_bytes"], r["response_bytes"]) - 1e-6
        if r["message"] in CAPTURED:
            assert (r["request_bytes"], r["response_bytes"]) == CAPTURED[r["message"]]
    # The stack's own discovery crossed the cable: SDP request and response over UDP.
    assert {f["from"] for f in sess.frames if f["kind"] == "udp"} == {"evcc", "secc"}


@needs_stack
def test_a_session_that_loses_a_request_recovers_and_completes(study: Path) -> None:
    sess = _session(study, "iso15118-2-replay-9-10")
    assert sess.completed, sess.reason
    lost = [d for d in sess.decisions if d["fate"] != "delivered"]
    # Replay positions 9 and 10 toward the SECC, nothing else.
    assert [(d["direction"], d["frame"]) for d in lost] == [("evcc->secc", 9), ("evcc->secc", 10)]
    hit = [f for f in sess.frames if f["from"] == "evcc" and f["index"] in (9, 10)]
    data = [f for f in hit if f["kind"] == "data"]
    assert data, hit
    r = _hit_exchange(real.exchanges(sess), data[0]["seq"])
    assert r["request_retransmissions"] >= 1
    # A retransmission comes no sooner than Linux's 200 ms RTO floor after the
    # first send, and the session went on: inside the stack's 2 s setup timeout.
    assert 0.2 <= r["response_time_s"] - r["processing_s"] < 2.0
    assert r["timeout_s"] == 2.0 and r["index"] < SEQUENCE.index("CableCheck")


def _hit_exchange(rows: list[dict[str, Any]], seq: int) -> dict[str, Any]:
    """The exchange whose request starts at relative sequence number ``seq``: its
    offset is 1 (the SYN) plus the sizes of the requests before it."""
    offset = 1
    for r in rows:
        if offset == seq:
            return r
        offset += r["request_bytes"]
    raise AssertionError(f"no request starts at {seq}")


@needs_stack
def test_the_paired_simulation_meets_the_same_losses(study: Path) -> None:
    sessions = {s["case"]: s for s in _csv(study / "sessions.csv")}
    lossy = sessions["iso15118-2-replay-9-10"]
    assert lossy["lost_tcp"] == lossy["mapped"] != "0"
    assert lossy["sim_completed"] == "True" and lossy["exchanges_sim"] == str(len(SEQUENCE))
    sess = _session(study, lossy["case"])
    data = [f for f in sess.frames if f["from"] == "evcc" and f["index"] in (9, 10)
            and f["kind"] == "data"]  # fmt: skip
    index = _hit_exchange(real.exchanges(sess), data[0]["seq"])["index"]
    exch = [e for e in _csv(study / "exchanges.csv") if e["case"] == lossy["case"]]
    e = exch[index]
    # The model loses the same request and retransmits it, no sooner than its own
    # RTO floor (the linux profile's 200 ms).
    assert int(e["sim_retransmissions"]) >= 1 and int(e["real_retransmissions"]) >= 1
    assert float(e["sim_network_s"]) >= 0.2
    summ = json.loads((study / "summary.json").read_text())
    assert summ["sessions"] == 2 and summ["real_completed"] == summ["sim_completed"] == 2
    report = (study / "report.md").read_text()
    assert "## Paired comparison" in report and "iso15118-2-replay-9-10" in report


def test_the_v2gtp_headers_give_the_message_boundaries() -> None:
    # Two messages in one segment and a third in the next: 8 + 14, 8 + 31, 8 + 4 B.
    def msg(n: int) -> str:
        return "01fe8001" + n.to_bytes(4, "big").hex() + "00" * n

    payloads = [msg(14) + msg(31), msg(4)]
    frames = [{"from": "evcc", "kind": "data", "seq": 1, "len": 61, "payload": payloads[0]},
              {"from": "evcc", "kind": "data", "seq": 62, "len": 12, "payload": payloads[1]},
              {"from": "evcc", "kind": "data", "seq": 62, "len": 12, "payload": payloads[1]},
              {"from": "secc", "kind": "data", "seq": 1, "len": 12, "payload": msg(4)}]  # fmt: skip
    got = real.messages(frames, "evcc")
    assert [(m["seq"], m["bytes"], m["type"]) for m in got] == [
        (1, 22, 0x8001), (23, 39, 0x8001), (62, 12, 0x8001)]  # fmt: skip


def test_the_quick_cases_and_the_full_ones() -> None:
    quick = real_study.cases(True)
    assert [c.loss for c in quick] == [None, {"reverse": {"model": "replay", "drops": [9, 10]}}]
    full = real_study.cases(False, seeds=3)
    # The quick two, DIN loss-free, Plug & Charge loss-free and lossy, and 3 lossy
    # seeds of each protocol.
    assert len(full) == 2 + 1 + 2 + 2 * 3
    assert [c.name for c in full if c.pnc] == [
        "iso15118-2-pnc-tls-lossfree", "iso15118-2-pnc-tls-replay-9-10"]  # fmt: skip
    assert {c.protocol for c in full} == {"iso15118-2", "din70121"}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["study", "park2019", "--real"], "--real"),
        (["study", "iso15118", "--real", "--seeds", "0"], "--seeds"),
        (["study", "iso15118", "--real", "--cluster", "local:1"], "--real"),
    ],
)
def test_bad_real_options_get_one_line(cli: Any, args: list[str], needle: str) -> None:
    assert_usage_error(cli(*args), needle)
