#!/usr/bin/env bash
# fabbench's ofi fabric beside libfabric's own test programs on the same provider, in one
# session: for each provider, size and tool, REPS rounds, each round running fabbench (engine
# and provider matching) and the vendor tools once, one after the other, so load drifting
# over the session reaches every column alike; the table holds each column's median.
#
#   scripts/ofi-vs-vendor.sh [--reps 5] [--providers 'shm tcp;ofi_rxm'] [--out DIR]
#
# Latency (one-way us) at 8 B and 64 KiB: osu_latency against fi_pingpong and fabtests'
# fi_rdm_tagged_pingpong; bandwidth (MB/s) at 1 MiB: osu_bw against fi_rdm_tagged_bw (window
# 64, as osu_bw's). The vendor runs go through scripts/ofi-vendor-tools.sh (fabtests under
# $FABTESTS_BIN, fi_pingpong from libfabric-bin). Every run's number goes to DIR/raw.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
FABBENCH="${FABBENCH:-${CARGO_TARGET_DIR:-target}/release/fabbench}"
reps=5
providers="shm tcp;ofi_rxm"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --providers) providers="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "ofi-vs-vendor: unknown option $1; valid: --reps N, --providers 'P ...', --out DIR" >&2; exit 2 ;;
  esac
done
[ -x "$FABBENCH" ] || { echo "ofi-vs-vendor: no fabbench at $FABBENCH (set FABBENCH)" >&2; exit 2; }
out="${out:-$(mktemp -d)}"
mkdir -p "$out"
raw="$out/raw.csv"
echo "provider,size,tool,round,value" >"$raw"

# One fabbench point: osu_latency's average (us) or osu_bw's MB/s at SIZE.
fab() { # provider suite size matching iters
  "$FABBENCH" run "$2" --fabric ofi --set "ofi.provider=$1" --set "ofi.matching=$4" \
    -m "$3:$3" -i "$5" --out "$out/runs" 2>>"$out/fabbench-stderr.log" | awk -v s="$3" '$1 == s { print $2 }'
}
vendor() { # provider tool size iters
  scripts/ofi-vendor-tools.sh --provider "$1" --tool "$2" --size "$3" --iters "$4"
}

for r in $(seq 1 "$reps"); do
  for p in $providers; do
    for size in 8 65536; do
      iters=$([ "$size" = 8 ] && echo 200000 || echo 20000)
      echo "$p,$size,osu_latency engine,$r,$(fab "$p" osu_latency $size engine $iters)" >>"$raw"
      echo "$p,$size,osu_latency provider,$r,$(fab "$p" osu_latency $size provider $iters)" >>"$raw"
      echo "$p,$size,fi_pingpong,$r,$(vendor "$p" fi_pingpong $size $iters)" >>"$raw"
      echo "$p,$size,fi_rdm_tagged_pingpong,$r,$(vendor "$p" fi_rdm_tagged_pingpong $size $iters)" >>"$raw"
    done
    echo "$p,1048576,osu_bw engine,$r,$(fab "$p" osu_bw 1048576 engine 200)" >>"$raw"
    echo "$p,1048576,osu_bw provider,$r,$(fab "$p" osu_bw 1048576 provider 200)" >>"$raw"
    echo "$p,1048576,fi_rdm_tagged_bw,$r,$(vendor "$p" fi_rdm_tagged_bw 1048576 200)" >>"$raw"
  done
  echo "round $r of $reps done" >&2
done

python3 - "$raw" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cells = {}
for r in rows:
    if r["value"]:
        cells.setdefault((r["provider"], int(r["size"]), r["tool"]), []).append(float(r["value"]))
print("| provider | size | tool | median | min | max | runs |")
print("|---|---|---|---|---|---|---|")
for (p, s, t), v in sorted(cells.items(), key=lambda kv: (kv[0][0], kv[0][1])):
    unit = "MB/s" if s == 1048576 else "us"
    print(f"| {p} | {s} | {t} | {statistics.median(v):.2f} {unit} | {min(v):.2f} | {max(v):.2f} | {len(v)} |")
PY
echo "raw numbers: $raw" >&2
