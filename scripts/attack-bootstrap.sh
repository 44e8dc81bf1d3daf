#!/usr/bin/env bash
# Attacks a real job's listeners from loopback while it sets up and runs (issue 32, items 4-6;
# run for the issue's notes, not in CI). The job is two ranks "started by Open MPI" (faked with
# OMPI_COMM_WORLD_*) meeting at --bootstrap tcp://127.0.0.1:PORT, with a scratch HOME so the
# key file is made for it. Rank 0 starts; while it waits for rank 1, its bootstrap gets the old
# predictable token, a wrong proof, 100 silent and 100 garbage connections, a flood, a 300 MiB
# line without a newline and a trickle, and its tcp fabric listener 100 silent and 100 garbage
# connections; then rank 1 starts, and once it is connected a second HELLO claims its rank
# with a valid proof. The job must end with status 0; the summary says what was tried, what
# the job logged, and rank 0's peak RSS and thread count.
#
#   scripts/attack-bootstrap.sh            # uses $CARGO_TARGET_DIR or target/, release build
#   FABBENCH=/path/to/fabbench scripts/attack-bootstrap.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FABBENCH=${FABBENCH:-${CARGO_TARGET_DIR:-target}/release/fabbench}
[ -x "$FABBENCH" ] || { echo "no fabbench at $FABBENCH: cargo build --release first" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }
exec python3 - "$FABBENCH" <<'PY'
import hashlib, hmac, os, socket, subprocess, sys, tempfile, threading, time

fabbench = sys.argv[1]
work = tempfile.mkdtemp(prefix="fabbench-attack-")
home = os.path.join(work, "home")
os.makedirs(home)

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

port = free_port()
boot = f"tcp://127.0.0.1:{port}"
args = [fabbench, "run", "osu_latency", "osu_bw", "--fabric", "tcp", "-m", "1:64K",
        "-i", "200", "-x", "10", "--bootstrap", boot, "--out", os.path.join(work, "out")]

def rank(r):
    env = dict(os.environ, OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE="2", HOME=home)
    env.pop("FABBENCH_TOKEN", None); env.pop("RUST_LOG", None)
    return subprocess.Popen(args, env=env, stdout=open(os.path.join(work, f"rank{r}.out"), "w"),
                            stderr=open(os.path.join(work, f"rank{r}.err"), "w"))

tried = []          # (attack, what the attacker saw)
held = []           # connections kept open until the end

def connect(p, timeout=5):
    s = socket.create_connection(("127.0.0.1", p), timeout=timeout)
    return s

def read_all(s, limit=1 << 16):
    got = b""
    try:
        while len(got) < limit:
            b = s.recv(4096)
            if not b: break
            got += b
    except OSError:
        pass
    return got

r0 = rank(0)
peak = {"rss_kb": 0, "threads": 0}
stop = threading.Event()
def watch():
    while not stop.is_set():
        try:
            for line in open(f"/proc/{r0.pid}/status"):
                k, _, v = line.partition(":")
                if k == "VmHWM": peak["rss_kb"] = max(peak["rss_kb"], int(v.split()[0]))
                if k == "Threads": peak["threads"] = max(peak["threads"], int(v))
        except OSError:
            pass
        time.sleep(0.05)
threading.Thread(target=watch, daemon=True).start()

t0 = time.time()
while True:
    try: connect(port).close(); break
    except OSError:
        if time.time() - t0 > 10: sys.exit("rank 0's bootstrap never listened")
        time.sleep(0.02)

# Impostors: the old predictable token and a wrong proof, written blind with a GET behind.
for name, hello in [("old predictable token", b"HELLO 1 Open_MPI-job\n"),
                    ("wrong proof", b"HELLO 1 " + b"ab" * 32 + b"\n")]:
    s = connect(port); s.sendall(hello + b"GET tcp/token 3000\n")
    reply = read_all(s).decode(errors="replace").split("\n")
    served = any(l == "OK" or l.startswith("VAL") for l in reply)
    tried.append((f"impostor, {name}", "SERVED (bad)" if served else f"refused: {reply[1] if len(reply) > 1 else reply}"))

# A huge line (300 MiB, no newline), a trickle and a flood, side by side.
def huge():
    s = connect(port); sent = 0; chunk = b"A" * (1 << 20)
    try:
        while sent < 300 << 20:
            sent += s.send(chunk)
    except OSError:
        pass
    tried.append(("300 MiB line without a newline", f"cut after {sent / 2**20:.1f} MiB sent"))
def trickle():
    s = connect(port); start = time.time(); n = 0
    try:
        while time.time() - start < 20:
            s.send(b"H"); n += 1; time.sleep(0.2)
    except OSError:
        pass
    tried.append(("trickle, 1 byte every 200 ms", f"cut after {time.time() - start:.1f} s ({n} bytes)"))
def flood():
    ok = 0
    for _ in range(1000):
        try:
            s = connect(port, 1); s.sendall(b"\x00garbage flood\n"); s.close(); ok += 1
        except OSError:
            pass
    tried.append(("flood, 1000 garbage connections", f"{ok} made"))
side = [threading.Thread(target=f) for f in (huge, trickle, flood)]
for t in side: t.start()

def hit(p, what):
    n = 0
    for i in range(200):
        try:
            s = connect(p, 2)
            if i % 2: s.sendall(b"\xff\xfe garbage \x00\x01\n")
            held.append(s); n += 1
        except OSError:
            pass
    tried.append((f"{what}: 100 silent + 100 garbage connections", f"{n} made, held open"))
hit(port, "bootstrap")

# The tcp fabric's listener: the port rank 0 listens on besides the bootstrap's.
def listening_ports(pid):
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            l = os.readlink(f"/proc/{pid}/fd/{fd}")
            if l.startswith("socket:["): inodes.add(l[8:-1])
        except OSError:
            pass
    ports = []
    for line in open(f"/proc/{pid}/net/tcp").readlines()[1:]:
        f = line.split()
        if f[3] == "0A" and f[9] in inodes: ports.append(int(f[1].rsplit(":", 1)[1], 16))
    return ports
fabric = None
while fabric is None and time.time() - t0 < 10:
    fabric = next((p for p in listening_ports(r0.pid) if p != port), None)
    time.sleep(0.01)
if fabric: hit(fabric, "tcp fabric listener")
else: tried.append(("tcp fabric listener", "not found"))

r1 = rank(1)
# Once rank 1 is in: a second HELLO for it, with a valid proof (the user's own key).
time.sleep(1.0)
key = open(os.path.join(home, ".fabbench", "key")).read().strip()
s = connect(port)
nonce = s.recv(4096).decode().strip().split(" ")[1]
proof = hmac.new(key.encode(), nonce.encode() + b"\0" + b"1" + b"\0" + b"job", hashlib.sha256).hexdigest()
s.sendall(f"HELLO 1 {proof}\n".encode())
tried.append(("second HELLO for connected rank 1, valid proof", read_all(s).decode().strip()))

c1 = r1.wait(timeout=120); c0 = r0.wait(timeout=120)
stop.set()
for t in side: t.join(timeout=30)
for s in held: s.close()
err0 = open(os.path.join(work, "rank0.err")).read().splitlines()

print(f"job: rank 0 exit {c0}, rank 1 exit {c1}, {time.time() - t0:.1f} s, in {work}")
print("tried:")
for what, saw in tried: print(f"  - {what}: {saw}")
print(f"rank 0 logged {len(err0)} lines on stderr:")
for l in err0: print("  " + l.split("Z  ", 1)[-1][:150])
print(f"rank 0 (launcher) peak RSS {peak['rss_kb'] / 1024:.1f} MiB, peak threads {peak['threads']}")
ok = c0 == 0 and c1 == 0 and not any("SERVED" in s for _, s in tried)
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
