#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time in all: scripts/fuzz.sh [SECONDS]
# (default 60, split evenly across the targets; the build is not counted). Prints each target's
# executions; exits 1 when a target crashed (its input is kept in fuzz/artifacts/TARGET/),
# 0 otherwise, and 0 with "fuzzing skipped: no nightly toolchain" where there is no nightly
# (libFuzzer's instrumentation needs it). Installs cargo-fuzz when it is missing.
#
# The committed corpus (fuzz/corpus/TARGET) is read, never written: what a run finds new goes
# to a scratch directory. FUZZ_TARGET_DIR (default ~/.cache/fabbench-fuzz-target) holds the
# build, outside the clone.
set -euo pipefail
cd "$(dirname "$0")/.."

total=${1:-60}
case $total in
  '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2 ;;
esac

if ! command -v rustup >/dev/null || ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "fuzzing skipped: no nightly toolchain"
  exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo +nightly install cargo-fuzz --locked
fi

target_dir=${FUZZ_TARGET_DIR:-$HOME/.cache/fabbench-fuzz-target}
# -a: debug assertions and overflow checks, so an overflow is a finding as in a test build.
fuzz=(cargo +nightly fuzz)
opts=(-a --target-dir "$target_dir")

mapfile -t targets < <("${fuzz[@]}" list)
per=$((total / ${#targets[@]}))
[ "$per" -ge 1 ] || per=1

echo "== building ${#targets[@]} fuzz targets"
"${fuzz[@]}" build "${opts[@]}"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
crashed=()
printf '%-20s %12s %8s\n' target executions seconds
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  # A decoder's input is small: 512 MB for one input is a finding (an allocation sized by
  # the input), as is 10 s on one input.
  flags=(-max_total_time="$per" -timeout=10 -malloc_limit_mb=512 -print_final_stats=1)
  # A model card's declarations leak their strings on purpose (read once per process), and
  # LeakSanitizer's check at exit would call that a crash.
  leaks=1
  [ "$t" = model_card ] && leaks=0
  if ASAN_OPTIONS="detect_leaks=$leaks" "${fuzz[@]}" run "${opts[@]}" "$t" "$scratch/$t" "fuzz/corpus/$t" -- "${flags[@]}" \
    >"$scratch/$t.log" 2>&1; then
    status=ok
  else
    status=CRASH
    crashed+=("$t")
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$t.log" | tail -n 1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$scratch/$t.log" | tail -n 1)
  printf '%-20s %12s %8s %s\n' "$t" "${execs:-?}" "${secs:-$per}" "$status"
  if [ "$status" = CRASH ]; then
    grep -E 'panicked|ERROR|SUMMARY|Test unit written|Reproduce with' "$scratch/$t.log" | head -n 20
  fi
done

if [ ${#crashed[@]} -gt 0 ]; then
  echo "fuzzing found crashes in: ${crashed[*]} (inputs in fuzz/artifacts/; reproduce with" \
    "cargo +nightly fuzz run -a TARGET fuzz/artifacts/TARGET/FILE)" >&2
  exit 1
fi
echo "fuzzing: no crash in ${#targets[@]} targets, ${per} s each"
