#!/usr/bin/env bash
# A CI performance job: run a chosen set of suites, compare the run with a stored baseline
# (fabbench compare: exit 1 on a regression), publish the Markdown summary, and on the main
# branch add the run to a history store and show its trends and change points.
#
#   scripts/ci-perf.sh --preset emulated --baseline .ci/perf/emulated            # the exact gate
#   scripts/ci-perf.sh --preset shm --baseline .ci/perf/shm --advisory           # report only
#   scripts/ci-perf.sh --suites "osu_latency osu_bw" --fabric shm --run-args "-m 1:64K" \
#       --baseline base/ --noise 5% --history perf-history --main
#   scripts/ci-perf.sh --preset emulated --baseline .ci/perf/emulated --update-baseline
#   FABBENCH=new/fabbench scripts/ci-perf.sh --preset shm --ab old/fabbench   # two builds, A/B
#
# Presets (what fabbench's own CI runs):
#   emulated  osu_latency osu_bw osu_bibw on hyperlink, rapidio and bxi, 1 B..1 MiB, 20
#             iterations: virtual time, so exact; the gate fails on any change (--fail-on change)
#             and the baseline is updated deliberately when a model changes.
#   shm       osu_latency osu_bw on shm, 1 B..4 KiB, 50 iterations, 30 runs: real time,
#             compared over the runs within a 5 % noise band (on a shared 2-core VM whole runs
#             land on faster or slower CPU placements; 30 runs a side out-vote that). Chosen
#             with scripts/gate-rates.sh: 0 false alarms and 20 of 20 detections of a slowdown
#             of 10 % of the 8 B latency, in two sessions of 20 pairs on the loaded VM, where
#             20 or 10 runs missed 3 and 4 (docs/perf-tracking.md).
#
# Options:
#   --preset NAME          emulated or shm (sets suites, fabric, run args, noise, fail-on)
#   --suites "A B"         suites to run (space separated)
#   --fabric LIST          fabrics, comma separated
#   --run-args "ARGS"      further `fabbench run` options (sizes, iterations)
#   --runs K               run the workload K times (default 1); compare treats the runs of
#                          each side as replicates, so one disturbed run cannot fail the job.
#                          With one run on a measured fabric compare cannot separate a change
#                          from run-to-run variation: it says "inconclusive" and exits 0 unless
#                          the change passes --bound or a floor learned from --history
#   --baseline DIR         a run directory, or a directory of runs (required unless --ab)
#   --ab BINARY            no stored baseline: run BINARY (the baseline build, e.g. the main
#                          branch's) and FABBENCH in turn, --runs times each (which goes
#                          first alternates round by round), and compare the two; on a real
#                          fabric this is the fair comparison, as the machine's drift between
#                          then and now hits both builds alike
#   --out DIR              where the run and the summaries go (default fabbench-results/ci-perf, an ignored folder)
#   --noise PCT            the noise band passed to compare (default 2%)
#   --bound PCT            with one run a side on a measured fabric, fail on a change beyond
#                          this (passed to compare)
#   --fail-on WHAT         regression (default) or change
#   --advisory             report, never fail (exit 0 whatever compare says)
#   --history DIR          a history store; the run is added to it with --main, and compare
#                          learns each point's noise floor from it (used with one run a side)
#   --main                 this is the main branch: add to --history (also when
#                          GITHUB_REF is refs/heads/main)
#   --update-baseline      replace the baseline with these runs (their manifest.json and
#                          samples.csv) instead of comparing; commit the result
#
# FABBENCH names the binary (default: fabbench on PATH). In GitHub Actions the Markdown summary
# is appended to $GITHUB_STEP_SUMMARY. Exit status: compare's (0 no regression, 1 regression,
# 2 bad input), 0 with --advisory, 2 on a bad option here.
set -euo pipefail

usage() { echo "ci-perf.sh: $*; see the comment at the top of scripts/ci-perf.sh" >&2; exit 2; }

FABBENCH=${FABBENCH:-fabbench}
suites="" fabric="" run_args="" baseline="" out=fabbench-results/ci-perf noise=2% fail_on=regression
advisory=0 history="" main=0 update=0 repeat=1 ab="" bound=""
[ "${GITHUB_REF:-}" = refs/heads/main ] && main=1

preset() {
  case $1 in
    emulated)
      suites="osu_latency osu_bw osu_bibw" fabric=hyperlink,rapidio,bxi
      run_args="-m 1:1M -i 20 -x 2" fail_on=change ;;
    shm)
      suites="osu_latency osu_bw" fabric=shm run_args="-m 1:4K -i 50 -x 10" noise=5% repeat=30 ;;
    *) usage "--preset $1: the presets are emulated and shm" ;;
  esac
}

while [ $# -gt 0 ]; do
  case $1 in
    --preset) [ $# -ge 2 ] || usage "--preset needs a value"; preset "$2"; shift 2 ;;
    --suites) suites=${2:?}; shift 2 ;;
    --fabric) fabric=${2:?}; shift 2 ;;
    --run-args) run_args=${2-}; shift 2 ;;
    --runs) repeat=${2:?}; shift 2 ;;
    --baseline) baseline=${2:?}; shift 2 ;;
    --ab) ab=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --noise) noise=${2:?}; shift 2 ;;
    --bound) bound=${2:?}; shift 2 ;;
    --fail-on) fail_on=${2:?}; shift 2 ;;
    --advisory) advisory=1; shift ;;
    --history) history=${2:?}; shift 2 ;;
    --main) main=1; shift ;;
    --update-baseline) update=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown option $1" ;;
  esac
done
[ -n "$suites" ] || usage "no suites: give --suites or --preset"
[ -n "$fabric" ] || usage "no fabric: give --fabric or --preset"
[ -n "$baseline" ] || [ -n "$ab" ] || usage "no baseline: give --baseline DIR or --ab BINARY"
[ -z "$ab" ] || [ "$update" = 0 ] || usage "--update-baseline stores runs; --ab keeps none"
[ -z "$ab" ] || command -v "$ab" >/dev/null || usage "--ab $ab: no such program"
command -v "$FABBENCH" >/dev/null || usage "no fabbench binary at '$FABBENCH' (set FABBENCH)"
case $repeat in ''|*[!0-9]*|0) usage "--runs $repeat: give a whole number of runs, 1 or more" ;; esac

# One fresh directory per job, so its runs are the only ones in it.
runs="$out/runs"
rm -rf "$runs" && mkdir -p "$runs"
if [ -n "$ab" ]; then
  baseline="$out/baseline-runs"
  rm -rf "$baseline" && mkdir -p "$baseline"
fi
for i in $(seq "$repeat"); do
  echo "== fabbench run $suites --fabric $fabric $run_args ($i of $repeat)"
  # With --ab the two builds take turns, and which goes first alternates round by round
  # (ABBA...): whatever favours the first or second of a pair (caches, the clock's state
  # after the other's exit) falls on both sides alike.
  if [ -n "$ab" ] && [ $((i % 2)) = 1 ]; then
    # shellcheck disable=SC2086 # the suites and run options are word lists on purpose
    "$ab" run $suites --fabric "$fabric" $run_args --out "$baseline" >>"$out/run.txt"
  fi
  # shellcheck disable=SC2086
  "$FABBENCH" run $suites --fabric "$fabric" $run_args --out "$runs" >>"$out/run.txt"
  if [ -n "$ab" ] && [ $((i % 2)) = 0 ]; then
    # shellcheck disable=SC2086
    "$ab" run $suites --fabric "$fabric" $run_args --out "$baseline" >>"$out/run.txt"
  fi
done
made=$(find "$runs" -mindepth 1 -maxdepth 1 -type d ! -name '.*' | sort)
[ -n "$made" ] || { echo "ci-perf.sh: the runs left no directory in $runs" >&2; exit 1; }
echo "runs: $(echo "$made" | tr '\n' ' ')"

if [ "$update" = 1 ]; then
  # Only the canonical files: every other file is derived from them on reading.
  rm -rf "$baseline"
  for run in $made; do
    mkdir -p "$baseline/$(basename "$run")"
    cp "$run/manifest.json" "$run/samples.csv" "$baseline/$(basename "$run")/"
  done
  echo "baseline updated: $baseline (commit it, and say why it changed)"
  exit 0
fi

echo "== fabbench compare (noise band $noise, fail on $fail_on)"
status=0
limits=()
[ -z "$bound" ] || limits+=(--bound "$bound")
[ -z "$history" ] || [ ! -f "$history/store.json" ] || limits+=(--history "$history")
"$FABBENCH" compare "$baseline" "$runs" --noise "$noise" --fail-on "$fail_on" "${limits[@]}" \
  --export-markdown "$out/summary.md" --export-json "$out/compare.json" || status=$?
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/summary.md" ]; then
  cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi

if [ -n "$history" ] && [ "$main" = 1 ] && [ "$status" != 2 ]; then
  echo "== fabbench history add (main branch)"
  rev=${GITHUB_SHA:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
  "$FABBENCH" history add "$runs" --store "$history" --revision "$rev"
  "$FABBENCH" history show --store "$history" --format markdown >"$out/history.md"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$out/history.md" >>"$GITHUB_STEP_SUMMARY"
  fi
fi

if [ "$advisory" = 1 ] && [ "$status" != 0 ]; then
  echo "ci-perf.sh: advisory only: compare exited $status; not failing the job"
  exit 0
fi
exit "$status"
