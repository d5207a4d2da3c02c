#!/bin/sh
# Build harness.c against ggml's own (unmodified) src/ggml-quants.c at a pinned commit and regenerate
#   tests/data/block/nvfp4_ggml_c.tsv   (ggml quantize_row_nvfp4_ref / dequantize_row_nvfp4)
#   tests/data/block/mxfp4_ggml_c.tsv   (ggml quantize_row_mxfp4_ref / dequantize_row_mxfp4 on mxfp4_gguf.tsv's inputs)
#
# usage: scripts/ggml_nvfp4/run.sh <ggml git dir> [out dir]
#   <ggml git dir>: any clone (bare or not) of https://github.com/ggml-org/ggml containing GGML_COMMIT.
# Run by hand; the outputs are committed. Needs gcc and a POSIX shell only.
set -eu

GGML_COMMIT=d99724f2b141fed9e1a9f402213506c081433465
GGML_GIT=${1:?usage: run.sh <ggml git dir> [out dir]}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${2:-$ROOT/tests/data/block}
CC=${CC:-gcc}
CFLAGS="-O2 -fno-fast-math -ffp-contract=off -std=gnu11"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ggml sources, verbatim from the pinned commit (only src/ and include/ are needed)
git -C "$GGML_GIT" archive "$GGML_COMMIT" src include | tar -x -C "$TMP"

INC="-I$TMP/include -I$TMP/src -I$TMP/src/ggml-cpu"
$CC $CFLAGS $INC -c "$TMP/src/ggml-quants.c" -o "$TMP/ggml-quants.o" 2>"$TMP/cc.log" || { cat "$TMP/cc.log"; exit 1; }
$CC $CFLAGS $INC -c "$HERE/harness.c" -o "$TMP/harness.o"
$CC "$TMP/harness.o" "$TMP/ggml-quants.o" -lm -o "$TMP/harness"

CCV=$($CC --version | head -n 1)
FLAGS="$CCV; $CFLAGS; x86-64 Linux glibc $(ldd --version 2>/dev/null | head -n 1 | sed 's/.* //')"

"$TMP/harness" nvfp4 "$GGML_COMMIT" "$FLAGS" > "$TMP/nvfp4_ggml_c.tsv"
"$TMP/harness" mxfp4 "$GGML_COMMIT" "$FLAGS" < "$ROOT/tests/data/block/mxfp4_gguf.tsv" > "$TMP/mxfp4_ggml_c.tsv"

mkdir -p "$OUT"
cp "$TMP/nvfp4_ggml_c.tsv" "$TMP/mxfp4_ggml_c.tsv" "$OUT/"
wc -c "$OUT/nvfp4_ggml_c.tsv" "$OUT/mxfp4_ggml_c.tsv"
