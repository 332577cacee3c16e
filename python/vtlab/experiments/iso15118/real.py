"""A real ISO 15118 stack on the emulated charging cable (``vtlab study iso15118
--real``): the PyPI package ``iso15118`` (EcoG-io, pinned :data:`ISO15118_VERSION`),
its SECC and EVCC simulators in the two namespaces of ``vtlab emulate`` (docs/
emulation.md), joined through vtlab's model of the power-line link in real time.

One session (:func:`run_session`): the emulator opens on a ``v2g`` scenario with a
``session`` table, whose path is the PLC link alone, as in the simulation (the
session's first flow is the vehicle's requests: the EVCC is the *far* namespace, the
SECC the *near* one; :attr:`Emulation.nodes` says which). Router solicitations are
switched off in both namespaces (they come at random times and would shift the loss
positions); the SECC starts first, and once its UDP server listens the EVCC runs
the stack's own discovery (SDP over ``ff02::1%vtlab0``), then the DC sequence: EIM
over TCP, or Plug & Charge over TLS 1.2 with the test certificates of the stack's own
script (:func:`make_pki`). The emulator writes its loss decisions (``--log``) and both
ends' frames (``--pcap``); :func:`parse_capture` reads the V2GTP headers of the TCP
payloads (never the EXI bodies) and :func:`exchanges` turns them into one row per
request/response pair with its times at the cable, its retransmissions and the
charger's processing time. The outcome comes from the EVCC's log.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vtlab.emulation import ADDRESSES, TUN_DEFAULT, TUN_ENV, Emulation, preflight
from vtlab.errors import CliError

__all__ = [
    "ISO15118_VERSION",
    "PROTOCOLS",
    "RealSession",
    "check_real",
    "load_session",
    "exchanges",
    "parse_capture",
    "run_session",
]

#: The version of the ``iso15118`` package this runs (pyproject.toml's ``dev`` extra).
ISO15118_VERSION = "0.31.2"

#: The protocols: the name the stack's configuration uses.
PROTOCOLS = {"iso15118-2": "ISO_15118_2", "din70121": "DIN_SPEC_70121"}

#: V2GTP header: version 0x01, inverse 0xFE, payload type (2 B), payload length (4 B).
V2GTP_HEADER = 8
#: TLS record header (type, version, length) and the record types that matter here.
TLS_HEADER = 5
TLS_HANDSHAKE = 22
TLS_APPLICATION_DATA = 23
#: The handshake's two round trips, named as the session model names them.
TLS_STEPS = ("TlsHello", "TlsFinished")
#: The EVCC opens its TLS connection with asyncio's ``open_connection`` and sets no
#: handshake timeout of its own: asyncio's default ``ssl_handshake_timeout``, 60 s.
TLS_HANDSHAKE_TIMEOUT_S = 60.0

#: Seconds to wait for the SECC's UDP server, and for the whole session.
SECC_START_S = 30.0
SESSION_LIMIT_S = 90.0

#: Lines of the EVCC's log that end a session: completed, or why it stopped.
_DONE = re.compile(r"SessionStopRes received")
_FAILED = re.compile(r"Reason: .*|Exhausted SDP retries.*")
_LOG = re.compile(r"^\w+\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) - [\w.]+ \(\d+\): (.*)$")
_SENT = re.compile(r"^Sent (\w+?)Req$")
_RECEIVED = re.compile(r"^(\w+?)Res received$")
_SAP = {"supportedAppProtocol": "SupportedAppProtocol"}


def check_real() -> str:
    """Refuse, with one line, where the real stack cannot run: the emulator's own
    needs (root, TUN/TAP, ``ip``), a Java runtime, ``tshark``, the pinned
    ``iso15118`` and ``aiofile``. Returns the Java runtime's path."""
    from importlib import metadata

    preflight(os.environ.get(TUN_ENV) or TUN_DEFAULT)
    java = shutil.which("java")
    if java is None:
        raise CliError("--real", "needs a Java runtime for the stack's EXI codec (Debian: "
                       "apt-get install default-jre-headless)")  # fmt: skip
    if shutil.which("tshark") is None:
        raise CliError("--real", "needs tshark to read the captures (apt-get install tshark)")
    for package, pin in (("iso15118", ISO15118_VERSION), ("aiofile", None)):
        try:
            got = metadata.version(package)
        except metadata.PackageNotFoundError:
            raise CliError("--real", f"needs the Python package {package} (pip install "
                           f"iso15118=={ISO15118_VERSION} aiofile)") from None  # fmt: skip
        if pin is not None and got != pin:
            raise CliError("--real", f"needs {package}=={pin}, found {got}")
    return java


@dataclass
class RealSession:
    """What one real session did: its outcome, the messages the EVCC logged, the
    frames of the capture, the loss decisions, and where the files are."""

    protocol: str
    seed: int
    loss: dict[str, Any] | None
    completed: bool
    reason: str
    wall_s: float
    folder: str
    log_messages: list[dict[str, Any]] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)


def scenario(loss: Mapping[str, Any] | None, cycles: int) -> dict[str, Any]:
    """The emulated scenario: ``v2g`` with a session table (so the path is the PLC
    link alone, as the simulation's session runs), ``loss`` on both directions of
    the cable (``{"forward": ..., "reverse": ...}``: toward the EVCC, toward the
    SECC)."""
    spec: dict[str, Any] = {
        "preset": "v2g",
        "tcp": {"profile": "linux"},
        "session": {"profile": "custom", "steps": [
            {"name": "CurrentDemand", "request": 47, "response": 66, "timeout": "250ms",
             "repeats": cycles}]},
    }  # fmt: skip
    if loss:
        if loss.get("forward"):
            spec["loss"] = dict(loss["forward"])
        if loss.get("reverse"):
            spec["reverse_loss"] = dict(loss["reverse"])
    return spec


def evcc_config(protocol: str, cycles: int, tls: bool = False) -> dict[str, Any]:
    """The EVCC's configuration file (the stack's ``EVCC_CONFIG_PATH`` format): DC,
    ``cycles`` CurrentDemand exchanges without delay between them; with ``tls`` it
    asks for TLS in SDP and takes Plug & Charge when the SECC offers it, else EIM."""
    return {
        "supportedProtocols": [PROTOCOLS[protocol]],
        "supportedEnergyServices": ["DC"],
        "energyTransferMode": "DC_extended",
        "isCertInstallNeeded": False,
        "useTls": tls,
        "chargeLoopCycle": cycles,
        "chargeLoopDelay": 0,
    }


def stack_env(pki: Path | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The stack's settings (read by ``environs`` from the environment; each side runs
    in a folder without a ``.env``): the emulator's interface, both protocols, INFO
    logs (the message lines :func:`parse_log` reads); EIM at the SECC, or with a
    ``pki`` (:func:`make_pki`) EIM and Plug & Charge and those certificates."""
    env = dict(os.environ if base is None else base)
    if pki is not None:
        env["PKI_PATH"] = f"{pki}/"
    env.update(
        NETWORK_INTERFACE="vtlab0",
        LOG_LEVEL="INFO",
        PROTOCOLS=",".join(PROTOCOLS.values()),
        AUTH_MODES="EIM,PNC" if pki is not None else "EIM",
        SECC_ENFORCE_TLS="False",
        FREE_CHARGING_SERVICE="True",
        MESSAGE_LOG_JSON="False",
    )
    return env


def _wait_for(path: Path, pattern: re.Pattern[str], proc: Any, limit_s: float) -> str | None:
    """The first line of ``path`` that matches ``pattern`` (None once ``proc`` has
    ended or ``limit_s`` passed without one)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        text = path.read_text(errors="replace") if path.exists() else ""
        match = pattern.search(text)
        if match:
            return match.group(0)
        if proc.poll() is not None:
            return None
        time.sleep(0.05)
    return None


def run_session(
    protocol: str,
    folder: Path,
    *,
    seed: int = 1,
    loss: Mapping[str, Any] | None = None,
    cycles: int = 10,
    pki: Path | None = None,
) -> RealSession:
    """One real session over the emulated cable; its files go to ``folder``
    (``evcc.log``, ``secc.log``, ``decisions.csv``, ``near.pcap``, ``far.pcap``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for side in ("evcc", "secc"):
        (folder / side).mkdir(exist_ok=True)
    config = folder / "evcc" / "evcc_config.json"
    config.write_text(json.dumps(evcc_config(protocol, cycles, pki is not None), indent=1))
    started = time.perf_counter()
    em = Emulation(scenario(loss, cycles), seed=seed, log=folder / "decisions.csv", pcap=folder)
    reason = "the EVCC ended without a SessionStopRes"
    with em:
        side = {node: s for s, node in em.nodes.items()}
        # No router solicitations: /proc/sys/net is the namespace's own.
        conf = "/proc/sys/net/ipv6/conf/vtlab0"
        quiet = f"echo 0 > {conf}/accept_ra && echo 0 > {conf}/router_solicitations"
        for s in em.namespaces:
            if em.run(quiet, s, timeout=10).returncode != 0:
                raise CliError("--real", "cannot switch off router solicitations in " + s)
        env = stack_env(pki)
        py = sys.executable
        logs = {n: (folder / f"{n}.log").open("w") for n in ("secc", "evcc")}
        try:
            secc = em.popen([py, "-m", "iso15118.secc.main"], side["secc"], env=env,
                            stdout=logs["secc"], stderr=subprocess.STDOUT,
                            cwd=folder / "secc")  # fmt: skip
            if _wait_for(folder / "secc.log", re.compile("UDP server started"), secc,
                         SECC_START_S) is None:  # fmt: skip
                raise CliError("--real", f"the SECC did not start (see {folder / 'secc.log'})")
            evcc = em.popen([py, "-m", "iso15118.evcc.main", str(config)], side["evcc"],
                            env=env, stdout=logs["evcc"], stderr=subprocess.STDOUT,
                            cwd=folder / "evcc")  # fmt: skip
            both = re.compile(f"{_DONE.pattern}|{_FAILED.pattern}")
            line = _wait_for(folder / "evcc.log", both, evcc, SESSION_LIMIT_S)
            if line is None and evcc.poll() is None:
                reason = f"no SessionStopRes within {SESSION_LIMIT_S:g} s"
            time.sleep(0.3)  # the last ACKs cross the cable
        finally:
            for fh in logs.values():
                fh.close()
    meta = {"protocol": protocol, "seed": seed, "loss": dict(loss) if loss else None,
            "reason": reason,
            "wall_s": time.perf_counter() - started, "side": side}  # fmt: skip
    (folder / "session.json").write_text(json.dumps(meta, indent=1))
    return load_session(folder)


def load_session(folder: Path) -> RealSession:
    """A session :func:`run_session` wrote to ``folder``, read back from its files."""
    meta = json.loads((folder / "session.json").read_text())
    text = (folder / "evcc.log").read_text(errors="replace")
    completed, reason = outcome(text)
    out = RealSession(meta["protocol"], meta["seed"], meta["loss"], completed,
                      "" if completed else reason or meta["reason"], meta["wall_s"],
                      str(folder))  # fmt: skip
    out.log_messages = parse_log(text)
    out.decisions = read_decisions(folder / "decisions.csv")
    out.frames = parse_capture(folder, ADDRESSES, meta["side"], out.decisions)
    return out


def outcome(text: str) -> tuple[bool, str]:
    """Whether the EVCC's log shows a completed session (a SessionStopRes), else
    why it stopped (the reason it logged; empty when it logged none)."""
    if _DONE.search(text):
        return True, ""
    match = _FAILED.search(text)
    return False, match.group(0).removeprefix("Reason: ") if match else ""


def make_pki(folder: Path) -> Path:
    """The certificates of a Plug & Charge session over TLS, made by the stack's own
    script (``shared/pki/create_certs.sh -v iso-2``, OpenSSL; the wheel ships the
    script and its configurations, no certificates) in ``folder/pki``; made once."""
    import iso15118

    pki = folder / "pki"
    if (pki / "iso15118_2" / "certs").is_dir():
        return pki
    if shutil.which("openssl") is None:
        raise CliError("--real", "Plug & Charge needs openssl to make the test certificates")
    shutil.copytree(Path(iso15118.__file__).parent / "shared" / "pki", pki, dirs_exist_ok=True)
    done = subprocess.run(["bash", "create_certs.sh", "-v", "iso-2"], cwd=pki,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    if done.returncode != 0:
        raise CliError("--real", f"create_certs.sh failed: {done.stderr.strip()[-200:]}")
    return pki


def parse_log(text: str) -> list[dict[str, Any]]:
    """The EVCC's message lines: ``{"t": seconds of the day, "kind": "sent" |
    "received", "message": name}`` (its log has millisecond stamps)."""
    rows = []
    for line in text.splitlines():
        m = _LOG.match(line)
        if not m:
            continue
        stamp, msg = m.groups()
        hms = stamp.split(" ")[1].replace(",", ".").split(":")
        t = int(hms[0]) * 3600 + int(hms[1]) * 60 + float(hms[2])
        for kind, rx in (("sent", _SENT), ("received", _RECEIVED)):
            hit = rx.match(msg)
            if hit:
                name = hit.group(1)
                rows.append({"t": t, "kind": kind, "message": _SAP.get(name, name)})
    return rows


def read_decisions(path: Path) -> list[dict[str, Any]]:
    """The emulator's ``--log``: one dict per decision."""
    import csv

    if not path.exists():
        return []
    with path.open() as fh:
        return [dict(r, frame=int(r["frame"]), time_ns=int(r["time_ns"]))
                for r in csv.DictReader(fh)]  # fmt: skip


_FIELDS = ("frame.time_epoch", "eth.src", "tcp.seq", "tcp.ack", "tcp.len",
           "tcp.flags.syn", "tcp.flags.fin", "tcp.payload", "udp.dstport")  # fmt: skip


def _tshark(pcap: Path) -> list[list[str]]:
    args = ["tshark", "-n", "-r", str(pcap), "-o", "tcp.relative_sequence_numbers:TRUE",
            "-T", "fields", "-E", "separator=;"]  # fmt: skip
    for name in _FIELDS:
        args += ["-e", name]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise CliError(str(pcap), "tshark did not read it within 120 s") from None
    if done.returncode != 0:
        raise CliError(str(pcap), f"tshark cannot read it: {done.stderr.strip()[:200]}")
    return [line.split(";") for line in done.stdout.splitlines() if line]


def parse_capture(
    folder: Path,
    addresses: Mapping[str, Mapping[str, str]],
    side: Mapping[str, str],
    decisions: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """Every frame a stack sent, in the order it sent it: ``{"from": "evcc" |
    "secc", "index": its position among that end's frames (the emulator's ``frame``),
    "sent": time the emulator read it, "delivered": time it wrote it at the other end
    or None, "fate": the emulator's decision, "kind": "syn" | "data" | "ack" | "fin" |
    "udp" | "other", "seq", "ack", "len", "payload"}`` (TCP sequence numbers
    relative). Times are seconds of the emulator's clock."""
    node = {addresses[s]["mac"]: n for n, s in side.items()}
    frames: dict[str, list[dict[str, Any]]] = {"evcc": [], "secc": []}
    got: dict[str, list[float]] = {"evcc": [], "secc": []}
    for own in ("evcc", "secc"):
        for f in _tshark(folder / f"{side[own]}.pcap"):
            sender = node.get(f[1])
            if sender == own:
                frames[own].append(_frame(own, len(frames[own]), f))
            elif sender is not None:
                got[sender].append(float(f[0]))
    other = {"near": "far", "far": "near"}
    for sender, rows in frames.items():
        way = f"{side[sender]}->{other[side[sender]]}"
        fate = {d["frame"]: d["fate"] for d in decisions if d["way"] == way}
        # The emulator never reorders a direction: the k-th frame written at the other
        # end is the k-th of the sender's frames that it delivered.
        delivered = iter(got[sender])
        for row in rows:
            row["fate"] = fate.get(row["index"], "unknown")
            row["delivered"] = next(delivered, None) if row["fate"] == "delivered" else None
    return frames["evcc"] + frames["secc"]


def _frame(own: str, index: int, f: list[str]) -> dict[str, Any]:
    seq, ack, length, syn, fin, payload, udp = f[2:9]
    if seq:
        kind = (
            "syn" if syn == "1" else "fin" if fin == "1" else "data" if int(length or 0) else "ack"
        )
    else:
        kind = "udp" if udp else "other"
    return {
        "from": own,
        "index": index,
        "sent": float(f[0]),
        "kind": kind,
        "seq": int(seq) if seq else None,
        "ack": int(ack) if ack else None,
        "len": int(length) if length else 0,
        "payload": payload,
    }


def messages(frames: Sequence[Mapping[str, Any]], sender: str) -> list[dict[str, Any]]:
    """The V2GTP messages ``sender`` wrote, in order, from its TCP payloads: the
    stream offset of each (relative sequence number), its size on the wire (header
    and payload), its payload type; the header's length field gives each boundary."""
    data: dict[int, bytes] = {}
    for f in frames:
        if f["from"] == sender and f["kind"] == "data" and f["payload"]:
            data.setdefault(f["seq"], bytes.fromhex(f["payload"].replace(":", "")))
    stream, start = bytearray(), None
    for seq in sorted(data):
        if start is None:
            start = seq
        if seq - start == len(stream):
            stream += data[seq]
        elif seq - start < len(stream):
            stream += data[seq][len(stream) - (seq - start) :]
    if start is not None and stream[:1] == bytes([TLS_HANDSHAKE]):
        return _records(stream, start)
    out, pos = [], 0
    while start is not None and pos + V2GTP_HEADER <= len(stream):
        if stream[pos] != 0x01 or stream[pos + 1] != 0xFE:
            break
        length = int.from_bytes(stream[pos + 4 : pos + 8], "big")
        size = V2GTP_HEADER + length
        out.append({"seq": start + pos, "bytes": size,
                    "type": int.from_bytes(stream[pos + 2 : pos + 4], "big")})  # fmt: skip
        pos += size
    return out


def _records(stream: bytes, start: int) -> list[dict[str, Any]]:
    """The TLS records of a stream (header: type, version, 2-byte length): each
    application data record carries one V2G message; ``type`` is the record's."""
    out, pos = [], 0
    while pos + TLS_HEADER <= len(stream):
        size = TLS_HEADER + int.from_bytes(stream[pos + 3 : pos + 5], "big")
        out.append({"seq": start + pos, "bytes": size, "type": stream[pos]})
        pos += size
    return out


def _carrying(frames: Sequence[Mapping[str, Any]], sender: str, last: int) -> list[Any]:
    """The data frames of ``sender`` that carry stream byte ``last``."""
    return [f for f in frames if f["from"] == sender and f["kind"] == "data"
            and f["seq"] <= last < f["seq"] + f["len"]]  # fmt: skip


#: Where the EVCC of iso15118 0.31.2 waits for a response with another timer than
#: the message's own (evcc/states/iso15118_2_states.py: the PowerDelivery state
#: creates the first CurrentDemandReq with CHARGING_STATUS_REQ, 2 s, the
#: CurrentDemand state every later one with POWER_DELIVERY_REQ, 5 s; ISO 15118-2
#: [V2G2-536] and the stack's own CURRENT_DEMAND_REQ say 0.25 s): (first, later).
STACK_TIMEOUTS = {("iso15118-2", "CurrentDemand"): ("CHARGING_STATUS_REQ", "POWER_DELIVERY_REQ")}


def timeout_s(protocol: str, message: str, repeat: int = 0) -> float:
    """The EVCC's response timeout for the ``repeat``-th (from 0) ``message`` in a
    row, as the stack sets it: its ``Timeouts`` enums (SupportedAppProtocol in the
    shared one, the rest per protocol) under the message's name, except where
    :data:`STACK_TIMEOUTS` says it uses another."""
    from iso15118.shared.messages.timeouts import Timeouts as Shared

    if protocol == "din70121":
        from iso15118.shared.messages.din_spec.timeouts import Timeouts
    else:
        from iso15118.shared.messages.iso15118_2.timeouts import Timeouts
    key = re.sub(r"(?<!^)(?=[A-Z])", "_", message).upper() + "_REQ"
    other = STACK_TIMEOUTS.get((protocol, message))
    if other is not None:
        key = other[min(repeat, 1)]
    for enum in (Timeouts, Shared):
        if key in enum.__members__:
            return float(enum[key].value)
    raise KeyError(f"no timeout for {message} in iso15118 {ISO15118_VERSION}")


def exchanges(session: RealSession) -> list[dict[str, Any]]:
    """One row per request/response pair of ``session``, at the cable: the message
    (from the EVCC's log, in order), wire sizes, when the request was first sent and
    delivered, when the response was first sent and delivered, the response time
    (first request sent → response delivered, the EVCC's view less its own stack),
    the charger's processing time (request delivered → response first sent), the
    retransmissions of each, the stack's timeout and whether it was missed."""
    frames = session.frames
    names = [m["message"] for m in session.log_messages if m["kind"] == "sent"]
    reqs, resps = messages(frames, "evcc"), messages(frames, "secc")
    hs_req, hs_resp = _flights(frames, reqs, resps)
    reqs = hs_req + [m for m in reqs if _carries_v2g(m)]
    resps = hs_resp + [m for m in resps if _carries_v2g(m)]
    names = list(TLS_STEPS[: len(hs_req)]) + names
    rows = []
    for i, req in enumerate(reqs):
        name = names[i] if i < len(names) else "?"
        row: dict[str, Any] = {"index": i, "message": name, "request_bytes": req["bytes"]}
        row.update(_times(frames, "evcc", req, "request"))
        resp = resps[i] if i < len(resps) else None
        row["response_bytes"] = resp["bytes"] if resp else None
        row.update(_times(frames, "secc", resp, "response"))
        done = row["response_delivered_s"]
        row["response_time_s"] = None if done is None else done - row["request_sent_s"]
        sent, got = row["response_sent_s"], row["request_delivered_s"]
        row["processing_s"] = None if sent is None or got is None else sent - got
        if name in TLS_STEPS:
            row["timeout_s"] = TLS_HANDSHAKE_TIMEOUT_S
        else:
            row["timeout_s"] = timeout_s(session.protocol, name, _repeat(names, i))
        rt, limit = row["response_time_s"], row["timeout_s"]
        row["missed"] = rt is None or (limit is not None and rt > limit)
        rows.append(row)
    return rows


def _carries_v2g(m: Mapping[str, Any]) -> bool:
    """A V2GTP message, or a TLS application data record (one V2G message each)."""
    return m["type"] == TLS_APPLICATION_DATA or m["type"] >= 0x100


def _flights(
    frames: Sequence[Mapping[str, Any]],
    reqs: Sequence[Mapping[str, Any]],
    resps: Sequence[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The TLS handshake as the session model has it, two round trips: the records
    before the first application data of each side, grouped into flights (the
    records one side sends before the other answers), each flight as one message."""

    def before_data(ms: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        out = []
        for m in ms:
            if _carries_v2g(m):
                break
            out.append(m)
        return out

    hs = {"evcc": before_data(reqs), "secc": before_data(resps)}
    if not hs["evcc"]:
        return [], []
    sent = {k: [_first_sent(frames, k, m) for m in v] for k, v in hs.items()}
    flights: dict[str, list[dict[str, Any]]] = {"evcc": [], "secc": []}
    for side, other in (("evcc", "secc"), ("secc", "evcc")):
        for m, t in zip(hs[side], sent[side], strict=True):
            group = flights[side]
            # A new flight once the other side has sent since this flight began.
            if group and not any(group[-1]["t"] < u < t for u in sent[other]):
                group[-1]["bytes"] += m["bytes"]
            else:
                group.append({"seq": m["seq"], "bytes": m["bytes"], "type": m["type"], "t": t})
    return flights["evcc"], flights["secc"]


def _first_sent(frames: Sequence[Mapping[str, Any]], sender: str, m: Mapping[str, Any]) -> float:
    carry = _carrying(frames, sender, m["seq"])
    return min(f["sent"] for f in carry)


def _repeat(names: Sequence[str], i: int) -> int:
    """How many of the same message come right before the ``i``-th."""
    k = i
    while k > 0 and k - 1 < len(names) and i < len(names) and names[k - 1] == names[i]:
        k -= 1
    return i - k


def _times(
    frames: Sequence[Mapping[str, Any]], sender: str, msg: Mapping[str, Any] | None, what: str
) -> dict[str, Any]:
    keys = (f"{what}_sent_s", f"{what}_delivered_s", f"{what}_retransmissions")
    if msg is None:
        return dict.fromkeys(keys[:2]) | {keys[2]: 0}
    carry = _carrying(frames, sender, msg["seq"] + msg["bytes"] - 1)
    got = [f["delivered"] for f in carry if f["delivered"] is not None]
    return {
        keys[0]: min(f["sent"] for f in carry),
        keys[1]: min(got) if got else None,
        keys[2]: len(carry) - 1,
    }
