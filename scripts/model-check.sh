#!/usr/bin/env bash
# Checks a fitted model against the fabric it was fitted from: characterises FABRIC, then runs
# osu_latency and osu_bw on the fabric ROUNDS times and once on the fitted card (the loggp
# fabric is exact, so once is enough), and prints per size the median of the fabric's rounds,
# the model's value and their difference.
#
#   scripts/model-check.sh FABRIC [ROUNDS] [extra characterise options...]
#   FABBENCH=path/to/fabbench OUT=dir scripts/model-check.sh shm 5
set -euo pipefail
fabric=${1:?usage: model-check.sh FABRIC [ROUNDS] [characterise options]}
rounds=${2:-5}
shift $(( $# >= 2 ? 2 : 1 ))
bin=${FABBENCH:-fabbench}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
"$bin" characterise --fabric "$fabric" -o "$out/characterise" "$@" >&2
card=$(ls -d "$out"/characterise/*-characterise-"$fabric" | tail -1)/card.toml
table() { grep -E '^[0-9]' | awk '{print $1, $2}'; }
for r in $(seq 1 "$rounds"); do
  "$bin" run osu_latency osu_bw --fabric "$fabric" --out "$out/fabric" | table > "$out/fabric-$r.txt"
done
"$bin" run osu_latency osu_bw --fabric loggp --model "$card" --out "$out/model" | table > "$out/model.txt"
python3 - "$out" "$rounds" <<'PY'
import sys, statistics
out, rounds = sys.argv[1], int(sys.argv[2])
fabric = [[l.split() for l in open(f"{out}/fabric-{r}.txt")] for r in range(1, rounds + 1)]
model = [l.split() for l in open(f"{out}/model.txt")]
n_lat = next(i for i in range(1, len(model)) if int(model[i][0]) < int(model[i - 1][0]))
print(f"# {'test':<12}{'size':>9}{'fabric (median of %d)' % rounds:>24}{'model':>12}{'diff':>9}")
worst = 0.0
for i, (size, value) in enumerate(model):
    test = "osu_latency" if i < n_lat else "osu_bw"
    med = statistics.median(float(f[i][1]) for f in fabric)
    diff = (float(value) - med) / med * 100 if med else 0.0
    if int(size) >= 64:
        worst = max(worst, abs(diff))
    print(f"  {test:<12}{size:>9}{med:>24.2f}{float(value):>12.2f}{diff:>+8.1f}%")
print(f"# worst |diff| from 64 B up: {worst:.1f} %")
PY
