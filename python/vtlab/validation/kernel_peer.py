"""The two ends of the kernel family's bulk transfer (:mod:`vtlab.validation.kernel`),
run in the emulation's namespaces as ``python -m vtlab.validation.kernel_peer``.

* ``recv PORT`` (the near end, the flow's receiver): listens, prints ``ready``, accepts
  one connection, reads to its end and prints one JSON line: the bytes read, the
  monotonic time of the last byte (``CLOCK_MONOTONIC`` is one clock for every
  namespace of the machine) and its namespace's TCP sysctls.
* ``send HOST PORT BYTES CC`` (the far end, the flow's sender): notes the time,
  connects with ``TCP_CONGESTION`` set to ``CC``, sends ``BYTES`` bytes, shuts its
  side down, waits for the receiver to close and prints one JSON line: the start
  time, its ``TCP_INFO`` retransmission count, its namespace's TCP counters (the
  namespace is new: they are this connection's) and sysctls.
* ``serve PORT REQ RESP`` (the session's charger): listens, prints ``ready``, accepts
  one connection and answers every ``REQ`` bytes read with ``RESP`` bytes at once.
* ``exchange HOST PORT REQ RESP N PERIOD CC`` (the session's vehicle): connects, then
  ``N`` times writes ``REQ`` bytes and reads ``RESP`` bytes, each request no earlier
  than ``PERIOD`` seconds after the previous one; prints one JSON line with every
  response time (request written to response read whole).

Both session ends set ``TCP_NODELAY``, as asyncio (and so the ``iso15118`` stack)
does on every TCP connection.

Only the standard library: it starts fast and imports nothing of vtlab.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import time
from collections.abc import Sequence
from pathlib import Path

#: The TCP sysctls the report gives, read in each end's own namespace (most of them
#: are per network namespace, with the kernel's defaults in a new one).
SYSCTLS = (
    "tcp_congestion_control",
    "tcp_rmem",
    "tcp_wmem",
    "tcp_sack",
    "tcp_timestamps",
    "tcp_recovery",
    "tcp_early_retrans",
    "tcp_frto",
    "tcp_no_metrics_save",
)
#: ``struct tcp_info`` (linux/tcp.h): 8 one-byte fields, then 32-bit fields of which
#: ``tcpi_total_retrans`` is the 24th (rto, ato, snd_mss, rcv_mss, unacked, sacked,
#: lost, retrans, fackets, 4 timestamps, pmtu, rcv_ssthresh, rtt, rttvar,
#: snd_ssthresh, snd_cwnd, advmss, reordering, rcv_rtt, rcv_space, total_retrans):
#: offset 8 + 23 · 4.
TOTAL_RETRANS_OFFSET = 8 + 23 * 4
#: The socket option TCP_CONGESTION (linux/tcp.h), for Pythons without the constant.
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
CHUNK = 65536


def sysctls(root: Path = Path("/proc/sys/net/ipv4")) -> dict[str, str]:
    """The values of :data:`SYSCTLS` under ``root`` (whitespace runs as one space;
    ``missing`` for a file that is not there)."""
    out = {}
    for name in SYSCTLS:
        try:
            out[name] = " ".join((root / name).read_text().split())
        except OSError:
            out[name] = "missing"
    return out


#: The namespace's TCP counters the sender reports (``/proc/net/netstat``, TcpExt):
#: retransmission timeouts, tail loss probes, retransmissions lost again.
NETSTAT = ("TCPTimeouts", "TCPLossProbes", "TCPLostRetransmit")


def netstat(text: str) -> dict[str, int]:
    """The :data:`NETSTAT` counters of a ``/proc/net/netstat`` text (pairs of lines,
    ``TcpExt: NAME ...`` then ``TcpExt: VALUE ...``); 0 for one that is missing."""
    lines = [ln.split() for ln in text.splitlines()]
    for names, values in zip(lines, lines[1:], strict=False):
        if names[:1] == ["TcpExt:"] and values[:1] == ["TcpExt:"] and not names[1].isdigit():
            found = dict(zip(names[1:], values[1:], strict=False))
            return {k: int(found.get(k, 0)) for k in NETSTAT}
    return dict.fromkeys(NETSTAT, 0)


def total_retrans(info: bytes) -> int:
    """``tcpi_total_retrans`` of a ``TCP_INFO`` buffer."""
    return int(struct.unpack_from("=I", info, TOTAL_RETRANS_OFFSET)[0])


def receive(port: int) -> dict[str, object]:
    """Accept one connection on ``port`` and read it to its end."""
    with socket.create_server(("0.0.0.0", port)) as srv:
        print("ready", flush=True)
        conn, _ = srv.accept()
        with conn:
            n, last = 0, time.monotonic()
            while True:
                data = conn.recv(CHUNK)
                if not data:
                    break
                n += len(data)
                last = time.monotonic()
    return {"bytes": n, "last_byte_s": last, "sysctls": sysctls()}


def send(host: str, port: int, nbytes: int, cc: str) -> dict[str, object]:
    """Connect to ``host:port`` with congestion control ``cc``, send ``nbytes``, and
    wait for the receiver to close."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with sock:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
        start = time.monotonic()
        sock.connect((host, port))
        block = bytes(CHUNK)
        left = nbytes
        while left > 0:
            left -= sock.send(block[: min(left, CHUNK)])
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(CHUNK):
            pass
        used = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return {
        "start_s": start,
        "cc": used,
        "retransmissions": total_retrans(info),
        "netstat": netstat(Path("/proc/net/netstat").read_text()),
        "sysctls": sysctls(),
    }


def _read_exactly(sock: socket.socket, n: int) -> bool:
    """Read ``n`` bytes; False at the end of the stream."""
    while n > 0:
        data = sock.recv(n)
        if not data:
            return False
        n -= len(data)
    return True


def serve(port: int, req: int, resp: int) -> dict[str, object]:
    """Answer every ``req`` bytes with ``resp`` bytes until the peer closes."""
    with socket.create_server(("0.0.0.0", port)) as srv:
        print("ready", flush=True)
        conn, _ = srv.accept()
        with conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            answered = 0
            while _read_exactly(conn, req):
                conn.sendall(bytes(resp))
                answered += 1
    return {"answered": answered}


def exchange(
    host: str, port: int, req: int, resp: int, n: int, period: float, cc: str
) -> dict[str, object]:
    """``n`` request/response exchanges, at most one per ``period``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    times = []
    with sock:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.connect((host, port))
        for _ in range(n):
            start = time.monotonic()
            sock.sendall(bytes(req))
            if not _read_exactly(sock, resp):
                break
            times.append(round(time.monotonic() - start, 9))
            time.sleep(max(0.0, start + period - time.monotonic()))
    return {"response_s": times}


USAGE = (
    "usage: kernel_peer recv PORT | send HOST PORT BYTES CC | serve PORT REQ RESP | "
    "exchange HOST PORT REQ RESP N PERIOD CC"
)


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["recv"] and len(argv) == 2:
        res = receive(int(argv[1]))
    elif argv[:1] == ["send"] and len(argv) == 5:
        res = send(argv[1], int(argv[2]), int(argv[3]), argv[4])
    elif argv[:1] == ["serve"] and len(argv) == 4:
        res = serve(int(argv[1]), int(argv[2]), int(argv[3]))
    elif argv[:1] == ["exchange"] and len(argv) == 8:
        host, port, req, resp, n = argv[1], *(int(a) for a in argv[2:6])
        res = exchange(host, port, req, resp, n, float(argv[6]), argv[7])
    else:
        print(USAGE, file=sys.stderr)
        return 2
    print(json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
