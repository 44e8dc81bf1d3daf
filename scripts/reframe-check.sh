#!/usr/bin/env bash
# fabbench under ReFrame: installs ReFrame (PyPI's reframe-hpc) into a venv in a scratch
# directory and runs contrib/reframe/fabbench_osu.py with its site configuration against the
# built fabbench (FABBENCH, else $CARGO_TARGET_DIR/release/fabbench, else target/release). Fails
# when a ReFrame test fails; skips, saying why, only when ReFrame cannot be installed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
fabbench=${FABBENCH:-${CARGO_TARGET_DIR:-$root/target}/release/fabbench}
if [[ ! -x $fabbench ]]; then
    echo "reframe-check: no fabbench at $fabbench; build it (cargo build --release) or set FABBENCH" >&2
    exit 2
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if ! python3 -m venv "$scratch/venv" >"$scratch/install.log" 2>&1 ||
    ! "$scratch/venv/bin/pip" install --quiet 'reframe-hpc>=4.6,<5' >>"$scratch/install.log" 2>&1; then
    echo "reframe-check: skipped: ReFrame could not be installed: $(tail -n 1 "$scratch/install.log")"
    exit 0
fi

cd "$scratch"
"$scratch/venv/bin/reframe" \
    -C "$root/contrib/reframe/settings.py" \
    -c "$root/contrib/reframe/fabbench_osu.py" \
    --prefix "$scratch/reframe" \
    -S fabbench="$fabbench" \
    -r
