#!/usr/bin/env bash
# Times two trees of vcvt against each other in one process: every pair of `main.rs`
# converted by the old and the new crate in alternating batches on the same buffers (so
# that buffer addresses and machine load are shared), after checking that both give the
# same bytes. Prints, per pair, the medians of ROUNDS runs and the range of the ratio.
#
#   scripts/ab_trees/run.sh OLD_COMMIT [LEN] [ROUNDS]     # new = this working tree
#
# The old tree is checked out in a temporary worktree whose package version is set to
# 0.0.99 (Cargo refuses two packages of one name and version in one graph).
set -euo pipefail
old=${1:?usage: run.sh OLD_COMMIT [LEN] [ROUNDS]}
len=${2:-1024}
rounds=${3:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$root" worktree add --detach "$work/old" "$old" >/dev/null
sed -i '0,/^version = "[^"]*"/s//version = "0.0.99"/' "$work/old/Cargo.toml"
mkdir -p "$work/ab/src"
cp "$root/scripts/ab_trees/main.rs" "$work/ab/src/main.rs"
cat >"$work/ab/Cargo.toml" <<TOML
[package]
name = "ab"
version = "0.1.0"
edition = "2024"
[dependencies]
old = { path = "$work/old", package = "vcvt" }
new = { path = "$root", package = "vcvt" }
[profile.release]
debug = false
[workspace]
TOML
CARGO_TARGET_DIR="$root/target-ab" cargo build --release --quiet --manifest-path "$work/ab/Cargo.toml"
for r in $(seq "$rounds"); do "$root/target-ab/release/ab" "$len"; done | python3 -c '
import sys, statistics, collections
o, n, r = (collections.defaultdict(list) for _ in range(3))
order = []
for l in sys.stdin:
    name, f = l[:28].strip(), l[28:].split()
    if name not in o: order.append(name)
    o[name].append(float(f[1])); n[name].append(float(f[3])); r[name].append(float(f[6]))
for k in order:
    print("%-24s old %6.2f  new %6.2f el/ns  new/old %.2f (%.2f-%.2f)" % (k, statistics.median(o[k]),
          statistics.median(n[k]), statistics.median(r[k]), min(r[k]), max(r[k])))
'
