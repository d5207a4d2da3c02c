// Timing harness for ggml's own C MXFP4 reference (quantize_row_mxfp4_ref, dequantize_row_mxfp4)
// and NVFP4 dequantization (dequantize_row_nvfp4), the yardsticks of vcvt's `Ggml` profiles. Linked against ggml's unmodified
// src/ggml-quants.c (extracted from a pinned commit by run.sh). Inputs are the values of
// benches/block.rs (`weights(32768, 3)` to quantize, `weights(32768, 4)` quantized then
// dequantized; NVFP4: `weights(32768, 3)` quantized by quantize_row_nvfp4_ref, as the `ggml`
// contender of `nvfp4_to_bf16`): 8 rows of 4096 values, each row one call, as vcvt's bench runs them.
// Prints the median over `reps` timed rounds of el/ns for each operation, and the fastest
// round's (on a shared machine, the round least disturbed by other work).
//
// usage: bench [reps]

#include "ggml-quants.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void ggml_abort(const char * file, int line, const char * fmt, ...) {
    (void) fmt;
    fprintf(stderr, "ggml_abort %s:%d\n", file, line);
    abort();
}
size_t ggml_row_size(enum ggml_type type, int64_t ne) { (void) type; (void) ne; abort(); }
size_t ggml_type_size(enum ggml_type type) { (void) type; abort(); }
const char * ggml_type_name(enum ggml_type type) { (void) type; return "?"; }

#define N 32768
#define ROWS 8
#define COLS (N / ROWS)

static uint64_t state;
static uint64_t next(void) {  // SplitMix64, as benches/block.rs
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static void weights(float * w, uint64_t seed) {
    state = seed;
    for (int i = 0; i < N; i++) {
        float m = (float) (next() >> 40) / (float) (1ull << 24) - 0.5f;
        w[i] = m * (float) (1u << ((i / 32) % 8));
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void * a, const void * b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static volatile uint8_t sink;

int main(int argc, char ** argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 101;
    static float w[N], out[N];
    static block_mxfp4 q[N / 32];
    double * tq = malloc(sizeof(double) * reps);
    double * td = malloc(sizeof(double) * reps);
    double * tn = malloc(sizeof(double) * reps);
    static block_nvfp4 qn[N / QK_NVFP4];
    for (int r = 0; r < reps; r++) {
        // Alternate the two operations, each timed over enough calls for ~1 ms.
        weights(w, 3);
        double t0 = now();
        int calls = 20;
        for (int c = 0; c < calls; c++)
            for (int row = 0; row < ROWS; row++)
                quantize_row_mxfp4_ref(w + row * COLS, q + row * (COLS / 32), COLS);
        tq[r] = (now() - t0) / calls;
        sink ^= q[0].e;
        weights(w, 4);
        for (int row = 0; row < ROWS; row++)
            quantize_row_mxfp4_ref(w + row * COLS, q + row * (COLS / 32), COLS);
        calls = 200;
        t0 = now();
        for (int c = 0; c < calls; c++)
            for (int row = 0; row < ROWS; row++)
                dequantize_row_mxfp4(q + row * (COLS / 32), out + row * COLS, COLS);
        td[r] = (now() - t0) / calls;
        sink ^= (uint8_t) out[5];
        weights(w, 3);
        for (int row = 0; row < ROWS; row++)
            quantize_row_nvfp4_ref(w + row * COLS, qn + row * (COLS / QK_NVFP4), COLS);
        t0 = now();
        for (int c = 0; c < calls; c++)
            for (int row = 0; row < ROWS; row++)
                dequantize_row_nvfp4(qn + row * (COLS / QK_NVFP4), out + row * COLS, COLS);
        tn[r] = (now() - t0) / calls;
        sink ^= (uint8_t) out[7];
    }
    qsort(tq, reps, sizeof(double), cmp);
    qsort(td, reps, sizeof(double), cmp);
    qsort(tn, reps, sizeof(double), cmp);
    printf("quantize_row_mxfp4_ref  %.3f el/ns (median of %d), %.3f el/ns (fastest)\n", N / tq[reps / 2], reps, N / tq[0]);
    printf("dequantize_row_mxfp4    %.3f el/ns (median of %d), %.3f el/ns (fastest)\n", N / td[reps / 2], reps, N / td[0]);
    printf("dequantize_row_nvfp4    %.3f el/ns (median of %d), %.3f el/ns (fastest)\n", N / tn[reps / 2], reps, N / tn[0]);
    return 0;
}
