#!/usr/bin/env bash
# How good is a CI performance gate on this machine? Measures, over PAIRS pairs, how often
# `fabbench compare` flags a regression when nothing changed (false alarms) and when a slowdown
# of known size was injected (detections). Each pair runs the workload RUNS times as a
# baseline, RUNS times again unchanged, and RUNS times with --set inject_delay_ns=DELAY,
# interleaved (baseline, unchanged, slowed, baseline, ...) so drift of the machine hits all
# three alike, as `scripts/ci-perf.sh --ab` runs two builds; then compares baseline against
# each. ORDER=blocks runs each set whole, one after the other, as a CI job against a baseline
# measured earlier does: the machine's drift between the blocks then counts against the gate.
#
#   scripts/gate-rates.sh                # 20 pairs of the shm preset's gate (ci-perf.sh --preset shm)
#   PAIRS=20 RUNS=10 NOISE=5% DELAY=15 SUITES="osu_latency" RUN_ARGS="-m 1:64" scripts/gate-rates.sh
#   REUSE=/tmp/tmp.XXXX NOISE=3% scripts/gate-rates.sh     # decide runs kept from before anew
#
# The defaults are the shm preset's: osu_latency osu_bw, 1 B..4 KiB, its RUNS and NOISE.
# DELAY=auto (the default) sizes the slowdown to 10 % of the 8 B latency: the median of three
# short osu_latency runs at 8 B, measured first and printed (DELAY_PERCENT changes the 10).
# REUSE=DIR decides the runs a former call left in DIR again (other NOISE or CONFIDENCE)
# without running anything; with a RUNS below the number kept, on the first RUNS runs of each
# set (linked into DIR/PAIR/kRUNS/), so one long session answers for several K.
#
# Prints one line per pair (verdicts, the median and largest ratio compare measured, seconds),
# then the two rates, K (runs a side) and the seconds one gate takes (K runs of the workload and
# the comparison, as a CI job against a stored baseline; with --ab twice the runs). Done when:
# false alarms <= 1 and detections >= 19 of 20.
set -euo pipefail

FABBENCH=${FABBENCH:-fabbench}
PAIRS=${PAIRS:-20} RUNS=${RUNS:-30} NOISE=${NOISE:-5%} DELAY=${DELAY:-auto}
CONFIDENCE=${CONFIDENCE:-0.95} DELAY_PERCENT=${DELAY_PERCENT:-10}
FABRIC=${FABRIC:-shm} SUITES=${SUITES:-osu_latency osu_bw} RUN_ARGS=${RUN_ARGS:--m 1:4K -i 50 -x 10}
ORDER=${ORDER:-interleaved} REUSE=${REUSE:-}
case $ORDER in interleaved|blocks) ;; *) echo "gate-rates.sh: ORDER=$ORDER: interleaved or blocks" >&2; exit 2 ;; esac
command -v "$FABBENCH" >/dev/null || { echo "gate-rates.sh: no fabbench at '$FABBENCH' (set FABBENCH)" >&2; exit 2; }
if [ -n "$REUSE" ]; then
  [ -d "$REUSE/1/base" ] || { echo "gate-rates.sh: REUSE=$REUSE holds no runs of a former call" >&2; exit 2; }
  OUT=$REUSE
else
  OUT=${OUT:-$(mktemp -d)}
fi
mkdir -p "$OUT"

runs() { # DIR [--set ...]: one run of the workload into DIR
  local dir=$1; shift
  # shellcheck disable=SC2086 # word lists on purpose
  "$FABBENCH" run $SUITES --fabric "$FABRIC" $RUN_ARGS "$@" --out "$dir" >/dev/null 2>>"$OUT/runs.log"
}

verdict() { # BASE CAND: "regressed" or "clean"; the median and the largest slowdown ratio
  # over the points (candidate over baseline for a latency, baseline over candidate for a
  # rate: above 1 is slower); how many rows regressed of how many; "lat" when a latency row did
  local status=0
  "$FABBENCH" compare "$1" "$2" --noise "$NOISE" --confidence "$CONFIDENCE" --format json >"$2.json" || status=$?
  [ "$status" = 2 ] && { echo "gate-rates.sh: compare failed on $1 $2" >&2; exit 2; }
  python3 -c '
import json, statistics, sys
v = json.load(open(sys.argv[1]))["verdicts"]
r = [x["ratio"] if x["better"] == "lower" else 1 / x["ratio"] for x in v if x.get("ratio")] or [float("nan")]
bad = [x for x in v if x["verdict"] == "regressed"]
lat = "lat" if any(x["metric"] == "latency" for x in bad) else "-"
word = "regressed" if sys.argv[2] == "1" else "clean"
print("%s %.3f %.3f %d/%d %s" % (word, statistics.median(r), max(r), len(bad), len(v), lat))' "$2.json" "$status"
}

# The slowdown: a share of the 8 B latency, as this machine measures it now.
if [ -n "$REUSE" ]; then
  DELAY=$(cat "$OUT/delay")
elif [ "$DELAY" = auto ]; then
  for _ in 1 2 3; do
    "$FABBENCH" run osu_latency --fabric "$FABRIC" -m 8:8 -i 2000 -x 200 --out "$OUT/calibrate" >/dev/null 2>>"$OUT/runs.log"
  done
  DELAY=$(python3 -c '
import csv, glob, statistics, sys
p50 = [float(r["p50"]) for f in glob.glob(sys.argv[1] + "/*/summary.csv")
       for r in csv.DictReader(open(f)) if r["metric"] == "latency"]
lat_ns = statistics.median(p50) * 1000
print("%d" % max(1, round(lat_ns * float(sys.argv[2]) / 100)))
print("# 8 B latency (median p50 of %d runs): %.1f ns" % (len(p50), lat_ns), file=sys.stderr)' \
    "$OUT/calibrate" "$DELAY_PERCENT")
fi
echo "$DELAY" >"$OUT/delay"

false_alarms=0 detections=0 on_latency=0 gate_seconds=""
echo "# $PAIRS pairs of $RUNS runs a side ($ORDER): $SUITES $RUN_ARGS on $FABRIC, noise band $NOISE, confidence $CONFIDENCE, injected delay ${DELAY} ns per send"
echo "# $(uptime)"
echo "# pair  unchanged: verdict, median and largest slowdown ratio, rows regressed, a latency row among them   slowed: the same   seconds (pair, one gate)"
for pair in $(seq "$PAIRS"); do
  start=$(date +%s.%N)
  base="$OUT/$pair/base" same="$OUT/$pair/same" slow="$OUT/$pair/slow"
  if [ -n "$REUSE" ] && [ "$(find "$base" -mindepth 1 -maxdepth 1 -type d | wc -l)" -gt "$RUNS" ]; then
    for set in base same slow; do
      rm -rf "$OUT/$pair/k$RUNS/$set" && mkdir -p "$OUT/$pair/k$RUNS/$set"
      find "$OUT/$pair/$set" -mindepth 1 -maxdepth 1 -type d | sort | head -n "$RUNS" |
        while read -r run; do ln -s "$(cd "$run" && pwd)" "$OUT/$pair/k$RUNS/$set/"; done
    done
    base="$OUT/$pair/k$RUNS/base" same="$OUT/$pair/k$RUNS/same" slow="$OUT/$pair/k$RUNS/slow"
  fi
  if [ -z "$REUSE" ]; then
    if [ "$ORDER" = blocks ]; then
      for _ in $(seq "$RUNS"); do runs "$base"; done
      for _ in $(seq "$RUNS"); do runs "$same"; done
      for _ in $(seq "$RUNS"); do runs "$slow" --set "inject_delay_ns=$DELAY"; done
    else
      for _ in $(seq "$RUNS"); do
        runs "$base"; runs "$same"; runs "$slow" --set "inject_delay_ns=$DELAY"
      done
    fi
  fi
  ran=$(date +%s.%N)
  a=$(verdict "$base" "$same")
  decided=$(date +%s.%N)
  b=$(verdict "$base" "$slow")
  [ "${a%% *}" = regressed ] && false_alarms=$((false_alarms + 1))
  [ "${b%% *}" = regressed ] && detections=$((detections + 1))
  [ "${b##* }" = lat ] && on_latency=$((on_latency + 1))
  end=$(date +%s.%N)
  # One gate: a third of the pair's runs (one side) and one comparison.
  gate=$(echo "($ran - $start) / 3 + ($decided - $ran)" | bc -l)
  gate_seconds="$gate_seconds $gate"
  printf '%-5s %-32s %-32s %6.1f %5.1f\n' "$pair" "$a" "$b" "$(echo "$end - $start" | bc)" "$gate"
done
per_gate=$(echo "$gate_seconds" | python3 -c 'import statistics, sys; print("%.1f" % statistics.median(map(float, sys.stdin.read().split())))')
[ -n "$REUSE" ] && per_gate="$per_gate (runs reused: the comparison alone)"
echo "false alarms: $false_alarms of $PAIRS; detections: $detections of $PAIRS ($on_latency with a latency row regressed); K = $RUNS runs a side; ${per_gate} s per gate (median; results in $OUT)"
