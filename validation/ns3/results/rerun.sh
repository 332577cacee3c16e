#!/usr/bin/env bash
# Re-creates every JSONL in this directory (about 10 minutes, sequential).
set -e
cd "$(dirname "$0")/.."
R=./run_matrix.py
$R --cc TcpNewReno --loss 0 0.0025 0.01 0.05 --runs 1-6 --tag ts-on  --out results/newreno_ts_on.jsonl
$R --cc TcpNewReno --loss 0 0.0025 0.01 0.05 --runs 1-6 --tag ts-off --out results/newreno_ts_off.jsonl -- --timestamps=false
$R --cc TcpIllinois TcpHybla TcpScalable --loss 0.05 --runs 1-6 --tag ts-on  --out results/others_ts_on.jsonl
$R --cc TcpIllinois TcpHybla TcpScalable --loss 0.05 --runs 1-6 --tag ts-off --out results/others_ts_off.jsonl -- --timestamps=false
$R --cc TcpNewReno TcpIllinois TcpHybla TcpScalable --loss 0.05 --runs 1-6 --tag cls-nosack --out results/classic_nosack.jsonl -- --recovery=classic --sack=false
$R --cc TcpNewReno TcpIllinois TcpHybla TcpScalable --loss 0.05 --burst-rate --runs 1-6 --tag p=5% --out results/burstrate5.jsonl
$R --cc TcpNewReno TcpIllinois --loss 0.05 --runs 1-6 --tag lossboth --out results/lossboth.jsonl -- --lossOn=both
$R --cc TcpNewReno --loss 0 0.05 --runs 1-6 --tag fqcodel --out results/qdisc_default.jsonl -- --qdisc=default
