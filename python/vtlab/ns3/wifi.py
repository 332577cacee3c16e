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

__all__ = [
    "SPEED_FORMAT",
    "WIFI_CCS",
    "error_args",
    "parse_output",
    "parse_result",
    "wifi_args",
]

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
    sack = tcp["recovery"] == "sack"
    if tcp["cc"] not in WIFI_CCS and tcp["cc"] != "sack":
        raise ValueError(f"tcp.cc: the ns-3 Wi-Fi program runs {', '.join(WIFI_CCS)}, sack only")
    if w["data_rate_kbps"] != 1000 or w["control_rate_kbps"] != 1000 or w["standard"] != "b":
        raise ValueError("wifi: the ns-3 Wi-Fi program runs 802.11b at 1 Mbit/s only")
    retry_limit = w.get("frame_retry_limit")
    if retry_limit is None:
        raise ValueError(
            "wifi.frame_retry_limit: ns-3.44 counts RTS and data attempts of a frame "
            "together (FrameRetryLimit, 7 by default); set it"
        )
    if not w.get("rts_nav_reset", False):
        raise ValueError(
            "wifi.rts_nav_reset: ns-3 resets an RTS-set NAV when no frame follows; set it"
        )
    lifetime = w.get("queue_lifetime_ns")
    if lifetime is None:
        raise ValueError(
            "wifi.queue_lifetime: ns-3's WifiMacQueue always has one (MaxDelay, 500ms by "
            "default); set it"
        )
    x = [m["x_m"] for m in media[0]["mobility"]]
    start = flow["start_ns"] / 1e9
    stop = expanded["stop_ns"] / 1e9
    return [
        f"--hops={len(x) - 1}",
        f"--spacing={num(x[1] - x[0])}",
        f"--speed={media[0]['mobility'][0]['vx_mps']:{SPEED_FORMAT}}",
        f"--rts={int(w['rts_threshold_bytes'] == 0)}",
        f"--ifq={w['ifq_packets']}",
        f"--macMaxDelay={num(lifetime / 1e6)}",
        f"--retryLimit={retry_limit}",
        f"--cc={'TcpNewReno' if tcp['cc'] == 'sack' else ns3_type_id(tcp['cc'])}",
        f"--sack={int(sack)}",
        f"--dupAck={tcp['dupack_threshold']}",
        f"--delAck={tcp['delayed_ack_count'] if tcp['delayed_ack'] else 1}",
        f"--initCwnd={tcp['initial_cwnd']}",
        f"--minRto={num(tcp['rto_min_ns'] / 1e9)}",
        f"--segment={tcp['mss']}",
        f"--window={tcp['recv_buffer'] // tcp['mss']}",
        f"--start={num(start)}",
        f"--duration={num(stop - start)}",
        *error_args(w),
        f"--run={int(seed)}",
    ]


def error_args(w: Mapping[str, Any]) -> list[str]:
    """``wifi.cc``'s ``--errorModel`` arguments for a resolved medium's error model:
    none; the on-off model (``wifi.error_rate``/``error_burst``: Gilbert-Elliott in
    time, lossless and all-lossy states, both directions) as ``onoff``; a Bernoulli
    model on incoming frames only as ``rate`` (ns-3's post-reception model).  Both at
    placement ``mac`` on every frame.  Raises :class:`ValueError` for any other."""
    e = w["error"]
    model = e.get("model")
    if model == "none":
        return ["--errorModel=none"]
    if w["error_placement"] != "mac" or w["error_frames"] != "all":
        raise ValueError("wifi.error: the ns-3 Wi-Fi program hits every frame at the MAC only")
    direction = w.get("error_direction", "both")
    if model == "bernoulli" and direction == "incoming":
        return ["--errorModel=rate", f"--errorRate={num(e['mean_loss'])}"]
    onoff = (
        model == "gilbert-elliott"
        and e["sojourn"] == "time"
        and (e["loss_good"], e["loss_bad"]) == (0.0, 1.0)
    )
    if onoff and direction == "both":
        bad, good = e["mean_bad"], e["mean_good"]
        return [
            "--errorModel=onoff",
            f"--errorRate={num(bad / (bad + good))}",
            f"--errorBurst={num(bad)}",
        ]
    raise ValueError(
        "wifi.error: the ns-3 Wi-Fi program has the on-off model (both directions) and "
        'a Bernoulli model with error_direction = "incoming" only'
    )


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
