"""How accurate and how fast `vtlab emulate` is on this machine (needs root, iperf3, ping).

    sudo python benchmarks/emulate.py [--runs 3] [--seconds 4] [--rates 1,10,100,1000]
                                      [--no-realtime]

Prints, against the targets of issue 23 (about 2 minutes with the defaults):

* **Rate.** The v2g path with the cable (plc) at RATE Mbit/s, 5 ms, no queue disc, a
  1000-packet queue (more than the 833 packets of 1 Gbit/s × 10 ms), and a WAN fast
  enough not to matter (100 Gbit/s, no delay). Four iperf3 TCP streams from the
  charger's end keep the cable's queue full (its drops show it). The delivered rate is
  counted where the frames arrive: the vehicle namespace's interface counters (read
  from /proc/PID/net/dev of a process in it) from 1 s after the start to 0.3 s before
  the end, each Ethernet frame as its bytes on the cable (less the 14 B Ethernet
  header, plus the cable's 2 B framing). Target: within 1 % of the configured rate.
* **Lateness while saturated.** For the same runs: how long after the time the links
  delivered a frame the emulator wrote it into the vehicle's namespace (its own error on
  top of the model's delay; p50, p99, max over the whole run, slow start included),
  from the emulator's histogram. Target: p99 within 0.2 ms.
* **Ceiling.** Both links at 100 Gbit/s without delay: iperf3 TCP throughput (the
  receiver's figure) through the emulator, frames of 1514 B. Target: 1 Gbit/s.
* **Capacity step.** lte-cabin's downlink from a mahimahi trace whose capacity halves
  after 3 s, saturated by UDP: the share of frames the radio link delivered exactly at
  an opportunity of the trace (+ the 4 ms radio delay), the rate before and after the
  step (from the ``--log`` decisions), and the lateness of the writes.
* **Idle round trip.** ping over the default v2g path (no load) against the model's
  round trip for 84 B ICMP packets, derived by hand below.

Each rate and the ceiling run ``--runs`` times; the tables give the median and the
range. ``--no-realtime`` runs the emulator at normal priority (``vtlab emulate
--no-realtime``). The emulator's busy share is the CPU time of its thread over the run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "python"))

from vtlab.emulation import ADDRESSES, IFACE, Emulation  # noqa: E402
from vtlab.scenario import Scenario  # noqa: E402

#: An Ethernet frame on the TAP device is its IP packet + 14 B; on the cable the IP
#: packet + 2 B of framing.
ETH_TO_CABLE = 14 - 2


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


def _rx(pid: int) -> tuple[float, int, int]:
    """(time, received bytes, received frames) of the interface of the namespace that
    process ``pid`` is in, the time taken in the middle of the read."""
    for _ in range(5):
        t0 = time.monotonic()
        text = Path(f"/proc/{pid}/net/dev").read_text()
        t1 = time.monotonic()
        if t1 - t0 < 200e-6:
            break
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name.strip() == IFACE:
            fields = rest.split()
            return (t0 + t1) / 2, int(fields[0]), int(fields[1])
    raise RuntimeError(f"{IFACE} not in /proc/{pid}/net/dev")


def rate_run(mbps: float, seconds: float, realtime: bool) -> dict[str, float]:
    sc = _scenario(f"{mbps}Mbps")
    with Emulation(sc, realtime=realtime) as em:
        probe = em.popen(["sleep", "600"], "near")  # a process in the vehicle's namespace
        em.popen("iperf3 -s -1", "far", stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        client = em.popen(
            ["iperf3", "-R", "-P", "4", "-c", ADDRESSES["far"]["ipv4"], "-t", f"{seconds}"],
            "near",
            stdout=subprocess.DEVNULL,
        )
        start = time.monotonic()
        time.sleep(1.0)
        a = _rx(probe.pid)
        time.sleep(max(0.5, start + seconds - 0.3 - time.monotonic()))
        b = _rx(probe.pid)
        client.wait(timeout=seconds + 30)
    c = em.counters or {}
    late = c["lateness"][0]
    cable = (b[1] - a[1]) - ETH_TO_CABLE * (b[2] - a[2])
    return {
        "delivered": cable * 8 / (b[0] - a[0]) / 1e6,
        "p50_us": late["p50_ns"] / 1e3,
        "p99_us": late["p99_ns"] / 1e3,
        "max_us": late["max_ns"] / 1e3,
        "busy": c["cpu_seconds"] / c["seconds"],
        "queue_drops": sum(x["drops_queue"] for x in c["counters"]),
        "realtime": c["realtime"],
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
    c = em.counters or {}
    bps = json.loads(done.stdout)["end"]["sum_received"]["bits_per_second"]
    # 1448 B of payload per 1514 B Ethernet frame (timestamps on).
    return {
        "tcp_mbps": bps / 1e6,
        "frames_per_s": bps / 8 / 1448,
        "busy": c["cpu_seconds"] / c["seconds"],
    }


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
            stderr=subprocess.DEVNULL,
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


def idle_rtt(realtime: bool) -> tuple[float, float]:
    """Smallest ping RTT (ms) of 20 over the default v2g path, and the model's.

    84 B ICMP packets + 2 B framing = 86 B on each link: WAN 86·8/500e6 = 1.376 µs,
    PLC 86·8/10e6 = 68.8 µs, 0.9 ms each: one way 1870.176 µs, a round trip
    3.740352 ms."""
    with Emulation("v2g", realtime=realtime) as em:
        done = em.run(
            f"ping -q -c 20 -i 0.05 {ADDRESSES['far']['ipv4']}",
            "near",
            stdout=subprocess.PIPE,
            text=True,
            timeout=30,
        )
    stats = done.stdout.strip().splitlines()[-1].split("=")[1].split("/")
    return float(stats[0]), 3.740352


def _spread(values: list[float], fmt: str) -> str:
    """The median and, over several runs, the range."""
    med = format(statistics.median(values), fmt)
    if len(values) < 2:
        return med
    return f"{med} ({format(min(values), fmt)} to {format(max(values), fmt)})"


def rate_table(rates: list[float], runs: int, seconds: float, realtime: bool) -> list[bool]:
    print("| configured (Mbit/s) | delivered (Mbit/s) | error % | late p50 µs | p99 µs |")
    print("|---:|---:|---:|---:|---:|")
    verdicts = []
    extra = []
    for r in rates:
        ms = [rate_run(r, seconds, realtime) for _ in range(runs)]
        errors = [(m["delivered"] / r - 1) * 100 for m in ms]
        p99 = [m["p99_us"] for m in ms]
        print(
            f"| {r:g} | {_spread([m['delivered'] for m in ms], '.3f')} "
            f"| {_spread(errors, '+.2f')} | {_spread([m['p50_us'] for m in ms], '.0f')} "
            f"| {_spread(p99, '.0f')} |",
            flush=True,
        )
        extra.append(
            f"{r:g} Mbit/s: max lateness {_spread([m['max_us'] for m in ms], '.0f')} µs, "
            f"emulator busy {_spread([m['busy'] * 100 for m in ms], '.0f')} %, "
            f"queue drops {_spread([m['queue_drops'] for m in ms], '.0f')}, "
            f"real-time {all(m['realtime'] for m in ms)}"
        )
        verdicts.append(max(abs(e) for e in errors) <= 1.0)
        verdicts.append(statistics.median(p99) <= 200)
    print("\n" + "\n".join(extra))
    return verdicts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per rate and of the ceiling")
    ap.add_argument("--seconds", type=float, default=4.0, help="seconds of each iperf3 run")
    ap.add_argument("--rates", default="1,10,100,1000", help="Mbit/s, comma-separated")
    ap.add_argument(
        "--realtime",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the emulator at real-time priority (the default) or not",
    )
    args = ap.parse_args()
    if shutil.which("iperf3") is None or shutil.which("ping") is None:
        print("needs iperf3 and ping (Debian: apt-get install iperf3 iputils-ping)")
        return 2
    began = time.monotonic()
    print(
        f"# vtlab emulate benchmark: {os.cpu_count()} CPUs, Linux {platform.release()}, "
        f"{'real-time' if args.realtime else 'normal'} priority, {args.runs} runs of "
        f"{args.seconds:g} s; load average at start {os.getloadavg()[0]:.1f}\n"
    )
    print("## Rate (target: within 1 %) and lateness while saturated (target: p99 ≤ 200 µs)")
    print("median (range) of the runs\n")
    rates = [float(x) for x in args.rates.split(",")]
    verdicts = rate_table(rates, args.runs, args.seconds, args.realtime)
    cs = [ceiling(args.seconds, args.realtime) for _ in range(args.runs)]
    print("\n## Ceiling, no rate limit (target: ≥ 1000 Mbit/s of 1514 B frames)\n")
    print(
        f"TCP {_spread([c['tcp_mbps'] for c in cs], '.0f')} Mbit/s, "
        f"{_spread([c['frames_per_s'] for c in cs], '.0f')} frames/s; emulator busy "
        f"{_spread([c['busy'] * 100 for c in cs], '.0f')} %"
    )
    with tempfile.TemporaryDirectory() as tmp:
        st = step(Path(tmp) / "log.csv", args.realtime)
    print("\n## Capacity step (lte-cabin, mahimahi trace 12.03 Mbit/s for 3 s, then 6.02)\n")
    print(
        f"{st['frames']} frames on the radio link, {st['on_opportunity'] * 100:.2f} % at an "
        f"opportunity of the trace + 4 ms; {st['before']:.3f} Mbit/s before the step "
        f"(trace 12.03), {st['after']:.3f} after (6.02); written late p99 "
        f"{st['p99_us']:.0f} µs"
    )
    measured, model = idle_rtt(args.realtime)
    print(f"\nidle round trip (min of 20 pings): {measured:.3f} ms, model {model:.3f} ms")
    rate_ok = all(verdicts[0::2])
    late_ok = all(verdicts[1::2])
    ceiling_ok = statistics.median(c["tcp_mbps"] for c in cs) >= 1000
    print(
        f"\n## Targets: rate within 1 % in every run: {'met' if rate_ok else 'NOT met'}; "
        f"median p99 lateness ≤ 200 µs at every rate: {'met' if late_ok else 'NOT met'}; "
        f"ceiling ≥ 1 Gbit/s: {'met' if ceiling_ok else 'NOT met'}. Load average at end "
        f"{os.getloadavg()[0]:.1f}; {time.monotonic() - began:.0f} s."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
