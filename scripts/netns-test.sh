#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces joined by a veth pair, with private
# addresses that exist only inside this machine. One fabbench rank runs in each, started with
# a Slurm-style environment (SLURM_PROCID/SLURM_NTASKS) as srun would start it, and the OSU
# trio runs across them over the tcp fabric with validation. Needs root and `ip netns`; where
# the machine does not allow that, it says why and skips (exit 0), and says so plainly.
#
#   scripts/netns-test.sh            # uses target/release/fabbench
#   FABBENCH=/path/to/fabbench scripts/netns-test.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
FABBENCH=${FABBENCH:-$here/../target/release/fabbench}

skip() { echo "netns two-host test SKIPPED: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "it needs root to create network namespaces"
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
[ -x "$FABBENCH" ] || { echo "netns test: no fabbench binary at $FABBENCH" >&2; exit 1; }

tag=$$
A=fbA$tag B=fbB$tag VA=fbva$tag VB=fbvb$tag
IP_A=10.199.77.1 IP_B=10.199.77.2 PORT=7123
ip netns add "$A" 2>/dev/null || skip "this machine does not allow 'ip netns add'"
out=$(mktemp -d)
cleanup() {
  ip netns del "$A" 2>/dev/null || true
  ip netns del "$B" 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT
ip netns add "$B"
ip link add "$VA" type veth peer name "$VB"
ip link set "$VA" netns "$A"
ip link set "$VB" netns "$B"
ip -n "$A" addr add "$IP_A/24" dev "$VA"
ip -n "$B" addr add "$IP_B/24" dev "$VB"
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set "$VA" up
ip -n "$B" link set "$VB" up

status=0
for suite in osu_latency osu_bw osu_bibw; do
  args=(run "$suite" --fabric tcp --bootstrap "tcp://$IP_A:$PORT" -c -m 1:1M -i 20 -x 2
        --set timeout=20s --out "$out/$suite")
  env_for() { echo "SLURM_PROCID=$1 SLURM_NTASKS=2 SLURM_JOB_ID=netns$tag SLURM_STEP_ID=$suite"; }
  # shellcheck disable=SC2046
  ip netns exec "$B" env $(env_for 1) "$FABBENCH" "${args[@]}" >"$out/$suite.rank1" 2>&1 &
  rank1=$!
  # shellcheck disable=SC2046
  if ! ip netns exec "$A" env $(env_for 0) "$FABBENCH" "${args[@]}" >"$out/$suite.rank0" 2>"$out/$suite.err0"; then
    echo "FAIL $suite: rank 0 failed:"; cat "$out/$suite.err0"; status=1
  fi
  if ! wait "$rank1"; then
    echo "FAIL $suite: rank 1 failed:"; cat "$out/$suite.rank1"; status=1
  fi
  rows=$(grep -cv '^#' "$out/$suite.rank0" | tr -d ' ' || true)
  bad=$(grep -v '^#' "$out/$suite.rank0" | grep -v '^$' | grep -vc 'Pass$' || true)
  if [ "$status" = 0 ] && { [ "${rows:-0}" -lt 2 ] || [ "$bad" != 0 ]; }; then
    echo "FAIL $suite: expected validated rows, got:"; cat "$out/$suite.rank0"; status=1
  fi
  manifest=$(find "$out/$suite" -name manifest.json | head -n1)
  if [ "$status" = 0 ] && ! grep -q "$IP_B" "$manifest"; then
    echo "FAIL $suite: the manifest does not show rank 1 at $IP_B"; status=1
  fi
  [ "$status" = 0 ] && echo "ok   $suite across namespaces $A ($IP_A) and $B ($IP_B): $(grep -v '^#' "$out/$suite.rank0" | grep -v '^$' | tail -n1)"
done
[ "$status" = 0 ] && echo "netns two-host test passed"
exit "$status"
