#!/usr/bin/env bash
# How good is a CI performance gate on this machine? Measures, over PAIRS pairs, how often
# `fabbench compare` flags a regression when nothing changed (false alarms) and when a slowdown
# of known size was injected (detections). Each pair runs the workload RUNS times as a
# baseline, RUNS times again unchanged, and RUNS times with --set inject_delay_ns=DELAY,
# interleaved (baseline, unchanged, slowed, baseline, ...) so drift of the machine hits all
# three alike; then compares baseline against each. ORDER=blocks runs each set whole, one after
# the other, as a CI job against a baseline measured earlier does: the machine's drift between
# the blocks then counts against the gate.
#
#   scripts/gate-rates.sh                                  # 20 pairs, shm small-message latency
#   PAIRS=20 RUNS=5 NOISE=5% DELAY=15 SUITES="osu_latency" RUN_ARGS="-m 1:64" scripts/gate-rates.sh
#
# Prints one line per pair (verdicts, the measured slowdown, seconds taken) and the two rates.
# The slowdown a delay causes depends on the workload: each pair reports the median ratio
# compare measured, so the size of what was detected is on record.
set -euo pipefail

FABBENCH=${FABBENCH:-fabbench}
PAIRS=${PAIRS:-20} RUNS=${RUNS:-5} NOISE=${NOISE:-5%} DELAY=${DELAY:-15}
FABRIC=${FABRIC:-shm} SUITES=${SUITES:-osu_latency} RUN_ARGS=${RUN_ARGS:--m 1:64}
ORDER=${ORDER:-interleaved}
case $ORDER in interleaved|blocks) ;; *) echo "gate-rates.sh: ORDER=$ORDER: interleaved or blocks" >&2; exit 2 ;; esac
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
command -v "$FABBENCH" >/dev/null || { echo "gate-rates.sh: no fabbench at '$FABBENCH' (set FABBENCH)" >&2; exit 2; }

runs() { # DIR [--set ...]: RUNS runs of the workload into DIR
  local dir=$1; shift
  # shellcheck disable=SC2086 # word lists on purpose
  "$FABBENCH" run $SUITES --fabric "$FABRIC" $RUN_ARGS "$@" --out "$dir" >/dev/null 2>>"$OUT/runs.log"
}

verdict() { # BASE CAND: "regressed" or "clean", then the median and the largest ratio over
  # the points (candidate over baseline; above 1 is slower for a latency)
  local status=0
  "$FABBENCH" compare "$1" "$2" --noise "$NOISE" --format json >"$2.json" || status=$?
  [ "$status" = 2 ] && { echo "gate-rates.sh: compare failed on $1 $2" >&2; exit 2; }
  python3 -c '
import json, statistics, sys
v = json.load(open(sys.argv[1]))["verdicts"]
r = [x["ratio"] for x in v if x.get("ratio") is not None] or [float("nan")]
word = "regressed" if sys.argv[2] == "1" else "clean"
print("%s %.3f %.3f" % (word, statistics.median(r), max(r)))' "$2.json" "$status"
}

false_alarms=0 detections=0
echo "# $PAIRS pairs of $RUNS runs ($ORDER): $SUITES $RUN_ARGS on $FABRIC, noise band $NOISE, injected delay ${DELAY} ns per send"
echo "# pair  unchanged: verdict, median and largest ratio   slowed: the same   seconds"
for pair in $(seq "$PAIRS"); do
  start=$(date +%s.%N)
  base="$OUT/$pair/base" same="$OUT/$pair/same" slow="$OUT/$pair/slow"
  if [ "$ORDER" = blocks ]; then
    for _ in $(seq "$RUNS"); do runs "$base"; done
    for _ in $(seq "$RUNS"); do runs "$same"; done
    for _ in $(seq "$RUNS"); do runs "$slow" --set "inject_delay_ns=$DELAY"; done
  else
    for _ in $(seq "$RUNS"); do
      runs "$base"; runs "$same"; runs "$slow" --set "inject_delay_ns=$DELAY"
    done
  fi
  a=$(verdict "$base" "$same") b=$(verdict "$base" "$slow")
  [ "${a%% *}" = regressed ] && false_alarms=$((false_alarms + 1))
  [ "${b%% *}" = regressed ] && detections=$((detections + 1))
  end=$(date +%s.%N)
  printf '%-5s %-44s %-28s %.1f\n' "$pair" "$a" "$b" "$(echo "$end - $start" | bc)"
done
echo "false alarms: $false_alarms of $PAIRS; detections: $detections of $PAIRS (results in $OUT)"
