#!/usr/bin/env python3
"""Run every command that README.md and docs/ show, as written, and say how each went.

Why: a newcomer copies commands from the docs; one that fails costs more trust than any
feature earns. CI runs this script, so a command in the docs that stops working fails CI.

What counts as a command:
  - every non-comment line of a ```sh / ```bash block (lines ending in `\\` are joined);
  - every `$ ` line of any other block (transcripts); a following `$ echo $?` line names the
    exit status the transcript shows, and the command must end with it.
Blocks fenced as ```text are synopses (`[--opt]` syntax), not commands, and are not run.
A block whose fence names a file (```toml file=refs.toml) is a file the docs show: it is written
into the scratch directory at that point, for the commands after it.

How each is run:
  - in a scratch directory that holds the repository's tests/data, scripts and .ci (copied, so
    a command that writes there cannot change the checkout), with `fabbench` and
    `fabbench-report` on PATH from the build under test; `cargo ...` lines run in the checkout;
  - placeholders the docs use for "your run" or "your file" (RUN, RUN_A, card.toml, ...) are made
    by SETUP below, from small runs, before any example;
  - a run directory named by its timestamp in a transcript (`fabbench-results/20261123T...Z-
    autotune-rapidio`) stands for a run an earlier command made in that directory: the k-th
    such name with one suffix is replaced by the k-th directory made there with that suffix;
  - a command whose trailing comment says `needs: WHAT` is skipped by name unless this machine
    has WHAT (see REQUIREMENTS); any other reason to skip is an error, so the docs cannot grow
    excuses silently.

Usage: scripts/doc-examples.py [--list] [--source FILE.md] [--only SUBSTRING] [--keep]
Environment: FABBENCH_BIN_DIR (default $CARGO_TARGET_DIR/release or target/release).
Exit status 0 when every example that can run here ran and ended as the docs say, 1 otherwise.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCES = ["README.md"] + sorted(
    str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md")
)

# What a `needs:` comment may name, and how this machine is checked for it. A requirement
# that is missing skips the command with its name; an unknown one is an error.
REQUIREMENTS = {
    "two hosts": lambda: False,
    "slurm": lambda: shutil.which("sbatch") is not None,
    "mpi": lambda: shutil.which("mpicc") is not None and shutil.which("mpirun") is not None,
    # libfabric's runtime, which the ofi fabric loads (.ci/run installs it).
    # FABBENCH_LIBFABRIC names the library fabbench loads instead of the system's.
    "libfabric": lambda: (os.path.exists(os.environ["FABBENCH_LIBFABRIC"])
                          if os.environ.get("FABBENCH_LIBFABRIC")
                          else subprocess.run("ldconfig -p | grep -q 'libfabric[.]so[.]1 '",
                                              shell=True).returncode == 0),
    # Installs system packages: .ci/run installs the ones the build needs itself.
    "root": lambda: False,
}

# Commands that .ci/run runs itself, or that cost minutes for nothing .ci/run does not already
# check: not run here, and named in the output with the reason.
RUN_ELSEWHERE = {
    "cargo test --workspace --release": ".ci/run's own test step",
    "cargo install --path .": "installs into ~/.cargo/bin, building outside CI's target directory; .ci/run builds the same package",
    "cargo install --path report-cli": "installs into ~/.cargo/bin and rebuilds polars (10-17 min); .ci/run builds the same package",
    "scripts/ci-perf.sh --preset emulated --baseline .ci/perf/emulated": ".ci/run's emulated performance gate",
    "scripts/ci-perf.sh --preset shm --baseline .ci/perf/shm --advisory": ".ci/run's advisory shm comparison",
    "cargo build --release && scripts/reframe-check.sh": ".ci/run's ReFrame step",
    "cargo test --release -p autotune --test against_exhaustive -- --ignored": ".ci/run's step for the tests that take minutes",
    "cargo test --release --test it -- --ignored calibrate::the_rapidio_paper": ".ci/run's step for the tests that take minutes",
    "cargo test --release --test it -- --ignored autotune::the_hyperlink_profile_runs_to_4_mib": ".ci/run's step for the tests that take minutes",
    # docs/characterise.md's worked example is the paper-fit test's own command line.
    "fabbench calibrate --fabric rapidio --from tests/data/rapidio-paper.csv":
    "the test calibrate::the_rapidio_paper_is_fitted_within_15_percent_and_its_card_validates runs it; .ci/run runs that test",
    # The same fit with the paper's parameters freed: minutes, and the same search.
    "fabbench calibrate --fabric rapidio --from tests/data/rapidio-paper.csv --set rapidio.dq_channels=on"
    " --params send_overhead_ns,recv_overhead_ns,latency_ns,copy_mbps,dq_message_ns,dq_program_ns,dq_ring_entries,eager_limit":
    "minutes of the search the test calibrate::the_rapidio_paper_is_fitted_within_15_percent_and_its_card_validates runs; .ci/run runs that test",
}

# Files and runs the docs stand in for with a name ("your card", "a run"), made once, small.
# Each entry: the names it makes, and the shell commands that make them (run in the scratch
# directory, with fabbench on PATH).
SETUP = [
    # Two runs to plot, report and compare: the same small emulated job twice.
    "fabbench run osu_latency osu_bw -m 1:4K -i 20 -x 2 --fabric rapidio --out setup >/dev/null",
    "fabbench run osu_latency osu_bw -m 1:4K -i 20 -x 2 --fabric rapidio --out setup >/dev/null",
    "set -- setup/*-osu_latency+osu_bw-rapidio*; mkdir -p fabbench-results base new"
    " && cp -r $1 fabbench-results/RUN_A && cp -r $2 fabbench-results/RUN_B"
    " && cp -r $1 RUN && cp -r $1 RUN_A && cp -r $1 base/RUN && cp -r $2 new/RUN",
    # The reference values a ReFrame-style check reads, from the run itself.
    "fabbench export RUN --format refs -o . ",
    # A profile to deploy: what autotune writes, here a hand-written one of the same shape.
    "printf 'eager_limit = \"16KiB\"\\nfrag_size = \"64KiB\"\\n' > tuned.toml",
    # Model cards with one value changed, in the plain-table form --model takes.
    "printf 'fabric = \"bxi\"\\n[params]\\nlink_gbps = 20\\n' > my-nic.toml",
    "printf 'fabric = \"hyperlink\"\\n[params]\\nlanes = 2\\n' > my-board.toml",
    # The build a CI job compares against (`scripts/ci-perf.sh --ab old/fabbench`): this one.
    "mkdir -p old && cp \"$FABBENCH\" old/fabbench",
    # A LogGP card, fitted from a small characterisation of shm.
    "fabbench characterise --fabric shm --sizes 1:64K -o setup-card >/dev/null"
    " && cp setup-card/*-characterise-shm/card.toml card.toml",
]

# Placeholders in commands, replaced before running.
PLACEHOLDERS = {
    "OUT/STAMP-characterise-shm/card.toml": "card.toml",
}

STAMPED_DIR = re.compile(r"(?P<dir>[\w./-]*?)(?P<stamp>\d{8}T\d{6}Z)(?P<suffix>-[\w+@.-]*?)(?P<n>-\d+)?(?=[/\s]|$)")


def extract(source):
    """Commands of one Markdown file: (line number, command, expected status, needs)."""
    lines = (REPO / source).read_text().split("\n")
    out = []
    fence = None
    shown = None  # (file name, lines) of a ```LANG file=NAME block being read
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*```(\w*)(?:\s+file=(\S+))?", line)
        if m:
            if fence is None:
                fence = m.group(1)
                if m.group(2):
                    shown = (m.group(2), [])
            else:
                fence = None
                if shown:
                    out.append({"source": source, "line": i + 1, "file": shown[0],
                                "text": "\n".join(shown[1]) + "\n", "command": None,
                                "status": 0, "needs": None})
                    shown = None
            i += 1
            continue
        if shown is not None:
            shown[1].append(line)
            i += 1
            continue
        if fence is None or fence in ("text", "toml", "rust", "json", "yaml", "csv", "python"):
            i += 1
            continue
        shell = fence in ("sh", "bash", "shell")
        stripped = line.strip()
        if shell and stripped and not stripped.startswith("#"):
            start, text = i + 1, stripped
        elif not shell and stripped.startswith("$ "):
            start, text = i + 1, stripped[2:]
        else:
            i += 1
            continue
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text[:-1].rstrip() + " " + lines[i].strip()
        command, comment = split_comment(text)
        i += 1
        if command.startswith("echo $?"):
            # A transcript's status line: it belongs to the command before it.
            if out and i - 1 < len(lines):
                status = lines[i].strip() if i < len(lines) else ""
                if status.isdigit():
                    out[-1]["status"] = int(status)
            continue
        needs = None
        m = re.search(r"needs:\s*([^;)]+)", comment)
        if m:
            needs = m.group(1).strip()
        out.append({"source": source, "line": start, "command": command, "status": 0, "needs": needs})
    return out


def split_comment(text):
    """A command and its trailing `# comment` (a # outside quotes, after whitespace)."""
    quote = None
    for j, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (j == 0 or text[j - 1].isspace()):
            return text[:j].rstrip(), text[j + 1 :].strip()
    return text.rstrip(), ""


def made_dirs(parent, suffix):
    """Run directories in parent whose name is a stamp and suffix (a -2 aside), oldest first."""
    if not parent.is_dir():
        return []
    found = [p for p in parent.iterdir()
             if p.is_dir() and re.fullmatch(r"\d{8}T\d{6}Z" + re.escape(suffix) + r"(-\d+)?", p.name)]
    found.sort(key=lambda p: (p.stat().st_mtime_ns, p.name))
    return found


def substitute(command, scratch, seen):
    for name, value in PLACEHOLDERS.items():
        command = command.replace(name, value)

    def stamped(m):
        key = m.group(0)
        parent, suffix = m.group("dir"), m.group("suffix")
        # The k-th name shown with this directory and suffix is the k-th run made there.
        same = seen.setdefault((parent, suffix), [])
        if key not in same:
            same.append(key)
        dirs = made_dirs(scratch / parent, suffix)
        index = same.index(key)
        if index >= len(dirs):
            return key  # nothing made it: the command fails and says which path
        return os.path.relpath(dirs[index], scratch)

    return STAMPED_DIR.sub(stamped, command)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", action="store_true", help="print the commands found and exit")
    ap.add_argument("--only", help="run only commands containing this text (setup still runs)")
    ap.add_argument("--source", action="append", help="only this Markdown file's examples (repeatable)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = ap.parse_args()

    examples = []
    seen_commands = set()
    for source in args.source or SOURCES:
        for ex in extract(source):
            # The same command shown in two places runs once.
            key = (ex["command"] or ex["file"], ex["status"])
            ex["duplicate"] = key in seen_commands
            seen_commands.add(key)
            examples.append(ex)
    for ex in examples:
        if ex["command"] is None:
            continue
        if ex["needs"] is not None and ex["needs"] not in REQUIREMENTS:
            sys.exit(f"{ex['source']}:{ex['line']}: unknown requirement 'needs: {ex['needs']}' "
                     f"(known: {', '.join(REQUIREMENTS)})")
    if args.list:
        for ex in examples:
            if ex["command"] is None:
                print(f"{ex['source']}:{ex['line']}: (file {ex['file']})")
                continue
            tag = f"  [needs: {ex['needs']}]" if ex["needs"] else ""
            print(f"{ex['source']}:{ex['line']}: {ex['command']}{tag}")
        return 0

    target = os.environ.get("CARGO_TARGET_DIR", str(REPO / "target"))
    bin_dir = Path(os.environ.get("FABBENCH_BIN_DIR", os.path.join(target, "release")))
    if not (bin_dir / "fabbench").exists():
        sys.exit(f"no fabbench binary in {bin_dir}: build it (cargo build --release) or set FABBENCH_BIN_DIR")
    scratch = Path(tempfile.mkdtemp(prefix="fabbench-doc-examples-"))
    for sub in ("tests/data", "scripts", ".ci"):
        shutil.copytree(REPO / sub, scratch / sub, symlinks=True)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env.setdefault("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    env["FABBENCH"] = str(bin_dir / "fabbench")

    log = scratch / "log"
    log.mkdir()
    print(f"# doc examples: {len(examples)} commands from {len(SOURCES)} files; scratch {scratch}")
    t0 = time.monotonic()
    for n, cmd in enumerate(SETUP, 1):
        r = subprocess.run(["bash", "-c", cmd], cwd=scratch, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"setup failed: {cmd}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
            return 1
    print(f"# setup: {len(SETUP)} steps in {time.monotonic() - t0:.1f} s")

    results = {"ok": 0, "failed": 0, "skipped": 0}
    seen = {}
    for n, ex in enumerate(examples, 1):
        where = f"{ex['source']}:{ex['line']}"
        if args.only and ex["command"] and args.only not in ex["command"]:
            continue
        if ex["command"] is None:
            (scratch / ex["file"]).write_text(ex["text"])
            continue
        if ex["duplicate"]:
            continue
        if ex["command"] in RUN_ELSEWHERE:
            results["skipped"] += 1
            print(f"skipped  {where}: {ex['command']}  ({RUN_ELSEWHERE[ex['command']]})")
            continue
        if ex["needs"] and not REQUIREMENTS[ex["needs"]]():
            results["skipped"] += 1
            print(f"skipped  {where}: {ex['command']}  (needs {ex['needs']})")
            continue
        command = substitute(ex["command"], scratch, seen)
        cwd = REPO if command.startswith("cargo ") else scratch
        start = time.monotonic()
        r = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True)
        took = time.monotonic() - start
        (log / f"{n:03}.out").write_text(f"$ {command}\n{r.stdout}\n--- stderr\n{r.stderr}")
        if r.returncode == ex["status"]:
            results["ok"] += 1
            status = "" if ex["status"] == 0 else f" (exit {r.returncode}, as shown)"
            print(f"ok {took:7.1f} s  {where}: {ex['command']}{status}")
        else:
            results["failed"] += 1
            print(f"FAILED {took:5.1f} s  {where}: {ex['command']}")
            if command != ex["command"]:
                print(f"    ran as: {command}")
            print(f"    exit {r.returncode}, the docs show {ex['status']}; last lines:")
            for line in (r.stdout + r.stderr).strip().split("\n")[-6:]:
                print(f"    | {line}")
    total = time.monotonic() - t0
    print(f"# {results['ok']} ran as shown, {results['failed']} failed, "
          f"{results['skipped']} skipped by what they need; {total:.0f} s")
    if args.keep:
        print(f"# scratch kept: {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
