#!/usr/bin/env bash
# Soak: eight ranks on this host's cores, oversubscribed, for DURATION seconds (default 600):
# two osu_bibw pairs with validation (-c) and NPB IS (all-to-all heavy, self-verifying) on
# four ranks, each a loop of complete runs on shm until the time is up. Every run must end
# with status 0 and every row validated or verified. Every 10 s the script samples the
# fabbench processes (count, resident memory, open descriptors), fabbench's segments in
# /dev/shm and the host's available memory into soak.csv; at the end it prints the first and
# last samples and the largest, and fails if anything is left behind or any run failed.
#
#   scripts/soak.sh [DURATION_SECONDS] [OUT_DIR]
#   FABBENCH=path/to/fabbench scripts/soak.sh 600 /tmp/soak
set -euo pipefail
duration=${1:-600}
out=${2:-$(mktemp -d /tmp/fabbench-soak.XXXXXX)}
fabbench=${FABBENCH:-fabbench}
mkdir -p "$out"
deadline=$(($(date +%s) + duration))
csv="$out/soak.csv"
echo "t_s,processes,rss_kib,fds,shm_segments,mem_available_kib" >"$csv"

sample() {
  local pids rss=0 fds=0 n=0
  pids=$(pgrep -f "$(basename "$fabbench")" || true)
  for p in $pids; do
    [ "$p" = "$$" ] && continue
    local r
    r=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
    [ -n "$r" ] || continue
    rss=$((rss + r))
    # A process may end between the listing and the count: its descriptors count as none.
    local f
    f=$(ls "/proc/$p/fd" 2>/dev/null | wc -l) || f=0
    fds=$((fds + f))
    n=$((n + 1))
  done
  local shm avail
  shm=$(ls /dev/shm 2>/dev/null | grep -c '^fabbench-' || true)
  avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
  echo "$(($(date +%s) - start)),$n,$rss,$fds,$shm,$avail" >>"$csv"
}

# One job: complete runs until the deadline; each run's output must show it checked its data.
loop() {
  local name=$1 check=$2
  shift 2
  local i=0
  while [ "$(date +%s)" -lt "$deadline" ]; do
    i=$((i + 1))
    if ! "$fabbench" run "$@" --out "$out/$name" >"$out/$name.$i.txt" 2>&1; then
      echo "FAIL $name run $i: $(tail -n 1 "$out/$name.$i.txt")" >>"$out/failures"
      continue
    fi
    if ! grep -q -- "$check" "$out/$name.$i.txt" || grep -qE "Fail|UNSUCCESSFUL" "$out/$name.$i.txt"; then
      echo "FAIL $name run $i: no $check in its output" >>"$out/failures"
    fi
    rm -f "$out/$name.$i.txt"
  done
  echo "$i" >"$out/$name.runs"
}

shm_before=$(ls /dev/shm 2>/dev/null | grep -c '^fabbench-' || true)
start=$(date +%s)
sample
loop bibw-a Pass osu_bibw -c -m 1:1M -i 200 &
loop bibw-b Pass osu_bibw -c -m 1:1M -i 200 &
loop npb-is SUCCESSFUL npb --kernel is --class W -n 4 --repeat 20 &
while [ "$(date +%s)" -lt "$deadline" ]; do
  sleep 10
  sample
done
wait
sample

echo "samples (every 10 s) in $csv"
echo "first: $(sed -n 2p "$csv")"
echo "last:  $(tail -n 1 "$csv")"
echo "while running, largest: $(awk -F, 'NR > 2 && $2 > 0 { if ($3 > r) r = $3; if ($4 > f) f = $4; if ($5 > s) s = $5 } END { print "rss_kib " r ", fds " f ", shm_segments " s }' "$csv")"
echo "runs: bibw-a $(cat "$out/bibw-a.runs"), bibw-b $(cat "$out/bibw-b.runs"), npb-is $(cat "$out/npb-is.runs")"
status=0
if [ -s "$out/failures" ]; then
  echo "failures:"
  cat "$out/failures"
  status=1
fi
left=$(($(ls /dev/shm 2>/dev/null | grep -c '^fabbench-' || true) - shm_before))
if [ "$left" -ne 0 ]; then
  echo "$left shared-memory segments left behind"
  status=1
fi
if pgrep -f "$(basename "$fabbench") __rank" >/dev/null; then
  echo "rank processes left running"
  status=1
fi
partials=$(find "$out" -name '*.partial' | wc -l)
if [ "$partials" -ne 0 ]; then
  echo "$partials runs kept partial"
  status=1
fi
[ $status -eq 0 ] && echo "soak passed"
exit $status
