"""How accurate and how fast `vtlab emulate` is on this machine (needs root and iperf3).

    sudo python benchmarks/emulate.py [--seconds 5] [--rates 1,10,100,1000]

Three measurements, printed as a Markdown table for docs/emulation.md:

* **Rate.** The v2g path with the cable (plc) at RATE Mbit/s, 5 ms, no queue disc, a
  1000-packet queue (more than the 833 packets of 1 Gbit/s × 10 ms), and a WAN fast
  enough not to matter (100 Gbit/s, no delay). Four iperf3 TCP streams from the
  charger's end keep the cable's queue from running empty (1500 B IP packets, 1502 B
  on the cable with its 2 B framing; iperf3's UDP sender cannot offer 1 Gbit/s on a
  2-core machine, TCP can). The delivered rate is what the vehicle's iperf3 receives
  after the first second (its one-second intervals), × 1502 B / 1448 B of payload:
  the cable's rate as the receiving stack sees it. (Counting frames in a pcap of the
  vehicle's end slowed the emulator at 1 Gbit/s: it writes every frame twice.)
* **Lateness while saturated.** How long after the time the links delivered a frame
  the emulator wrote it (its own error on top of the model's delay; p50, p99, max),
  from the driver's histogram for the same runs.
* **Ceiling.** Both links at 100 Gbit/s without delay: iperf3 TCP throughput (the
  receiver's figure) with 1500 B frames through the emulator, and the frames per
  second that makes.
* **Capacity step.** lte-cabin's downlink from a mahimahi trace whose capacity halves
  after 3 s, saturated by UDP: the share of frames the radio link delivered exactly at
  an opportunity of the trace (+ the 4 ms radio delay), the rate before and after the
  step (from the ``--log`` decisions), and the lateness of the writes.
* ``--realtime`` runs the links at real-time priority (``vtlab emulate --realtime``).
* **Idle round trip.** ping over the default v2g path (no load) against the model's
  round trip for 84 B ICMP packets, derived by hand below.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "python"))

from vtlab.emulation import ADDRESSES, Emulation  # noqa: E402
from vtlab.scenario import Scenario  # noqa: E402

FRAME_ON_CABLE = 1502  # 1500 B IP packet + 2 B PLC framing
PAYLOAD = 1448  # TCP payload of a 1500 B packet (Linux, timestamps on)


def _scenario(plc_rate: str, plc_delay: str = "5ms") -> Scenario:
    return Scenario.preset(
        "v2g",
        wan_rate="100Gbps",
        wan_delay=0,
        plc_rate=plc_rate,
        plc_delay=plc_delay,
        qdisc="none",
        queue_packets=1000,
    )


def rate_run(mbps: float, seconds: float, realtime: bool) -> dict[str, float]:
    sc = _scenario(f"{mbps}Mbps")
    with Emulation(sc, realtime=realtime) as em:
        em.popen("iperf3 -s -1", "far", stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        done = em.run(
            f"iperf3 -J -R -P 4 -c {ADDRESSES['far']['ipv4']} -t {seconds}",
            "near",
            stdout=subprocess.PIPE,
            text=True,
            timeout=seconds + 30,
        )
    late = (em.counters or {})["lateness"][0]
    # The receiver's one-second intervals after the first: payload bytes, 1448 B per
    # 1502 B on the cable.
    kept = [i["sum"] for i in json.loads(done.stdout)["intervals"] if i["sum"]["start"] >= 1]
    payload = sum(i["bytes"] for i in kept)
    window = sum(i["seconds"] for i in kept)
    return {
        "configured": mbps,
        "delivered": payload * FRAME_ON_CABLE / PAYLOAD * 8 / window / 1e6,
        "p50_us": late["p50_ns"] / 1e3,
        "p99_us": late["p99_ns"] / 1e3,
        "max_us": late["max_ns"] / 1e3,
    }


def ceiling(seconds: float, realtime: bool) -> dict[str, float]:
    sc = _scenario("100Gbps", "0")
    with Emulation(sc, realtime=realtime) as em:
        em.popen("iperf3 -s -1", "near", stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        done = em.run(
            f"iperf3 -J -c {ADDRESSES['near']['ipv4']} -t {seconds}",
            "far",
            stdout=subprocess.PIPE,
            text=True,
            timeout=seconds + 30,
        )
    bps = json.loads(done.stdout)["end"]["sum_received"]["bits_per_second"]
    # 1448 B of payload per 1514 B Ethernet frame (timestamps on).
    return {"tcp_mbps": bps / 1e6, "frames_per_s": bps / 8 / 1448}


#: The step's trace: one 1504 B opportunity per ms (12.03 Mbit/s) for 3 s, then one
#: every 2 ms (6.02 Mbit/s) until 6 s (it then repeats).
STEP_TRACE = [*range(1, 3001), *range(3002, 6001, 2)]
RADIO_DELAY_NS = 4_000_000  # lte-cabin's radio_delay


def step(log: Path, realtime: bool) -> dict[str, float]:
    """lte-cabin's downlink from a trace with a step, saturated by UDP (1500 B IP
    packets, one per opportunity); from the --log decisions on the radio link: the
    share of frames delivered exactly at an opportunity + the radio delay, the rate
    before and after the step; and the lateness."""
    sc = Scenario.preset("lte-cabin", capacity_down={"trace_ms": STEP_TRACE})
    with Emulation(sc, log=log, realtime=realtime) as em:
        em.popen("iperf3 -s -1", "near", stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        em.run(
            f"iperf3 -c {ADDRESSES['near']['ipv4']} -u -b 15M -l 1472 -t 5.5",
            "far",
            stdout=subprocess.DEVNULL,
            timeout=40,
        )
    times = []
    for line in log.read_text().splitlines()[1:]:
        t, _, _, link, direction, fate = line.split(",")
        if (link, direction, fate) == ("lte", "enb->hotspot", "delivered"):
            times.append(int(t))
    opportunities = set(STEP_TRACE)
    on_time = sum(
        1
        for t in times
        if (t - RADIO_DELAY_NS) % 1_000_000 == 0
        and ((t - RADIO_DELAY_NS) // 1_000_000 - 1) % 6000 + 1 in opportunities
    )

    def rate(a: float, b: float) -> float:
        n = sum(1 for t in times if a * 1e9 <= t < b * 1e9)
        return n * 1500 * 8 / (b - a) / 1e6

    late = (em.counters or {})["lateness"][0]
    return {
        "frames": len(times),
        "on_opportunity": on_time / max(1, len(times)),
        "before": rate(1.5, 3.0),
        "after": rate(3.5, 5.5),
        "p99_us": late["p99_ns"] / 1e3,
    }


def idle_rtt() -> tuple[float, float]:
    """Smallest ping RTT (ms) of 20 over the default v2g path, and the model's.

    84 B ICMP packets + 2 B framing = 86 B on each link: WAN 86·8/500e6 = 1.376 µs,
    PLC 86·8/10e6 = 68.8 µs, 0.9 ms each: one way 1870.176 µs, a round trip
    3.740352 ms."""
    with Emulation("v2g") as em:
        done = em.run(
            f"ping -q -c 20 -i 0.05 {ADDRESSES['far']['ipv4']}",
            "near",
            stdout=subprocess.PIPE,
            text=True,
            timeout=30,
        )
    stats = done.stdout.strip().splitlines()[-1].split("=")[1].split("/")
    return float(stats[0]), 3.740352


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rates", default="1,10,100,1000", help="Mbit/s, comma-separated")
    ap.add_argument("--realtime", action="store_true", help="Links at real-time priority.")
    args = ap.parse_args()
    if shutil.which("iperf3") is None or shutil.which("ping") is None:
        print("needs iperf3 and ping (Debian: apt-get install iperf3 iputils-ping)")
        return 2
    print("| configured (Mbit/s) | delivered (Mbit/s) | error | late p50 | p99 | max |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in (float(x) for x in args.rates.split(",")):
        m = rate_run(r, args.seconds, args.realtime)
        err = (m["delivered"] / m["configured"] - 1) * 100
        print(
            f"| {r:g} | {m['delivered']:.3f} | {err:+.2f} % | {m['p50_us']:.0f} µs "
            f"| {m['p99_us']:.0f} µs | {m['max_us']:.0f} µs |",
            flush=True,
        )
    c = ceiling(args.seconds, args.realtime)
    print(f"\nceiling: TCP {c['tcp_mbps']:.0f} Mbit/s, {c['frames_per_s']:.0f} frames/s of 1514 B")
    with tempfile.TemporaryDirectory() as tmp:
        st = step(Path(tmp) / "log.csv", args.realtime)
    print(
        f"capacity step: {st['frames']} frames on the radio link, "
        f"{st['on_opportunity'] * 100:.2f} % at an opportunity + 4 ms; "
        f"{st['before']:.3f} Mbit/s before (trace 12.03), {st['after']:.3f} after (6.02); "
        f"late p99 {st['p99_us']:.0f} µs"
    )
    measured, model = idle_rtt()
    print(f"idle round trip (min of 20 pings): {measured:.3f} ms, model {model:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
