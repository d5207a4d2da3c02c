#!/usr/bin/env bash
# Text vectors (issue 16): regenerate tests/data/text/*.tsv with the exact-rational oracle
# (scripts/gen_text_vectors.py; long.tsv, issue 33: scripts/gen_text_long_vectors.py) and
# require them to be byte-identical to the committed ones;
# check that ml_dtypes 0.6.0 reads every printed `{}` string back to its code; and, where a
# nightly toolchain is installed (CI installs it for Miri and fuzzing), that Rust core `f16`
# prints every code exactly as the oracle does (the F16 digest that tests/text.rs checks).
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS

python3 -m pip install -q "ml_dtypes==0.6.0" "numpy==2.4.6"
GEN=$(mktemp -d)
trap 'rm -rf "$GEN"' EXIT
python3 scripts/gen_text_vectors.py "$GEN" --mldtypes
for f in fmt.tsv digests.tsv parse.tsv; do
    cmp "$GEN/$f" "tests/data/text/$f"
done
python3 scripts/gen_text_long_vectors.py >"$GEN/long.tsv"
cmp "$GEN/long.tsv" tests/data/text/long.tsv
echo "tests/data/text/*.tsv are exactly what the oracle produces"

# CI installs nightly for fuzzing and Miri anyway; install it here if this runs first.
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal || true
fi
if rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup run nightly rustc -O scripts/f16_core_dump.rs -o "$GEN/f16_core_dump"
    CORE=$("$GEN/f16_core_dump" | sha256sum | cut -d' ' -f1)
    ORACLE=$(grep '^f16	' tests/data/text/digests.tsv | cut -f2)
    echo "core f16 dump $CORE, oracle $ORACLE"
    [ "$CORE" = "$ORACLE" ]
    grep -q "$CORE" tests/text.rs
else
    echo "SKIPPED: no nightly toolchain, core f16 not compared"
fi
echo ".ci/text.sh done in $((SECONDS - START)) s"
