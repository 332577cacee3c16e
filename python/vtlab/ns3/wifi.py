"""The 802.11 vehicular chain program ``validation/ns3/wifi.cc``: its arguments from a
resolved ``vanet-chain`` scenario (:func:`wifi_args`) and its output lines
(validation/ns3/README-wifi.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from vtlab.ns3.cc import ns3_type_id
from vtlab.ns3.process import num
from vtlab.ns3.program import Ns3Error

__all__ = ["SPEED_FORMAT", "WIFI_CCS", "parse_output", "parse_result", "wifi_args"]

#: The congestion controls the program runs (their TypeIds: :func:`ns3_type_id`).
WIFI_CCS: tuple[str, ...] = ("newreno", "vegas")
#: The number format of ``--speed`` (m/s): that of the program's default, 5.5556.
SPEED_FORMAT = ".5g"


def wifi_args(expanded: Mapping[str, Any], seed: int) -> list[str]:
    """``wifi.cc`` arguments for a resolved ``vanet-chain`` scenario and a seed (passed
    as ``--run``).  Raises :class:`ValueError` naming what the program cannot
    reproduce.

    The speed goes to 5 significant digits (:data:`SPEED_FORMAT`): the stored
    reference runs were made at the program's 5.5556 m/s, the preset's 20 km/h so
    written.  Every vehicle moves at it, so no distance depends on it, but ns-3's
    floating-point positions do: at the full 5.555555555555555 m/s, 40 of the 80 stored
    runs differ in some counter and one cell's mean goodput by 0.05 %."""
    media = expanded.get("media") or []
    flows = expanded.get("flows") or []
    if expanded.get("preset") != "vanet-chain" or len(media) != 1 or len(flows) != 1:
        raise ValueError("the ns-3 Wi-Fi program reproduces the vanet-chain preset only")
    w, tcp, flow = media[0]["wifi"], flows[0]["tcp"], flows[0]
    if tcp["cc"] not in WIFI_CCS:
        raise ValueError(f"tcp.cc: the ns-3 Wi-Fi program runs {', '.join(WIFI_CCS)} only")
    if w["data_rate_kbps"] != 1000 or w["control_rate_kbps"] != 1000 or w["standard"] != "b":
        raise ValueError("wifi: the ns-3 Wi-Fi program runs 802.11b at 1 Mbit/s only")
    if w["error"].get("model") != "none":
        raise ValueError("wifi.error: the ns-3 Wi-Fi program has no error model")
    x = [m["x_m"] for m in media[0]["mobility"]]
    start = flow["start_ns"] / 1e9
    stop = expanded["stop_ns"] / 1e9
    return [
        f"--hops={len(x) - 1}",
        f"--spacing={num(x[1] - x[0])}",
        f"--speed={media[0]['mobility'][0]['vx_mps']:{SPEED_FORMAT}}",
        f"--rts={int(w['rts_threshold_bytes'] == 0)}",
        f"--ifq={w['ifq_packets']}",
        f"--cc={ns3_type_id(tcp['cc'])}",
        f"--sack={int(tcp['recovery'] == 'sack')}",
        f"--delAck={tcp['delayed_ack_count'] if tcp['delayed_ack'] else 1}",
        f"--initCwnd={tcp['initial_cwnd']}",
        f"--minRto={num(tcp['rto_min_ns'] / 1e9)}",
        f"--segment={tcp['mss']}",
        f"--window={tcp['recv_buffer'] // tcp['mss']}",
        f"--start={num(start)}",
        f"--duration={num(stop - start)}",
        f"--run={int(seed)}",
    ]


def parse_output(stdout: str) -> dict[str, dict[str, Any]]:
    """The JSON lines of a ``wifi.cc`` run by kind: ``config`` (every setting the run
    used) and ``result``.  Raises :class:`Ns3Error` without a result line."""
    lines: dict[str, dict[str, Any]] = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            lines[str(d.get("kind"))] = d
    if "result" not in lines:
        raise Ns3Error("the ns-3 Wi-Fi program printed no result line")
    return lines


def parse_result(stdout: str) -> dict[str, Any]:
    """The ``result`` object of a ``wifi.cc`` run (:func:`parse_output`)."""
    return parse_output(stdout)["result"]
