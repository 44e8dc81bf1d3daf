#!/usr/bin/env bash
# The closed loop of a characterisation: characterises FABRIC, then runs osu_latency and
# osu_bw on the fabric ROUNDS times and once on the fitted card (the loggp fabric is exact, so
# once is enough), and prints per size the median of the fabric's rounds, the model's
# prediction and its error, then how many sizes the model holds within 15 %, and how many
# each of the fabric's own runs holds of the others' median (the ceiling: where the fabric
# disagrees with itself, no model agrees with it). The issue's bar is 90 % of the sizes on a
# quiet machine; the load average is printed before and after, since
# a busy host moves the fabric between its rounds and the characterisation.
#
#   scripts/model-check.sh FABRIC [ROUNDS] [extra characterise options...]
#   FABBENCH=path/to/fabbench OUT=dir scripts/model-check.sh shm 5
#   CARD=dir/card.toml scripts/model-check.sh shm 5     # check a card already fitted
set -euo pipefail
fabric=${1:?usage: model-check.sh FABRIC [ROUNDS] [characterise options]}
rounds=${2:-5}
shift $(( $# >= 2 ? 2 : 1 ))
bin=${FABBENCH:-fabbench}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
card=${CARD:-}
if [ -z "$card" ]; then
  "$bin" characterise --fabric "$fabric" -o "$out/characterise" "$@"
  card=$(ls -d "$out"/characterise/*-characterise-"$fabric" | tail -1)/card.toml
fi
table() { grep -E '^[0-9]' | awk '{print $1, $2}'; }
for r in $(seq 1 "$rounds"); do
  "$bin" run osu_latency osu_bw --fabric "$fabric" --out "$out/fabric" | table > "$out/fabric-$r.txt"
done
"$bin" run osu_latency osu_bw --fabric loggp --model "$card" --out "$out/model" | table > "$out/model.txt"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# card: $card"
python3 - "$out" "$rounds" <<'PY'
import sys, statistics
out, rounds = sys.argv[1], int(sys.argv[2])
fabric = [[l.split() for l in open(f"{out}/fabric-{r}.txt")] for r in range(1, rounds + 1)]
model = [l.split() for l in open(f"{out}/model.txt")]
n_lat = next(i for i in range(1, len(model)) if int(model[i][0]) < int(model[i - 1][0]))
unit = {"osu_latency": "us", "osu_bw": "MB/s"}
print(f"# {'test':<12}{'size (B)':>9}{'measured (median of %d)' % rounds:>26}{'predicted':>12}{'error':>9}")
within, total = {}, {}
for i, (size, value) in enumerate(model):
    test = "osu_latency" if i < n_lat else "osu_bw"
    med = statistics.median(float(f[i][1]) for f in fabric)
    err = (float(value) - med) / med * 100 if med else 0.0
    total[test] = total.get(test, 0) + 1
    within[test] = within.get(test, 0) + (abs(err) <= 15.0)
    print(f"  {test:<12}{size:>9}{med:>20.2f} {unit[test]:<5}{float(value):>12.2f}{err:>+8.1f}%")
for t in total:
    print(f"# {t}: within 15 % at {within[t]} of {total[t]} sizes")
w, n = sum(within.values()), sum(total.values())
print(f"# both: within 15 % at {w} of {n} sizes ({100 * w / n:.0f} %; the bar is 90 %)")
# The fabric against itself: each of its runs as a prediction of the median of the others.
# Where the fabric's own runs disagree by more than 15 %, no model can be within 15 % of them.
if rounds >= 3:
    hits = []
    for r in range(rounds):
        others = [f for k, f in enumerate(fabric) if k != r]
        ok = 0
        for i in range(len(model)):
            med = statistics.median(float(f[i][1]) for f in others)
            ok += med > 0 and abs(float(fabric[r][i][1]) - med) / med <= 0.15
        hits.append(ok)
    print(f"# the fabric's own runs, each against the median of the other {rounds - 1}: within 15 % at {min(hits)} to {max(hits)} of {n} sizes (median {statistics.median(hits):g})")
PY
