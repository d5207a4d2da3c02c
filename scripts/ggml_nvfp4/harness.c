// Test-vector harness around ggml's own C NVFP4 / MXFP4 reference code.
//
// Linked against ggml's unmodified src/ggml-quants.c (extracted from a pinned commit by run.sh);
// this file only builds inputs, calls
//   quantize_row_nvfp4_ref / dequantize_row_nvfp4   (mode "nvfp4": generates every case itself)
//   quantize_row_mxfp4_ref / dequantize_row_mxfp4   (mode "mxfp4": re-runs the f32 q lines and the d lines
//                                                    of tests/data/block/mxfp4_gguf.tsv read from stdin)
// and prints TSV lines. Usage: harness nvfp4|mxfp4 <ggml commit> <compiler+flags>
//
// Everything here is deterministic (splitmix64 PRNG, no libm in the input construction).

#include "ggml-quants.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- stubs for the few libggml-base symbols ggml-quants.c references (never reached by the functions used) ----
void ggml_abort(const char * file, int line, const char * fmt, ...) {
    fprintf(stderr, "ggml_abort %s:%d\n", file, line);
    abort();
}
size_t ggml_row_size(enum ggml_type type, int64_t ne) { (void) type; (void) ne; abort(); }
size_t ggml_type_size(enum ggml_type type) { (void) type; abort(); }
const char * ggml_type_name(enum ggml_type type) { (void) type; return "?"; }

// ---- helpers ----
static uint64_t rng_state = 0x2026202620262026ull;
static uint64_t rng(void) {  // splitmix64
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double urand(void) { return (double) (rng() >> 11) * 0x1.0p-53; }        // [0,1)
static double srand1(void) { return 2.0 * urand() - 1.0; }                       // [-1,1)
static float bits2f(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static uint32_t f2bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static float next_up(float x) { return nextafterf(x, INFINITY); }
static float next_dn(float x) { return nextafterf(x, -INFINITY); }
static float fstep(float x, int k) { while (k > 0) { x = next_up(x); k--; } while (k < 0) { x = next_dn(x); k++; } return x; }

static void put_hex(const void * p, size_t n) {
    const uint8_t * b = p;
    for (size_t i = 0; i < n; i++) printf("%02x", b[i]);
}

// true UE4M3 value of a code 0x00..0x7E (not ggml's halved decode)
static double ue4m3_val(int c) {
    int e = (c >> 3) & 0xF, m = c & 7;
    return e == 0 ? ldexp(m, -9) : ldexp(1.0 + m / 8.0, e - 7);
}

// ---- NVFP4 ----
static void nv_q(int rows, int cols, const float * x, const char * fmt, ...) {
    int64_t k = (int64_t) rows * cols;
    if (cols % QK_NVFP4) { fprintf(stderr, "bad cols\n"); exit(1); }
    block_nvfp4 * y = calloc(k / QK_NVFP4, sizeof(block_nvfp4));
    quantize_row_nvfp4_ref(x, y, k);
    printf("q\tf32\t%d\t%d\t", rows, cols);
    put_hex(x, k * 4);
    printf("\t-\t");
    put_hex(y, (k / QK_NVFP4) * sizeof(block_nvfp4));
    printf("\t-\t-\t");
    va_list ap; va_start(ap, fmt); vprintf(fmt, ap); va_end(ap);
    printf("\n");
    free(y);
}

static void nv_d(int rows, int cols, const block_nvfp4 * y, const char * fmt, ...) {
    int64_t k = (int64_t) rows * cols;
    float * x = calloc(k, 4);
    dequantize_row_nvfp4(y, x, k);
    printf("d\tf32\t%d\t%d\t", rows, cols);
    put_hex(y, (k / QK_NVFP4) * sizeof(block_nvfp4));
    printf("\t-\t-\t");
    put_hex(x, k * 4);
    printf("\t");
    va_list ap; va_start(ap, fmt); vprintf(fmt, ap); va_end(ap);
    printf("\n");
    free(x);
}

// quantize then also emit the dequant line of the result (round trip)
static void nv_qd(int rows, int cols, const float * x, const char * note) {
    int64_t k = (int64_t) rows * cols;
    nv_q(rows, cols, x, "%s", note);
    block_nvfp4 * y = calloc(k / QK_NVFP4, sizeof(block_nvfp4));
    quantize_row_nvfp4_ref(x, y, k);
    nv_d(rows, cols, y, "%s (dequant of the q line above)", note);
    free(y);
}

// sub-block accumulator: 16-float sub-blocks are packed 4 per block, up to 4 blocks (256 cols) per line
#define SB 16
#define SB_PER_LINE 16
static float acc[SB * SB_PER_LINE];
static int acc_n = 0;
static char acc_note[256];
static void acc_flush(void) {
    if (acc_n == 0) return;
    int nsb = (acc_n + 3) / 4 * 4;   // pad to whole 64-blocks with +0 sub-blocks
    for (int i = acc_n * SB; i < nsb * SB; i++) acc[i] = 0.0f;
    nv_q(1, nsb * SB, acc, "%s%s", acc_note, nsb != acc_n ? " (trailing sub-blocks +0 padding)" : "");
    acc_n = 0;
}
static void acc_begin(const char * note) { acc_flush(); snprintf(acc_note, sizeof acc_note, "%s", note); }
static void acc_push(const float * sb) {
    memcpy(acc + acc_n * SB, sb, SB * 4);
    if (++acc_n == SB_PER_LINE) acc_flush();
}

// sub-block whose amax is exactly |a| (at a random lane, random sign), other lanes uniform in [-a, a]
static void push_amax(float a) {
    float sb[SB];
    int at = (int) (rng() % SB);
    for (int j = 0; j < SB; j++) sb[j] = (float) (srand1() * (double) a);
    sb[at] = (rng() & 1) ? -a : a;
    acc_push(sb);
}

static int cmpf(const void * a, const void * b) {
    float x = *(const float *) a, y = *(const float *) b;
    return x < y ? -1 : x > y;
}

// amax values around a ue4m3-input target T: RN(6T) +-1 ulp and every a within +-12 ulps of it whose
// f32 quotient a/6 lands within 2 ulps of T (these probe the f32 division + the encoder's rounding)
static void push_around_target(float T) {
    float a0 = (float) (6.0 * (double) T);
    float lo2 = fstep(T, -2), hi2 = fstep(T, 2);
    float list[32]; int n = 0;
    for (int k = -12; k <= 12; k++) {
        float a = fstep(a0, k);
        float q = a / 6.0f;
        if ((k >= -1 && k <= 1) || (q >= lo2 && q <= hi2)) {
            if (isfinite(a) && n < 32) list[n++] = a;
        }
    }
    qsort(list, n, sizeof(float), cmpf);
    for (int i = 0; i < n; i++) push_amax(list[i]);
}

static void gen_nvfp4(void) {
    // 1. random blocks at several magnitudes (with dequant round trip)
    const int mags[] = { -20, -16, -12, -8, -4, -1, 0, 1, 4, 8, 12, 16, 20 };
    for (size_t m = 0; m < sizeof mags / sizeof mags[0]; m++) {
        int rows = 2, cols = 128;
        float x[256];
        for (int i = 0; i < rows * cols; i++) x[i] = (float) ldexp(srand1(), mags[m]);
        char note[64]; snprintf(note, sizeof note, "random uniform [-1,1)*2^%d", mags[m]);
        nv_qd(rows, cols, x, note);
    }
    {   // per-sub-block magnitudes 2^-30..2^30, plus a heavy-tailed row
        int rows = 3, cols = 192;
        float x[576];
        for (int s = 0; s < rows * cols / SB; s++) {
            int e = (int) (rng() % 61) - 30;
            for (int j = 0; j < SB; j++) x[s * SB + j] = (float) ldexp(srand1(), e);
        }
        nv_qd(rows, cols, x, "random, each 16-sub-block its own magnitude 2^-30..2^30");
        for (int i = 0; i < rows * cols; i++) {
            double u = srand1();
            x[i] = (float) (u * u * u * ldexp(1.0, (int) (rng() % 9)));
        }
        nv_qd(rows, cols, x, "random heavy-tailed (u^3 * 2^0..2^8)");
        float y[64];
        for (int i = 0; i < 64; i++) y[i] = (float) srand1();
        nv_qd(1, 64, y, "random uniform [-1,1), single block");
    }

    // 2. zeros
    {
        float x[256];
        for (int i = 0; i < 64; i++) x[i] = 0.0f;
        nv_qd(1, 64, x, "all +0");
        for (int i = 0; i < 64; i++) x[i] = -0.0f;
        nv_qd(1, 64, x, "all -0 (-> code 0, not 8)");
        for (int i = 0; i < 64; i++) x[i] = (i & 1) ? -0.0f : 0.0f;
        nv_q(1, 64, x, "alternating +0/-0");
        for (int i = 0; i < 128; i++) x[i] = (i / 16 == 2 || i / 16 == 5) ? 0.0f : (float) srand1();
        nv_q(1, 128, x, "zero sub-blocks 2 and 5 among random [-1,1) sub-blocks");
        for (int i = 0; i < 64; i++) x[i] = (i % 3 == 0) ? ((i & 1) ? -0.0f : 0.0f) : (float) (4.0 * srand1());
        nv_q(1, 64, x, "+-0 lanes mixed into random [-4,4) sub-blocks");
    }

    // 3. all-subnormal f32 blocks
    {
        float x[128];
        for (int i = 0; i < 128; i++) x[i] = bits2f((uint32_t) (rng() & 0x807fffffu) | 1u);
        nv_q(1, 128, x, "all f32 subnormal (random bits, random sign)");
        for (int i = 0; i < 64; i++) x[i] = bits2f((i & 1 ? 0x80000000u : 0) | (i < 32 ? 0x007fffffu : 0x1u));
        nv_q(1, 64, x, "f32 max subnormal / min subnormal, alternating sign");
        for (int i = 0; i < 64; i++) {
            // sub-block 0,1: subnormals with one normal amax that gives UE4M3 code 0x01 / 0x08
            int s = i / 16;
            x[i] = bits2f((uint32_t) (rng() & 0x807fffffu));
            if (i % 16 == 0) x[i] = s == 0 ? (float) ldexp(6.0, -9) : s == 1 ? (float) ldexp(6.0, -6) : s == 2 ? FLT_MIN : -FLT_MIN;
        }
        nv_q(1, 64, x, "f32 subnormal lanes under amax 6*2^-9 (code 0x01), 6*2^-6 (0x08), FLT_MIN, -FLT_MIN");
    }

    // 4a. sub-block amax at and one ulp around 6 * every UE4M3 value 0x01..0x7E
    acc_begin("sub-block amax = prev/at/next of 6*ue4m3(c), c = 0x01..0x7e ascending (one per sub-block, at a random lane, random sign; other lanes uniform in [-amax,amax])");
    for (int c = 1; c <= 0x7E; c++) {
        float a = (float) (6.0 * ue4m3_val(c));
        push_amax(next_dn(a)); push_amax(a); push_amax(next_up(a));
    }
    acc_flush();

    // 4b. around the encoder's rounding thresholds: midpoints between consecutive UE4M3 values
    acc_begin("sub-block amax around 6*midpoint(ue4m3(c), ue4m3(c+1)), c = 0x00..0x7d ascending: RN(6m)+-1ulp and all amax whose f32 amax/6 is within 2 ulps of m");
    for (int c = 0; c < 0x7E; c++) push_around_target((float) ((ue4m3_val(c) + ue4m3_val(c + 1)) / 2));
    acc_flush();

    // 4c. special targets of ggml_fp32_to_ue4m3
    {
        const float T[] = {
            0x1p-10f - 0x1p-34f,          // x*512+0.5f rounds to 1.0 in f32 (largest f32 below the 0x00/0x01 tie)
            0x1p-10f, 0x1p-11f, 0x1p-20f, // tie 0/1, clear zeros
            7.5f * 0x1p-9f,               // subnormal clamp: [7.5,8)*2^-9 -> 0x07, not 0x08
            0x1p-6f,                      // smallest normal UE4M3
            240.0f, 244.0f, 248.0f, 252.0f, 256.0f, 300.0f, 447.0f, 448.0f, 449.0f, 464.0f, 480.0f, 512.0f,
            1000.0f, 1e6f, 1e30f,
        };
        acc_begin("sub-block amax around special ue4m3 encoder inputs T (amax/6 near T): 2^-10-2^-34, 2^-10, 2^-11, 2^-20, 7.5*2^-9, 2^-6, 240, 244, 248, 252, 256, 300, 447, 448, 449, 464, 480, 512, 1000, 1e6, 1e30");
        for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) push_around_target(T[i]);
        acc_flush();
        acc_begin("sub-block amax = FLT_MAX, FLT_MAX/6, 6*FLT_MIN, FLT_MIN, 6*2^-149 (f32 subnormal amax)");
        push_amax(FLT_MAX); push_amax(FLT_MAX / 6.0f); push_amax(6.0f * FLT_MIN); push_amax(FLT_MIN); push_amax(6.0f * 0x1p-149f);
        acc_flush();
    }

    // 5. every FP4 grid point and midpoint (and +-1 ulp) times a scale, lane 0 = 6*scale pins the scale
    {
        const int codes[] = { 0x01, 0x03, 0x07, 0x08, 0x0b, 0x30, 0x38, 0x3b, 0x46, 0x5d, 0x77, 0x7e };
        const double grid[] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };
        const double mid[] = { 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5 };
        for (size_t ci = 0; ci < sizeof codes / sizeof codes[0]; ci++) {
            double v = ue4m3_val(codes[ci]);
            float lanes[64]; int n = 0;
            for (int sg = 0; sg < 2; sg++) {
                for (size_t g = 0; g < 8; g++) lanes[n++] = (float) ((sg ? -1 : 1) * grid[g] * v);
                for (size_t m = 0; m < 7; m++) {
                    float p = (float) ((sg ? -1 : 1) * mid[m] * v);
                    lanes[n++] = next_dn(p); lanes[n++] = p; lanes[n++] = next_up(p);
                }
            }
            // n = 58 -> 4 sub-blocks of (lane 0 = +6v) + 15 lanes; leftovers get 6v too
            float x[64];
            for (int s = 0, k = 0; s < 4; s++) {
                x[s * SB] = (float) (6.0 * v);
                for (int j = 1; j < SB; j++) x[s * SB + j] = k < n ? lanes[k++] : (float) (-6.0 * v);
            }
            char note[160];
            snprintf(note, sizeof note, "scale code 0x%02x (%.9g): lane 0 of each sub-block = 6*scale, then +-{E2M1 grid, midpoints and +-1ulp}*scale", codes[ci], v);
            nv_qd(1, 64, x, note);
        }
    }

    // 6. NaN / Inf / huge lanes (all deterministic in the C code, see README)
    {
        const float qnan = bits2f(0x7fc00000u), nqnan = bits2f(0xffc00000u), snan = bits2f(0x7f800001u), pl = bits2f(0x7fc12345u);
        float x[256];
        for (int i = 0; i < 256; i++) x[i] = (float) srand1();
        x[3] = qnan;                                      // sb 0: one NaN among values in [-1,1)
        for (int j = 16; j < 32; j++) x[j] = qnan;        // sb 1: all NaN
        x[32] = nqnan; x[40] = snan; x[47] = pl;          // sb 2: -NaN, sNaN, payload NaN
        for (int j = 48; j < 64; j++) x[j] = (j & 1) ? qnan : 0.0f;  // sb 3: NaN + zeros
        x[64 + 5] = INFINITY;                             // sb 4: +Inf
        x[80 + 9] = -INFINITY;                            // sb 5: -Inf
        x[96] = INFINITY; x[97] = qnan; x[98] = -INFINITY;// sb 6: Inf, NaN, -Inf
        for (int j = 112; j < 128; j++) x[j] = (j & 1) ? -INFINITY : INFINITY; // sb 7: all +-Inf
        x[128] = FLT_MAX; x[129] = -FLT_MAX; x[130] = 1e38f; // sb 8: huge finite
        x[144] = -FLT_MAX;                                // sb 9: -FLT_MAX with small lanes
        x[160] = INFINITY; x[161] = FLT_MAX; x[162] = 2000.0f; x[163] = 200.0f; x[164] = -2688.0f; // sb 10
        for (int j = 176; j < 192; j++) x[j] = (j % 4 == 0) ? qnan : (j % 4 == 1) ? -0.0f : (float) ldexp(srand1(), -12); // sb 11
        nv_qd(4, 64, x, "NaN/Inf: sb0 one NaN, sb1 all NaN, sb2 -NaN/sNaN/payload NaN, sb3 NaN+zeros, sb4 +Inf, sb5 -Inf, sb6 Inf,NaN,-Inf, sb7 all +-Inf, sb8 +-FLT_MAX,1e38, sb9 -FLT_MAX, sb10 Inf,FLT_MAX,2000,200,-2688, sb11 NaN,-0,tiny; rest random [-1,1)");
    }

    {   // huge finite lanes under the saturated scale 0x7e: f32 rounding of kvalues*d - x makes errors tie
        float x[128];
        for (int i = 0; i < 128; i++) {
            double m = 1.0 + urand();
            x[i] = (float) ((i & 1 ? -1 : 1) * ldexp(m, 10 + (i * 117) / 127));   // 2^10 .. 2^127
        }
        x[0] = 3000.0f; x[1] = -2688.0f; x[2] = 2689.0f; x[3] = 0x1p24f; x[4] = 0x1p30f; x[5] = 0x1p40f; x[6] = FLT_MAX;
        nv_q(1, 128, x, "huge finite lanes (|x| 2^10..2^127, alternating sign) -> scale 0x7e; errors |kvalues*224 - x| round/tie in f32, ties -> lowest index");
    }

    // 7. dequant: every scale byte (0x00..0xff) x all 16 codes; sub-block element j holds code j
    for (int line = 0; line < 16; line++) {
        block_nvfp4 y[4];
        for (int b = 0; b < 4; b++) {
            for (int s = 0; s < 4; s++) {
                y[b].d[s] = (uint8_t) (line * 16 + b * 4 + s);
                for (int j = 0; j < 8; j++) y[b].qs[s * 8 + j] = (uint8_t) (j | ((j + 8) << 4));
            }
        }
        nv_d(1, 256, y, "scale bytes 0x%02x..0x%02x, each sub-block codes 0..15 in element order", line * 16, line * 16 + 15);
    }
    {
        block_nvfp4 y[8];
        uint8_t * p = (uint8_t *) y;
        for (size_t i = 0; i < sizeof y; i++) p[i] = (uint8_t) rng();
        nv_d(2, 256, y, "random bytes");
    }
}

// ---- MXFP4: re-run gguf's q (f32) and d lines through ggml's C code ----
static uint8_t * unhex(const char * s, size_t * n) {
    size_t len = strlen(s);
    *n = len / 2;
    uint8_t * b = malloc(*n + 1);
    for (size_t i = 0; i < *n; i++) { unsigned v; sscanf(s + 2 * i, "%2x", &v); b[i] = (uint8_t) v; }
    return b;
}

static void gen_mxfp4(void) {
    char * line = NULL; size_t cap = 0; ssize_t len;
    int nlog = 0;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        if (line[len - 1] == '\n') line[--len] = 0;
        if (line[0] == '#' || line[0] == 0) continue;
        char * f[10]; int nf = 0;
        for (char * t = strtok(line, "\t"); t && nf < 10; t = strtok(NULL, "\t")) f[nf++] = t;
        if (nf != (f[0][0] == 'q' ? 10 : 9)) { fprintf(stderr, "bad line\n"); exit(1); }
        int rows = atoi(f[2]), cols = atoi(f[3]);
        int64_t k = (int64_t) rows * cols;
        if (f[0][0] == 'q') {
            if (strcmp(f[1], "f32") != 0) continue;
            size_t n; uint8_t * src = unhex(f[4], &n);
            float * x = (float *) src;
            int skip = 0;
            for (int64_t b = 0; b < k / QK_MXFP4; b++) {  // reject inputs where the C code is UB
                float amax = 0.0f;
                for (int j = 0; j < QK_MXFP4; j++) if (amax < fabsf(x[b * QK_MXFP4 + j])) amax = fabsf(x[b * QK_MXFP4 + j]);
                if (isinf(amax) || (amax > 0.0f && amax < 0x1p-125f)) skip = 1;
                if (amax > 0.0f && isfinite(amax) && floorf(log2f(amax)) != floorf((float) log2((double) amax))) nlog++;
            }
            if (skip) { fprintf(stderr, "skipping UB line: %s\n", f[9]); free(src); continue; }
            block_mxfp4 * y = calloc(k / QK_MXFP4, sizeof(block_mxfp4));
            quantize_row_mxfp4_ref(x, y, k);
            printf("q\tf32\t%d\t%d\t%s\t-\t", rows, cols, f[4]);
            put_hex(y, (k / QK_MXFP4) * sizeof(block_mxfp4));
            printf("\t-\t-\t%s\n", f[9]);
            free(y); free(src);
        } else {
            size_t n; uint8_t * data = unhex(f[4], &n);
            float * x = calloc(k, 4);
            dequantize_row_mxfp4((const block_mxfp4 *) data, x, k);
            printf("d\tf32\t%d\t%d\t%s\t-\t-\t", rows, cols, f[4]);
            put_hex(x, k * 4);
            printf("\t%s\n", f[8]);
            free(x); free(data);
        }
    }
    free(line);
    if (nlog) { fprintf(stderr, "ERROR: %d block amax values where floorf(libm log2f) != floor of the correctly rounded f32 log2\n", nlog); exit(1); }
}

int main(int argc, char ** argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s nvfp4|mxfp4 <ggml commit> <compiler flags>\n", argv[0]); return 2; }
    if (strcmp(argv[1], "nvfp4") == 0) {
        printf("# nvfp4_ggml_c.tsv -- generated by scripts/ggml_nvfp4/run.sh (harness.c linked against ggml's own C code)\n");
        printf("# reference: ggml-org/ggml@%s src/ggml-quants.c quantize_row_nvfp4_ref / dequantize_row_nvfp4 (unmodified; = llama.cpp's CPU NVFP4 path)\n", argv[2]);
        printf("# compiler: %s\n", argv[3]);
        printf("# data = raw block_nvfp4 bytes, 36 per 64 values: d[4] (one UE4M3 byte per 16-element sub-block), then qs[32]; sub-block s uses qs[8s..8s+7], qs[8s+j] low nibble = element 16s+j, high nibble = element 16s+j+8; codes are E2M1; no tensor scale; scale column '-'\n");
        printf("# quantize: per 16-sub-block amax (NaN ignored) -> ue = ggml_fp32_to_ue4m3(f32 amax/6) -> d = ggml_ue4m3_to_fp32(ue) (= UE4M3 value/2) -> element = first argmin_k |f32(kvalues_fp4[k]*d - x)| (see scripts/ggml_nvfp4/README.md)\n");
        printf("# nothing excluded: NaN, +-Inf, FLT_MAX, -0 and f32 subnormal lanes are all deterministic in the C code; cols always a multiple of 64 (ggml requires it)\n");
        printf("# q<TAB>src dtype<TAB>rows<TAB>cols<TAB>src bytes<TAB>tensor scale in (-)<TAB>data bytes<TAB>scale bytes (-)<TAB>tensor scale out (-)<TAB>note\n");
        printf("# d<TAB>dst dtype<TAB>rows<TAB>cols<TAB>data bytes<TAB>scale bytes (-)<TAB>tensor scale (-)<TAB>dst bytes<TAB>note\n");
        printf("# all byte fields: lowercase hex of the little-endian bytes, row-major, tight\n");
        gen_nvfp4();
    } else if (strcmp(argv[1], "mxfp4") == 0) {
        printf("# mxfp4_ggml_c.tsv -- generated by scripts/ggml_nvfp4/run.sh from the f32 q lines and the d lines of mxfp4_gguf.tsv (same inputs, same notes)\n");
        printf("# reference: ggml-org/ggml@%s src/ggml-quants.c quantize_row_mxfp4_ref / dequantize_row_mxfp4 (unmodified)\n", argv[2]);
        printf("# compiler: %s; libm log2f = glibc's; checked: floorf(log2f(amax)) equals the floor of the correctly rounded f32 log2 at every block amax used\n", argv[3]);
        printf("# data = raw block_mxfp4 bytes (17 per 32 values: e8m0 byte, then qs[16]; qs[j] low nibble = element j, high nibble = element j+16); scale column '-'; dequant output f32\n");
        printf("# scale e = (uint8_t)(floorf(log2f(amax)) - 2 + 127), 0 if amax == 0 (NaN lanes are ignored by the amax loop); elements = first argmin_k |f32(kvalues_fp4[k]*d - x)|, d = 2^(e-128)\n");
        printf("# excluded (same as mxfp4_gguf.tsv): blocks with Inf or 0 < amax < 2^-125 (float -> uint8_t conversion out of range: UB in C); bf16/f16 q lines of mxfp4_gguf.tsv (ggml's ref takes f32)\n");
        printf("# q<TAB>src dtype<TAB>rows<TAB>cols<TAB>src bytes<TAB>tensor scale in (-)<TAB>data bytes<TAB>scale bytes (-)<TAB>tensor scale out (-)<TAB>note\n");
        printf("# d<TAB>dst dtype<TAB>rows<TAB>cols<TAB>data bytes<TAB>scale bytes (-)<TAB>tensor scale (-)<TAB>dst bytes<TAB>note\n");
        printf("# all byte fields: lowercase hex of the little-endian bytes, row-major, tight\n");
        gen_mxfp4();
    } else {
        return 2;
    }
    return 0;
}
