#!/usr/bin/env bash
# Reference numbers from libfabric's own tools, for the side-by-side table of fabbench's ofi
# fabric against them: runs ONE server+client pair of a vendor tool on this host (server pinned
# to core 0, client to core 1, as fabbench pins its two ranks; over 127.0.0.1) and prints ONE
# number taken from the client's output: the one-way latency in microseconds for the pingpong
# tools, the bandwidth in MB/s (10^6 bytes a second, as OSU prints) for the bw tool.
#
#   scripts/ofi-vendor-tools.sh --provider shm --tool fi_rdm_tagged_pingpong --size 8
#   scripts/ofi-vendor-tools.sh --provider 'tcp;ofi_rxm' --tool fi_pingpong --size 65536
#   scripts/ofi-vendor-tools.sh --provider net --tool fi_rdm_tagged_bw --size 1048576 --iters 200
#
# Tools: fi_pingpong (Debian's libfabric-bin, looked up in PATH), fi_rdm_tagged_pingpong and
# fi_rdm_tagged_bw (fabtests, looked up in $FABTESTS_BIN, default /opt/fabtests/bin, then PATH).
# Options: --iters K (default: fabtests' own per-size count, 10000/1000/100 round trips below
# 64 KiB/below 1 MiB/from 1 MiB for the pingpongs, twice that in messages for bw; fi_pingpong
# gets the same count, since its own default is 10 whatever the size), --window W (bw only;
# fabtests' default 64, as osu_bw's), --port N (the server's port: fabtests' fabric port, default
# 9228; fi_pingpong's control port, default 47592).
#
# How the numbers come out (fabtests common/shared.c show_perf, util/pingpong.c show_perf):
# usec/xfer = elapsed / iters / 2 for a pingpong, i.e. half the round trip, the one-way latency
# as osu_latency reports it; MB/sec = bytes moved / elapsed microseconds = 10^6 B/s. The
# pingpongs count both directions in MB/sec, so one-way latency = size / MB/sec as well; that
# quotient is used when MB/sec has more digits than usec/xfer (both are printed to 0.01).
# fi_pingpong runs no warm-up and its timed loop includes the first message (for tcp;ofi_rxm,
# the connection set-up); fabtests run 10 warm-up iterations first (-w). Measured here over
# tcp;ofi_rxm on loopback, that first message costs fi_pingpong some 20-50 ms once (100 round
# trips of 8 B: ~109 us a message against fabtests' ~5), so give it a large --iters over tcp.
# The default counts also make an 8 B shm run last only milliseconds, short enough for a busy
# machine to move it threefold; --iters 1000000 (a second or two) steadies it.
#
# The fabric is kept on loopback: FI_TCP_IFACE and FI_NET_IFACE default to lo (fi_pingpong has
# no source-address option and its control socket listens on every address while it runs).
# Each process runs under `timeout 60`; a server left behind is ended on exit.
set -euo pipefail

me=ofi-vendor-tools
die() { echo "$me: $1" >&2; exit "${2:-1}"; }
bad() { echo "$me: $*" >&2; exit 2; }

provider='' tool='' size='' iters='' window='' port=''
while [[ $# -gt 0 ]]; do
	case $1 in
	--provider) provider=${2-}; shift 2 || bad "--provider needs a value" ;;
	--tool) tool=${2-}; shift 2 || bad "--tool needs a value" ;;
	--size) size=${2-}; shift 2 || bad "--size needs a value" ;;
	--iters) iters=${2-}; shift 2 || bad "--iters needs a value" ;;
	--window) window=${2-}; shift 2 || bad "--window needs a value" ;;
	--port) port=${2-}; shift 2 || bad "--port needs a value" ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) bad "unknown argument '$1' (valid: --provider P --tool T --size N [--iters K] [--window W] [--port N])" ;;
	esac
done

posint() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
[[ -n $provider ]] || bad "--provider is required (e.g. shm, 'tcp;ofi_rxm', net)"
case $tool in
fi_pingpong | fi_rdm_tagged_pingpong) kind=latency ;;
fi_rdm_tagged_bw) kind=bw ;;
*) bad "--tool '$tool' is not one of fi_pingpong, fi_rdm_tagged_pingpong, fi_rdm_tagged_bw" ;;
esac
posint "$size" || bad "--size '$size' is not a positive whole number of bytes"
[[ -z $iters ]] || posint "$iters" || bad "--iters '$iters' is not a positive whole number"
[[ -z $window ]] || posint "$window" || bad "--window '$window' is not a positive whole number"
[[ -z $window || $kind == bw ]] || bad "--window applies only to fi_rdm_tagged_bw"
if [[ -n $port ]]; then
	posint "$port" && ((port < 65536)) || bad "--port '$port' is not a port number (1..65535)"
fi

# Where the tool is: fi_pingpong comes with libfabric-bin; fabtests are built by hand.
FABTESTS_BIN=${FABTESTS_BIN:-/opt/fabtests/bin}
if [[ $tool == fi_pingpong ]]; then
	bin=$(command -v fi_pingpong || true)
	[[ -n $bin ]] || die "fi_pingpong not found in PATH (apt-get install libfabric-bin)" 127
elif [[ -x $FABTESTS_BIN/$tool ]]; then
	bin=$FABTESTS_BIN/$tool
else
	bin=$(command -v "$tool" || true)
	[[ -n $bin ]] || die "$tool not found in $FABTESTS_BIN nor PATH (build fabtests with --prefix=/opt/fabtests, or set FABTESTS_BIN)" 127
fi
command -v taskset >/dev/null || die "taskset not found (util-linux)" 127

# fabtests' size_to_count (common/shared.c): what a fabtests run picks by itself for this size.
if [[ -z $iters ]]; then
	if ((size >= 1 << 20)); then iters=100; elif ((size >= 1 << 16)); then iters=1000; else iters=10000; fi
	[[ $kind == bw ]] && iters=$((iters * 2))
fi

host=127.0.0.1
if [[ $tool == fi_pingpong ]]; then
	port=${port:-47592}
	server=("$bin" -p "$provider" -e rdm -S "$size" -I "$iters" -B "$port")
	client=("$bin" -p "$provider" -e rdm -S "$size" -I "$iters" -P "$port" "$host")
else
	port=${port:-9228}
	common=(-p "$provider" -s "$host" -S "$size" -I "$iters")
	[[ -n $window ]] && common+=(-W "$window")
	server=("$bin" "${common[@]}" -B "$port")
	client=("$bin" "${common[@]}" -P "$port" "$host")
fi
export FI_TCP_IFACE=${FI_TCP_IFACE:-lo} FI_NET_IFACE=${FI_NET_IFACE:-lo}

listening() { [[ -n $(ss -Hltn "sport = :$port" 2>/dev/null) ]]; }
if command -v ss >/dev/null && listening; then
	die "port $port is already in use on this host (pick another with --port)"
fi

work=$(mktemp -d)
server_pid=''
cleanup() {
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

timeout -k 5 60 taskset -c 0 "${server[@]}" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
# The client must find the server up: wait for its TCP listener (fi_pingpong's control socket,
# the tcp and net providers' port); shm has none, so that case waits the full second, as
# fabtests' runfabtests.sh does.
for _ in $(seq 20); do
	kill -0 "$server_pid" 2>/dev/null || break
	command -v ss >/dev/null && listening && break
	sleep 0.05
done
kill -0 "$server_pid" 2>/dev/null ||
	die "$tool server on provider '$provider' exited at once: $(cat "$work/server.err" "$work/server.out" | grep -v '<warn>' | grep . | tail -n 1)"

rc=0
timeout -k 5 60 taskset -c 1 "${client[@]}" >"$work/client.out" 2>"$work/client.err" || rc=$?
if ((rc == 124 || rc == 137)); then
	die "$tool on provider '$provider' timed out after 60 s (size $size, $iters iterations)"
elif ((rc != 0)); then
	die "$tool client on provider '$provider' failed (exit $rc): $(cat "$work/client.err" "$work/client.out" | grep -v '<warn>' | grep . | tail -n 1)"
fi
srv_rc=0
wait "$server_pid" || srv_rc=$?
server_pid=''
((srv_rc == 0)) || die "$tool server on provider '$provider' failed (exit $srv_rc): $(grep -v '<warn>' "$work/server.err" | grep . | tail -n 1)"

# The data line follows the header naming usec/xfer; its last three fields are MB/sec,
# usec/xfer and Mxfers/sec in both tools (fi_pingpong has an extra #ack column before them).
awk -v kind="$kind" -v size="$size" '
	/usec\/xfer/ { getline; mbs = $(NF - 2); us = $(NF - 1); found = 1 }
	END {
		if (!found) exit 1
		if (kind == "bw") { printf "%.2f\n", mbs; exit 0 }
		if (mbs + 0 > us + 0) printf "%.3f\n", size / mbs; else printf "%.3f\n", us
	}' "$work/client.out" || die "no result line in $tool output: $(tail -n 1 "$work/client.out")"
