#!/usr/bin/env python3
"""Run the ns-3 V2G reference program over a (cc x loss x run) matrix, sequentially.

Each run is wrapped in /usr/bin/time -v; the flow JSON line gets
"time_v_wall_s" and "time_v_max_rss_kb" added and is appended to --out (JSONL).

Example:
  validation/ns3/run_matrix.py --cc TcpNewReno --loss 0 0.0025 0.01 0.05 \
      --runs 1-6 --out validation/ns3/results/newreno.jsonl -- --timestamps=false
Everything after "--" is passed to v2g unchanged. --summary prints a table.
The program takes the burst-start probability p (--burstRate); a mean loss L is
resolved to p by vtlab's core (so vtlab must be importable: PYTHONPATH=python),
unless --burst-rate says the --loss values are p already.
"""
import argparse, json, os, re, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_runs(s):
    out = []
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def burst_rate(mean_loss):
    """The burst-start probability of a mean loss, as vtlab resolves it (bursts 1..4)."""
    from vtlab import _core

    return _core.burst_start_for_mean_loss(mean_loss)


def run_one(binary, cc, p, run, extra):
    cmd = ["/usr/bin/time", "-v", binary, f"--cc={cc}", f"--burstRate={p!r}", f"--run={run}"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {p.stderr[-2000:]}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    el = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", p.stderr)
    secs = 0.0
    if el:
        for x in el.group(1).split(":"):
            secs = secs * 60 + float(x)
    rows = []
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            if d.get("type") == "flow":
                d["time_v_wall_s"] = secs
                d["time_v_max_rss_kb"] = int(rss.group(1)) if rss else None
                d["args"] = " ".join(cmd[3:])
                rows.append(d)
    return rows


def summary(rows):
    groups = {}
    for d in rows:
        groups.setdefault((d["cc"], d.get("tag", ""), round(d["mean_loss"], 6)), []).append(d)
    hdr = f"{'cc':12s} {'tag':10s} {'L':>7s} {'runs':>4s} {'goodput Mb/s per run':48s} {'mean':>6s} {'rto':>6s} {'fr':>6s} {'retx':>7s} {'lnkdrop':>7s} {'qdrop':>6s} {'wall':>5s} {'rssMB':>5s}"
    print(hdr)
    for (cc, tag, L), ds in sorted(groups.items()):
        ds.sort(key=lambda d: d["run"])
        g = [d["goodput_bps"] / 1e6 for d in ds]
        m = lambda k: statistics.mean(d[k] for d in ds)
        print(f"{cc:12s} {tag:10s} {L*100:6.3f}% {len(ds):4d} {' '.join(f'{x:.3f}' for x in g):48s} {statistics.mean(g):6.3f} "
              f"{m('rto_count'):6.1f} {m('fast_recoveries'):6.1f} {m('retransmissions'):7.1f} {m('drops_link_error'):7.1f} "
              f"{m('drops_queue'):6.1f} {m('time_v_wall_s'):5.2f} {max(d['time_v_max_rss_kb'] for d in ds)/1024:5.1f}")


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(HERE, "build", "v2g"))
    ap.add_argument("--cc", nargs="+", default=["TcpNewReno"])
    ap.add_argument("--loss", nargs="+", type=float, default=[0.0, 0.0025, 0.01, 0.05])
    ap.add_argument("--burst-rate", action="store_true", help="--loss values are burst rates p, not mean loss L")
    ap.add_argument("--runs", default="1-6")
    ap.add_argument("--tag", default="", help="label stored in each row")
    ap.add_argument("--out", help="JSONL output (appended)")
    ap.add_argument("--summary", nargs="*", help="print a summary table of these JSONL files and exit")
    a = ap.parse_args(argv)
    if a.summary is not None:
        rows = []
        for f in a.summary:
            rows += [json.loads(l) for l in open(f) if l.strip()]
        summary(rows)
        return
    rows = []
    out = open(a.out, "a") if a.out else None
    for cc in a.cc:
        for loss in a.loss:
            for r in parse_runs(a.runs):
                p = loss if a.burst_rate else burst_rate(loss)
                for d in run_one(a.bin, cc, p, r, extra):
                    d["tag"] = a.tag
                    rows.append(d)
                    if out:
                        out.write(json.dumps(d) + "\n")
                        out.flush()
                    print(f"{cc} L={d['mean_loss']:.4f} run={r} goodput={d['goodput_bps']/1e6:.3f} Mb/s "
                          f"rto={d['rto_count']} fr={d['fast_recoveries']} wall={d['time_v_wall_s']:.2f}s", file=sys.stderr)
    summary(rows)


if __name__ == "__main__":
    main()
