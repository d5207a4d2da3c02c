/*
 * Tests of the C API of vcvt (libvcvt), written in C and compiled by `cc`.
 *
 *   test_vcvt <repo>/tests/data
 *
 * Oracles (none of them is vcvt's own output):
 *   - tests/data/conversions.tsv: known answers for f16, bf16, fp8 E4M3/E5M2 (hardware,
 *     numpy, ml_dtypes, torch);
 *   - tests/data/mldtypes/<format>.tsv: ml_dtypes 0.6.0 for fnuz fp8, fp6, fp4, E8M0, with the
 *     rows where vcvt deliberately differs replaced by the generator's exact rational model
 *     (exact_mismatches.txt) or by the documented rule (fp4/fp6 NaN -> +-MAX);
 *   - tests/data/block/<scheme>.tsv: gguf 0.19, ggml's C, mlx 0.32.4 and numpy oracles;
 *   - tests/data/mldtypes/<format>.runs.tsv: ml_dtypes 0.7.0 for fp8 E3M4, IEEE E4M3,
 *     E4M3B11FNUZ and unsigned E5M3 (every f32 input as runs, every code widened);
 *   - for the F16/BF16 hub pairs: the C compiler's _Float16 conversions (correctly rounded)
 *     and a bf16 round-to-nearest-even model written here from the format definition,
 *     applied to the vectors' own expected values.
 * Every conversion runs on every backend this CPU has, and once more from and into buffers
 * at odd addresses. Every error path is checked to return its code and leave a canary-filled
 * output untouched.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcvt.h"

static long checks, failures;

static void failf(const char *file, int line, const char *fmt, ...) {
    if (failures++ < 40) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "FAIL %s:%d: ", file, line);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
}
#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        checks++;                                                                            \
        if (!(cond)) failf(__FILE__, __LINE__, __VA_ARGS__);                                 \
    } while (0)

/* The backends to run on: VCVT_BACKEND_AUTO and every available explicit one. */
static int backends[16];
static int nbackends;

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        perror("malloc");
        exit(2);
    }
    return p;
}

/* ---- files ------------------------------------------------------------------------------ */

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = xmalloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    s[n] = 0;
    fclose(f);
    return s;
}

/* Splits line `s` (modified) at tabs into at most `max` fields; returns the count. */
static int split(char *s, char **f, int max) {
    int n = 0;
    f[n++] = s;
    for (char *p = s; *p && n < max; p++) {
        if (*p == '\t') {
            *p = 0;
            f[n++] = p + 1;
        }
    }
    return n;
}

/* Next line of the buffer at *cur (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **cur) {
    char *s = *cur;
    if (!s || !*s) return NULL;
    char *e = strchr(s, '\n');
    if (e) {
        *e = 0;
        *cur = e + 1;
    } else {
        *cur = s + strlen(s);
    }
    if (e > s && e[-1] == '\r') e[-1] = 0;
    return s;
}

static uint64_t hexnum(const char *s) { return strtoull(s, NULL, 16); }

/* Bytes of a hex string ("-" is empty) into a new buffer; *len receives the count. */
static uint8_t *hexbytes(const char *s, size_t *len) {
    if (!strcmp(s, "-")) {
        *len = 0;
        return xmalloc(1);
    }
    size_t n = strlen(s) / 2;
    uint8_t *b = xmalloc(n);
    for (size_t i = 0; i < n; i++) {
        char t[3] = {s[2 * i], s[2 * i + 1], 0};
        b[i] = (uint8_t)strtoul(t, NULL, 16);
    }
    *len = n;
    return b;
}

/* ---- element bits ----------------------------------------------------------------------- */

static size_t esize(int d) {
    switch (d) {
    case VCVT_F32: return 4;
    case VCVT_F64: return 8;
    case VCVT_F16:
    case VCVT_BF16: return 2;
    default: return 1;
    }
}

static size_t nbytes(int d, size_t n) { return d == VCVT_F4E2M1X2 ? (n + 1) / 2 : n * esize(d); }

static uint64_t get_elem(int d, const uint8_t *b, size_t i) {
    uint64_t v = 0;
    if (d == VCVT_F4E2M1X2) return (b[i / 2] >> (4 * (i % 2))) & 0xF;
    memcpy(&v, b + i * esize(d), esize(d)); /* little-endian host assumed (x86-64, aarch64) */
    return v;
}

static void set_elem(int d, uint8_t *b, size_t i, uint64_t v) {
    if (d == VCVT_F4E2M1X2) {
        int sh = 4 * (int)(i % 2);
        b[i / 2] = (uint8_t)((b[i / 2] & ~(0xF << sh)) | ((v & 0xF) << sh));
        return;
    }
    memcpy(b + i * esize(d), &v, esize(d));
}

static int is_nan(int d, uint64_t b) {
    switch (d) {
    case VCVT_F32: return (b & 0x7FFFFFFFu) > 0x7F800000u;
    case VCVT_F64: return (b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    case VCVT_F16: return (b & 0x7FFF) > 0x7C00;
    case VCVT_BF16: return (b & 0x7FFF) > 0x7F80;
    case VCVT_F8E4M3: return (b & 0x7F) == 0x7F;
    case VCVT_F8E5M2: return (b & 0x7F) > 0x7C;
    case VCVT_F8E4M3FNUZ:
    case VCVT_F8E5M2FNUZ:
    case VCVT_F8E4M3B11FNUZ: return b == 0x80;
    case VCVT_F8E8M0:
    case VCVT_F8E5M3FNU: return b == 0xFF;
    case VCVT_F8E3M4: return (b & 0x7F) > 0x70;
    case VCVT_F8E4M3IEEE: return (b & 0x7F) > 0x78;
    default: return 0;
    }
}

static int sign_bit(int d, uint64_t b) {
    switch (d) {
    case VCVT_F32: return (int)(b >> 31) & 1;
    case VCVT_F64: return (int)(b >> 63) & 1;
    case VCVT_F16:
    case VCVT_BF16: return (int)(b >> 15) & 1;
    case VCVT_F6E2M3:
    case VCVT_F6E3M2: return (int)(b >> 5) & 1;
    case VCVT_F4E2M1:
    case VCVT_F4E2M1X2: return (int)(b >> 3) & 1;
    case VCVT_F8E8M0:
    case VCVT_F8E5M3FNU: return 0;
    default: return (int)(b >> 7) & 1;
    }
}

static float f32_of(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static uint32_t bits_f32(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}
static uint64_t bits_f64(double f) {
    uint64_t b;
    memcpy(&b, &f, 8);
    return b;
}
static uint16_t bits_f16(_Float16 h) {
    uint16_t b;
    memcpy(&b, &h, 2);
    return b;
}
static _Float16 f16_of(uint16_t b) {
    _Float16 h;
    memcpy(&h, &b, 2);
    return h;
}

/* bf16 from f32 bits: round to nearest, ties to even; overflow to +-Inf (NaN: any NaN). */
static uint16_t bf16_rne(uint32_t x) {
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40);
    uint32_t lsb = (x >> 16) & 1;
    return (uint16_t)((x + 0x7FFFu + lsb) >> 16);
}

/* Whether f32 bits `x` are exactly an f16 / a bf16 value (NaN excluded). */
static int exact_f16(uint32_t x) {
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return 0;
    _Float16 h = (_Float16)f32_of(x);
    return bits_f32((float)h) == x;
}
static int exact_bf16(uint32_t x) { return (x & 0x7FFFFFFFu) <= 0x7F800000u && (x & 0xFFFF) == 0; }

/* ---- running a case --------------------------------------------------------------------- */

/* A list of inputs and expected outputs (as bits) for one conversion configuration. */
typedef struct {
    const char *name;
    int src, dst, overflow;
    size_t n, cap;
    uint64_t *in, *want;
    char *nan_only; /* compare only NaN-ness and sign */
    int *line;
} kase;

static void case_init(kase *k, const char *name, int src, int dst, int overflow) {
    memset(k, 0, sizeof *k);
    k->name = name;
    k->src = src;
    k->dst = dst;
    k->overflow = overflow;
}

static void case_add(kase *k, uint64_t in, uint64_t want, int nan_only, int line) {
    if (k->n == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 256;
        k->in = realloc(k->in, k->cap * sizeof *k->in);
        k->want = realloc(k->want, k->cap * sizeof *k->want);
        k->nan_only = realloc(k->nan_only, k->cap);
        k->line = realloc(k->line, k->cap * sizeof *k->line);
        if (!k->in || !k->want || !k->nan_only || !k->line) exit(2);
    }
    k->in[k->n] = in;
    k->want[k->n] = want;
    k->nan_only[k->n] = (char)nan_only;
    k->line[k->n] = line;
    k->n++;
}

static int compare(const kase *k, const uint8_t *out, const char *how) {
    int bad = 0;
    for (size_t i = 0; i < k->n; i++) {
        uint64_t got = get_elem(k->dst, out, i), want = k->want[i];
        int ok = k->nan_only[i] ? is_nan(k->dst, got) && is_nan(k->dst, want) &&
                                      sign_bit(k->dst, got) == sign_bit(k->dst, want)
                                : got == want;
        checks++;
        if (!ok) {
            bad = 1;
            failf(__FILE__, __LINE__, "%s (%s): line %d: %s %llx -> %s: got %llx, want %llx",
                  k->name, how, k->line[i], vcvt_dtype_name(k->src), (unsigned long long)k->in[i],
                  vcvt_dtype_name(k->dst), (unsigned long long)got, (unsigned long long)want);
            if (failures > 40) return bad;
        }
    }
    return bad;
}

/* Which dtype pairs some case has run against the vectors. */
static char covered[VCVT_DTYPE_COUNT][VCVT_DTYPE_COUNT];

/* Runs the case: all values in one call on every backend, then from and into odd addresses,
 * then one value per call. */
static void case_run(kase *k) {
    covered[k->src][k->dst] = 1;
    if (k->n == 0) {
        CHECK(0, "%s: no rows", k->name);
        return;
    }
    size_t sb = nbytes(k->src, k->n), db = nbytes(k->dst, k->n);
    uint8_t *src = xmalloc(sb + 16), *dst = xmalloc(db + 16);
    memset(src, 0, sb + 16);
    for (size_t i = 0; i < k->n; i++) set_elem(k->src, src, i, k->in[i]);
    vcvt_options o = {k->overflow, VCVT_NAN_PRESERVE, VCVT_BACKEND_AUTO};
    char how[64];
    for (int b = 0; b < nbackends; b++) {
        o.backend = backends[b];
        memset(dst, 0xA5, db);
        int rc = vcvt_convert(src, (vcvt_dtype)k->src, dst, (vcvt_dtype)k->dst, k->n, &o);
        CHECK(rc == VCVT_OK, "%s: rc %d (%s)", k->name, rc, vcvt_last_error_message());
        snprintf(how, sizeof how, "one call, %s", vcvt_backend_name(backends[b]));
        compare(k, dst, how);
    }
    /* The same through a vcvt_converter resolved once (per backend), and a copy of one. */
    for (int b = 0; b < nbackends; b++) {
        o.backend = backends[b];
        vcvt_converter c, copy;
        int rc = vcvt_converter_init(&c, (vcvt_dtype)k->src, (vcvt_dtype)k->dst, &o);
        CHECK(rc == VCVT_OK, "%s: converter_init rc %d (%s)", k->name, rc, vcvt_last_error_message());
        memcpy(&copy, &c, sizeof c);
        memset(dst, 0xA5, db);
        rc = vcvt_converter_run(b % 2 ? &copy : &c, src, dst, k->n);
        CHECK(rc == VCVT_OK, "%s: converter_run rc %d (%s)", k->name, rc, vcvt_last_error_message());
        snprintf(how, sizeof how, "vcvt_converter, %s", vcvt_backend_name(backends[b]));
        compare(k, dst, how);
    }
    /* Odd addresses: the values shifted by one byte on both sides. */
    o.backend = VCVT_BACKEND_AUTO;
    uint8_t *usrc = xmalloc(sb + 1), *udst = xmalloc(db + 1);
    memcpy(usrc + 1, src, sb);
    memset(udst, 0xA5, db + 1);
    int rc = vcvt_convert(usrc + 1, (vcvt_dtype)k->src, udst + 1, (vcvt_dtype)k->dst, k->n, &o);
    CHECK(rc == VCVT_OK, "%s unaligned: rc %d", k->name, rc);
    CHECK(udst[0] == 0xA5, "%s unaligned: wrote before the buffer", k->name);
    compare(k, udst + 1, "odd addresses");
    vcvt_converter uc;
    CHECK(vcvt_converter_init(&uc, (vcvt_dtype)k->src, (vcvt_dtype)k->dst, &o) == VCVT_OK,
          "%s: converter_init", k->name);
    memset(udst, 0xA5, db + 1);
    rc = vcvt_converter_run(&uc, usrc + 1, udst + 1, k->n);
    CHECK(rc == VCVT_OK, "%s converter unaligned: rc %d", k->name, rc);
    CHECK(udst[0] == 0xA5, "%s converter unaligned: wrote before the buffer", k->name);
    compare(k, udst + 1, "vcvt_converter, odd addresses");
    /* One value per call (the kernels' tails). */
    if (k->dst != VCVT_F4E2M1X2 && k->src != VCVT_F4E2M1X2) {
        memset(dst, 0xA5, db);
        for (size_t i = 0; i < k->n; i++)
            vcvt_convert(src + i * esize(k->src), (vcvt_dtype)k->src, dst + i * esize(k->dst),
                         (vcvt_dtype)k->dst, 1, &o);
        compare(k, dst, "one value per call");
    }
    free(src);
    free(dst);
    free(usrc);
    free(udst);
    free(k->in);
    free(k->want);
    free(k->nan_only);
    free(k->line);
}

/* ---- conversions.tsv -------------------------------------------------------------------- */

static int fmt_dtype(const char *f) {
    if (!strcmp(f, "f16")) return VCVT_F16;
    if (!strcmp(f, "bf16")) return VCVT_BF16;
    if (!strcmp(f, "e4m3fn")) return VCVT_F8E4M3;
    if (!strcmp(f, "e5m2")) return VCVT_F8E5M2;
    return -1;
}

static void test_conversions(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/conversions.tsv", dir);
    char *text = read_file(path), *cur = text, *line;
    /* Cases by [format][kind]: kind 0 f32->X sat, 1 f32->X nonsat/rne, 2 f64->X sat,
     * 3 f64->X nonsat, 4 X->f32, 5 X->f64, 6 F16->X sat, 7 F16->X nonsat, 8 BF16->X sat,
     * 9 BF16->X nonsat, 10 X->F16, 11 X->BF16 */
    static kase k[4][12];
    static const char *names[12] = {"f32->X sat", "f32->X nonsat", "f64->X sat", "f64->X nonsat",
                                    "X->f32", "X->f64", "f16->X sat", "f16->X nonsat",
                                    "bf16->X sat", "bf16->X nonsat", "X->f16", "X->bf16"};
    static char label[4][12][64];
    const int dts[4] = {VCVT_F16, VCVT_BF16, VCVT_F8E4M3, VCVT_F8E5M2};
    for (int f = 0; f < 4; f++) {
        for (int j = 0; j < 12; j++) {
            int src = j < 2 ? VCVT_F32 : j < 4 ? VCVT_F64 : j < 6 ? dts[f] : j < 8 ? VCVT_F16
                    : j < 10 ? VCVT_BF16 : dts[f];
            int dst = j == 4 ? VCVT_F32 : j == 5 ? VCVT_F64 : j == 10 ? VCVT_F16
                    : j == 11 ? VCVT_BF16 : dts[f];
            int ov = (j == 0 || j == 2 || j == 6 || j == 8) ? VCVT_OVERFLOW_SATURATE
                                                            : VCVT_OVERFLOW_NONSATURATING;
            if (j >= 10) ov = VCVT_OVERFLOW_DEFAULT;
            snprintf(label[f][j], 64, "conversions.tsv %s %s", vcvt_dtype_name(dts[f]), names[j]);
            case_init(&k[f][j], label[f][j], src, dst, ov);
        }
    }
    int ln = 0, rows = 0;
    while ((line = next_line(&cur))) {
        ln++;
        if (ln == 1 || !*line) continue;
        char *fl[8];
        if (split(line, fl, 8) < 6) continue;
        int d = fmt_dtype(fl[0]), f;
        for (f = 0; f < 4 && dts[f] != d; f++) {}
        CHECK(f < 4, "conversions.tsv:%d: unknown format %s", ln, fl[0]);
        if (f == 4) continue;
        rows++;
        uint64_t in = hexnum(fl[3]), out = hexnum(fl[4]);
        int sat = !strcmp(fl[1], "sat");
        if (!strncmp(fl[2], "f32->", 5)) {
            case_add(&k[f][sat ? 0 : 1], in, out, 0, ln);
            /* Inputs that are exactly an f16 / a bf16 also test the hub pairs. */
            if (d != VCVT_F16 && d != VCVT_BF16) {
                if (exact_f16((uint32_t)in))
                    case_add(&k[f][sat ? 6 : 7], bits_f16((_Float16)f32_of((uint32_t)in)), out, 0, ln);
                if (exact_bf16((uint32_t)in)) case_add(&k[f][sat ? 8 : 9], in >> 16, out, 0, ln);
            }
        } else if (!strncmp(fl[2], "f64->", 5)) {
            case_add(&k[f][sat ? 2 : 3], in, out, 0, ln);
        } else {
            int nan_only = strstr(fl[5], "only NaN-ness is normative") != NULL;
            uint32_t w = (uint32_t)out;
            int nan = (w & 0x7FFFFFFFu) > 0x7F800000u;
            case_add(&k[f][4], in, w, nan_only, ln);
            case_add(&k[f][5], in, bits_f64((double)f32_of(w)), nan, ln);
            if (d != VCVT_F16 && d != VCVT_BF16) {
                case_add(&k[f][10], in, bits_f16((_Float16)f32_of(w)), nan, ln);
                case_add(&k[f][11], in, bf16_rne(w), nan, ln);
            }
        }
    }
    CHECK(rows > 500, "conversions.tsv: only %d rows", rows);
    for (int f = 0; f < 4; f++)
        for (int j = 0; j < 12; j++)
            if (k[f][j].n) case_run(&k[f][j]);
    free(text);
}

/* ---- ml_dtypes vectors ------------------------------------------------------------------ */

/* Rows of exact_mismatches.txt: the generator's exact code where ml_dtypes differs. */
typedef struct {
    char fmt[16], op[8];
    uint64_t in;
    unsigned exact;
} mismatch;
static mismatch *mism;
static size_t nmism;

static void load_mismatches(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/mldtypes/exact_mismatches.txt", dir);
    char *text = read_file(path), *cur = text, *line;
    size_t cap = 0;
    while ((line = next_line(&cur))) {
        if (*line == '#' || !*line) continue;
        char *f[8];
        if (split(line, f, 8) < 5) continue;
        if (nmism == cap) {
            cap = cap ? 2 * cap : 1024;
            mism = realloc(mism, cap * sizeof *mism);
            if (!mism) exit(2);
        }
        mismatch *m = &mism[nmism++];
        snprintf(m->fmt, sizeof m->fmt, "%s", f[0]);
        snprintf(m->op, sizeof m->op, "%s", f[1]);
        m->in = hexnum(f[2]);
        m->exact = (unsigned)hexnum(f[4]);
    }
    free(text);
    CHECK(nmism > 1000, "exact_mismatches.txt: only %zu rows", nmism);
}

static int find_mismatch(const char *fmt, const char *op, uint64_t in, unsigned *exact) {
    for (size_t i = 0; i < nmism; i++)
        if (mism[i].in == in && !strcmp(mism[i].op, op) && !strcmp(mism[i].fmt, fmt)) {
            *exact = mism[i].exact;
            return 1;
        }
    return 0;
}

static void test_mldtypes(const char *dir) {
    static const struct {
        const char *file;
        int dtype, overflow;
        unsigned max, sign; /* fp4/fp6: the code of +MAX and the sign bit */
    } F[6] = {
        {"F8E4M3FNUZ", VCVT_F8E4M3FNUZ, VCVT_OVERFLOW_NONSATURATING, 0, 0},
        {"F8E5M2FNUZ", VCVT_F8E5M2FNUZ, VCVT_OVERFLOW_NONSATURATING, 0, 0},
        {"F6E2M3", VCVT_F6E2M3, VCVT_OVERFLOW_DEFAULT, 0x1F, 0x20},
        {"F6E3M2", VCVT_F6E3M2, VCVT_OVERFLOW_DEFAULT, 0x1F, 0x20},
        {"F4E2M1", VCVT_F4E2M1, VCVT_OVERFLOW_DEFAULT, 0x7, 0x8},
        {"F8E8M0", VCVT_F8E8M0, VCVT_OVERFLOW_NONSATURATING, 0, 0},
    };
    /* F4E2M1's vectors also test the packed F4E2M1X2 (a second pass over the file). */
    for (int pass = 0; pass < 7; pass++) {
        int fi = pass < 6 ? pass : 4;
        char path[4096];
        snprintf(path, sizeof path, "%s/mldtypes/%s.tsv", dir, F[fi].file);
        char *text = read_file(path), *cur = text, *line;
        int d = pass < 6 ? F[fi].dtype : VCVT_F4E2M1X2, ov = F[fi].overflow, fp = F[fi].max != 0;
        /* 0 f32->X, 1 f64->X, 2 X->f32, 3 X->f64, 4 X->f16, 5 X->bf16, 6 f16->X, 7 bf16->X */
        kase k[8];
        char label[8][96];
        static const char *names[8] = {"f32->X", "f64->X", "X->f32", "X->f64", "X->f16",
                                       "X->bf16", "f16->X", "bf16->X"};
        const int src[8] = {VCVT_F32, VCVT_F64, d, d, d, d, VCVT_F16, VCVT_BF16};
        const int dst[8] = {d, d, VCVT_F32, VCVT_F64, VCVT_F16, VCVT_BF16, d, d};
        for (int j = 0; j < 8; j++) {
            snprintf(label[j], sizeof label[j], "mldtypes %s %s", vcvt_dtype_name(d), names[j]);
            case_init(&k[j], label[j], src[j], dst[j],
                      j >= 2 && j <= 5 ? VCVT_OVERFLOW_DEFAULT : ov);
        }
        int ln = 0, adjusted = 0;
        while ((line = next_line(&cur))) {
            ln++;
            if (*line == '#' || !*line) continue;
            char *f[6];
            if (split(line, f, 6) < 3) continue;
            uint64_t in = hexnum(f[1]);
            unsigned out = (unsigned)hexnum(f[2]), exact;
            if (!strcmp(f[0], "widen")) {
                uint32_t w = (uint32_t)hexnum(f[2]);
                int nan = (w & 0x7FFFFFFFu) > 0x7F800000u;
                case_add(&k[2], in, w, 0, ln);
                case_add(&k[3], in, bits_f64((double)f32_of(w)), nan, ln);
                case_add(&k[4], in, bits_f16((_Float16)f32_of(w)), nan, ln);
                case_add(&k[5], in, bf16_rne(w), nan, ln);
                continue;
            }
            int is64 = !strcmp(f[0], "f64");
            int nan = is64 ? is_nan(VCVT_F64, in) : is_nan(VCVT_F32, in);
            if (fp && nan) {
                /* Deliberate difference (a): fp4/fp6 have no NaN; vcvt writes +-MAX with the
                 * NaN's sign (ml_dtypes a zero with the sign flipped). */
                int neg = is64 ? (int)(in >> 63) : (int)(in >> 31) & 1;
                out = F[fi].max | (neg ? F[fi].sign : 0);
                adjusted++;
            } else if (find_mismatch(F[fi].file, f[0], in, &exact)) {
                /* Deliberate differences (b), (c): the exact model's code. */
                out = exact;
                adjusted++;
            }
            if (is64) {
                case_add(&k[1], in, out, 0, ln);
                continue;
            }
            case_add(&k[0], in, out, 0, ln);
            if (exact_f16((uint32_t)in))
                case_add(&k[6], bits_f16((_Float16)f32_of((uint32_t)in)), out, 0, ln);
            if (exact_bf16((uint32_t)in)) case_add(&k[7], in >> 16, out, 0, ln);
        }
        CHECK(adjusted > 0, "%s: no row needed a documented difference", F[fi].file);
        for (int j = 0; j < 8; j++)
            if (k[j].n) case_run(&k[j]);
        free(text);
    }
}

/* The fp8 formats of ml_dtypes 0.7 (tests/data/mldtypes/<format>.runs.tsv, ml_dtypes 0.7.0's
 * astype over every f32 as runs: every input from a run's start up to the next run's start
 * narrows to the run's code, under VCVT_OVERFLOW_NONSATURATING and VCVT_NAN_PRESERVE, which
 * are what astype does; and the widening of every code). Checked: the first input, one in
 * the middle and the last input of every run, from f32 and (the same values, exact) from
 * f64; every f16 and every bf16 code (their f32 value looked up in the runs); all 256 codes
 * widened to f32/f64, and to f16/bf16 by the compiler's _Float16 and the bf16 model. */
typedef struct {
    uint32_t *start;
    uint8_t *code;
    size_t n;
} runs;

/* The code the runs give f32 bits x: the last run whose start is <= x. */
static unsigned run_code(const runs *r, uint32_t x) {
    size_t lo = 0, hi = r->n; /* r->start[0] == 0, so the answer is in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->start[mid] <= x) lo = mid;
        else hi = mid;
    }
    return r->code[lo];
}

static void test_runs(const char *dir) {
    static const struct {
        const char *file;
        int dtype;
    } F[4] = {
        {"F8E3M4", VCVT_F8E3M4},
        {"F8E4M3IEEE", VCVT_F8E4M3IEEE},
        {"F8E4M3B11FNUZ", VCVT_F8E4M3B11FNUZ},
        {"F8E5M3FNU", VCVT_F8E5M3FNU},
    };
    for (int fi = 0; fi < 4; fi++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/mldtypes/%s.runs.tsv", dir, F[fi].file);
        char *text = read_file(path), *cur = text, *line;
        int d = F[fi].dtype;
        runs r = {xmalloc(4096 * sizeof(uint32_t)), xmalloc(4096), 0};
        uint32_t widen[256];
        int have[256] = {0}, ln = 0, nwiden = 0;
        while ((line = next_line(&cur))) {
            ln++;
            if (*line == '#' || !*line) continue;
            char *f[4];
            if (split(line, f, 4) < 3) continue;
            if (!strcmp(f[0], "run")) {
                CHECK(r.n < 4096, "%s: too many runs", F[fi].file);
                if (r.n == 4096) break;
                uint32_t st = (uint32_t)hexnum(f[1]);
                CHECK(r.n == 0 ? st == 0 : st > r.start[r.n - 1], "%s:%d: runs out of order",
                      F[fi].file, ln);
                r.start[r.n] = st;
                r.code[r.n++] = (uint8_t)hexnum(f[2]);
            } else if (!strcmp(f[0], "widen")) {
                unsigned c = (unsigned)hexnum(f[1]) & 0xFF;
                widen[c] = (uint32_t)hexnum(f[2]);
                nwiden += !have[c];
                have[c] = 1;
            }
        }
        CHECK(r.n > 100 && nwiden == 256, "%s: %zu runs, %d widenings", F[fi].file, r.n, nwiden);
        /* 0 f32->X, 1 f64->X, 2 X->f32, 3 X->f64, 4 X->f16, 5 X->bf16, 6 f16->X, 7 bf16->X */
        kase k[8];
        char label[8][96];
        static const char *names[8] = {"f32->X", "f64->X", "X->f32", "X->f64", "X->f16",
                                       "X->bf16", "f16->X", "bf16->X"};
        const int src[8] = {VCVT_F32, VCVT_F64, d, d, d, d, VCVT_F16, VCVT_BF16};
        const int dst[8] = {d, d, VCVT_F32, VCVT_F64, VCVT_F16, VCVT_BF16, d, d};
        for (int j = 0; j < 8; j++) {
            snprintf(label[j], sizeof label[j], "runs %s %s", vcvt_dtype_name(d), names[j]);
            case_init(&k[j], label[j], src[j], dst[j],
                      j >= 2 && j <= 5 ? VCVT_OVERFLOW_DEFAULT : VCVT_OVERFLOW_NONSATURATING);
        }
        for (size_t i = 0; i < r.n; i++) {
            uint32_t lo = r.start[i], hi = i + 1 < r.n ? r.start[i + 1] - 1 : 0xFFFFFFFFu;
            uint32_t x[3] = {lo, lo + (hi - lo) / 2, hi};
            for (int j = 0; j < 3; j++) {
                case_add(&k[0], x[j], r.code[i], 0, (int)i);
                case_add(&k[1], bits_f64((double)f32_of(x[j])), r.code[i], 0, (int)i);
            }
        }
        for (unsigned c = 0; c < 256; c++) {
            uint32_t w = widen[c];
            int nan = (w & 0x7FFFFFFFu) > 0x7F800000u;
            case_add(&k[2], c, w, 0, (int)c);
            case_add(&k[3], c, bits_f64((double)f32_of(w)), nan, (int)c);
            case_add(&k[4], c, bits_f16((_Float16)f32_of(w)), nan, (int)c);
            case_add(&k[5], c, bf16_rne(w), nan, (int)c);
        }
        for (uint32_t c = 0; c < 65536; c++) {
            case_add(&k[6], c, run_code(&r, bits_f32((float)f16_of((uint16_t)c))), 0, (int)c);
            case_add(&k[7], c, run_code(&r, c << 16), 0, (int)c);
        }
        for (int j = 0; j < 8; j++) case_run(&k[j]);
        free(r.start);
        free(r.code);
        free(text);
    }
}

/* Every f16 and bf16 code to the other hub and to f32/f64: the compiler's _Float16 and the
 * definition of bf16 (the top half of an f32). */
static void test_hubs(void) {
    kase a, b, c[4];
    case_init(&c[0], "bf16->f32 (every code)", VCVT_BF16, VCVT_F32, VCVT_OVERFLOW_DEFAULT);
    case_init(&c[1], "bf16->f64 (every code)", VCVT_BF16, VCVT_F64, VCVT_OVERFLOW_DEFAULT);
    case_init(&c[2], "f16->f32 (every code)", VCVT_F16, VCVT_F32, VCVT_OVERFLOW_DEFAULT);
    case_init(&c[3], "f16->f64 (every code)", VCVT_F16, VCVT_F64, VCVT_OVERFLOW_DEFAULT);
    for (uint32_t code = 0; code < 65536; code++) {
        uint32_t w = code << 16; /* bf16 is the top half of an f32, NaN payloads included */
        case_add(&c[0], code, w, 0, (int)code);
        case_add(&c[1], code, bits_f64((double)f32_of(w)), is_nan(VCVT_BF16, code), (int)code);
        float h = (float)f16_of((uint16_t)code);
        case_add(&c[2], code, bits_f32(h), is_nan(VCVT_F16, code), (int)code);
        case_add(&c[3], code, bits_f64((double)h), is_nan(VCVT_F16, code), (int)code);
    }
    for (int i = 0; i < 4; i++) case_run(&c[i]);
    case_init(&a, "f16->bf16 (every code)", VCVT_F16, VCVT_BF16, VCVT_OVERFLOW_DEFAULT);
    case_init(&b, "bf16->f16 (every code)", VCVT_BF16, VCVT_F16, VCVT_OVERFLOW_DEFAULT);
    for (uint32_t c = 0; c < 65536; c++) {
        uint32_t x = bits_f32((float)f16_of((uint16_t)c));
        case_add(&a, c, bf16_rne(x), is_nan(VCVT_F16, c), (int)c);
        case_add(&b, c, bits_f16((_Float16)f32_of(c << 16)), is_nan(VCVT_BF16, c), (int)c);
    }
    case_run(&a);
    case_run(&b);
}

/* ---- block vectors ---------------------------------------------------------------------- */

enum { MX, NV, FP8 };
typedef struct {
    int kind;
    vcvt_mx mx;
    vcvt_nvfp4 nv;
    vcvt_block_fp8 fp8;
} scheme;

static int scheme_of(const char *name, scheme *s) {
    memset(s, 0, sizeof *s);
    static const struct {
        const char *name;
        int el, prof, lay;
    } mx[] = {
        {"mxfp4_ocp", VCVT_MX_E2M1, VCVT_MX_PROFILE_OCP, 0},
        {"mxfp4_ceil", VCVT_MX_E2M1, VCVT_MX_PROFILE_CEIL, 0},
        {"mxfp6e2m3_ocp", VCVT_MX_E2M3, VCVT_MX_PROFILE_OCP, 0},
        {"mxfp6e2m3_ceil", VCVT_MX_E2M3, VCVT_MX_PROFILE_CEIL, 0},
        {"mxfp6e3m2_ocp", VCVT_MX_E3M2, VCVT_MX_PROFILE_OCP, 0},
        {"mxfp6e3m2_ceil", VCVT_MX_E3M2, VCVT_MX_PROFILE_CEIL, 0},
        {"mxfp8e4m3_ocp", VCVT_MX_E4M3, VCVT_MX_PROFILE_OCP, 0},
        {"mxfp8e4m3_ceil", VCVT_MX_E4M3, VCVT_MX_PROFILE_CEIL, 0},
        {"mxfp8e5m2_ocp", VCVT_MX_E5M2, VCVT_MX_PROFILE_OCP, 0},
        {"mxfp8e5m2_ceil", VCVT_MX_E5M2, VCVT_MX_PROFILE_CEIL, 0},
        {"mxfp4_mlx", VCVT_MX_E2M1, VCVT_MX_PROFILE_MLX, 0},
        {"mxfp8_mlx", VCVT_MX_E4M3, VCVT_MX_PROFILE_MLX, 0},
        {"mxfp4_gguf", VCVT_MX_E2M1, VCVT_MX_PROFILE_GGML, VCVT_MX_LAYOUT_GGML},
        {"mxfp4_ggml_c", VCVT_MX_E2M1, VCVT_MX_PROFILE_GGML, VCVT_MX_LAYOUT_GGML},
    };
    for (size_t i = 0; i < sizeof mx / sizeof mx[0]; i++)
        if (!strcmp(name, mx[i].name)) {
            s->kind = MX;
            s->mx.element = mx[i].el;
            s->mx.profile = mx[i].prof;
            s->mx.layout = mx[i].lay;
            return 1;
        }
    s->kind = NV;
    if (!strcmp(name, "nvfp4_modelopt")) return 1;
    if (!strcmp(name, "nvfp4_mlx")) {
        s->nv.profile = VCVT_NV_PROFILE_MLX;
        return 1;
    }
    if (!strcmp(name, "nvfp4_gguf") || !strcmp(name, "nvfp4_ggml_c")) {
        s->nv.profile = VCVT_NV_PROFILE_GGML;
        s->nv.layout = VCVT_NV_LAYOUT_GGML;
        return 1;
    }
    unsigned tr, tc;
    s->kind = FP8;
    if (sscanf(name, "fp8_deepseek_ue8m0_%ux%u", &tr, &tc) == 2) {
        s->fp8.profile = VCVT_FP8_PROFILE_UE8M0;
    } else if (sscanf(name, "fp8_deepseek_%ux%u", &tr, &tc) != 2) {
        return 0;
    }
    s->fp8.tile_rows = tr;
    s->fp8.tile_cols = tc;
    return 1;
}

static void set_backend(scheme *s, int b) { s->mx.backend = s->nv.backend = s->fp8.backend = b; }

static int wide_dtype(const char *s) {
    return !strcmp(s, "f32") ? VCVT_F32 : !strcmp(s, "bf16") ? VCVT_BF16 : VCVT_F16;
}

static int lens(const scheme *s, size_t r, size_t c, size_t *dl, size_t *sl) {
    switch (s->kind) {
    case MX: return vcvt_mx_data_len(s->mx, r, c, dl) | vcvt_mx_scales_len(s->mx, r, c, sl);
    case NV: return vcvt_nvfp4_data_len(s->nv, r, c, dl) | vcvt_nvfp4_scales_len(s->nv, r, c, sl);
    default:
        return vcvt_block_fp8_data_len(s->fp8, r, c, dl) |
               vcvt_block_fp8_scale_inv_len(s->fp8, r, c, sl);
    }
}

/* Quantizes (q line) or dequantizes (d line) and says whether the result is the reference's.
 * `shift` moves the wide-side buffer to an odd address. */
static int block_line(const scheme *s, char **f, size_t shift, const char *where) {
    size_t rows = strtoull(f[2], NULL, 10), cols = strtoull(f[3], NULL, 10);
    int wide = wide_dtype(f[1]), rc, ok;
    size_t dl = 0, sl = 0;
    rc = lens(s, rows, cols, &dl, &sl);
    CHECK(rc == 0, "%s: lengths rc %d (%s)", where, rc, vcvt_last_error_message());
    if (f[0][0] == 'q') {
        size_t n_src, n_d, n_s;
        uint8_t *src = hexbytes(f[4], &n_src), *wd = hexbytes(f[6], &n_d), *ws = hexbytes(f[7], &n_s);
        CHECK(dl == n_d && sl == n_s, "%s: lengths %zu/%zu, reference %zu/%zu", where, dl, sl, n_d, n_s);
        uint8_t *buf = xmalloc(n_src + shift);
        memcpy(buf + shift, src, n_src);
        uint8_t *d = xmalloc(dl), *sc = xmalloc(sl);
        memset(d, 0xA5, dl);
        memset(sc, 0xA5, sl);
        float tin, tout = -1;
        int has_t = strcmp(f[5], "-") != 0;
        if (has_t) {
            uint32_t b = (uint32_t)hexnum(f[5]);
            memcpy(&tin, &b, 4);
        }
        switch (s->kind) {
        case MX:
            rc = vcvt_mx_quantize(s->mx, buf + shift, (vcvt_dtype)wide, rows, cols, d, dl,
                                  sl ? sc : NULL, sl);
            break;
        case NV:
            rc = vcvt_nvfp4_quantize(s->nv, buf + shift, (vcvt_dtype)wide, rows, cols, d, dl,
                                     sl ? sc : NULL, sl, has_t ? &tin : NULL, &tout);
            break;
        default:
            rc = vcvt_block_fp8_quantize(s->fp8, buf + shift, (vcvt_dtype)wide, rows, cols, d, dl,
                                         sc, sl);
        }
        CHECK(rc == 0, "%s: quantize rc %d (%s)", where, rc, vcvt_last_error_message());
        ok = rc == 0 && dl == n_d && sl == n_s && !memcmp(d, wd, dl) && !memcmp(sc, ws, sl);
        if (strcmp(f[8], "-")) ok = ok && bits_f32(tout) == (uint32_t)hexnum(f[8]);
        free(src), free(wd), free(ws), free(buf), free(d), free(sc);
    } else {
        size_t n_d, n_s, n_want;
        uint8_t *d = hexbytes(f[4], &n_d), *sc = hexbytes(f[5], &n_s), *want = hexbytes(f[7], &n_want);
        CHECK(dl == n_d && sl == n_s, "%s: lengths %zu/%zu, reference %zu/%zu", where, dl, sl, n_d, n_s);
        size_t ob = rows * cols * esize(wide);
        CHECK(ob == n_want, "%s: output %zu bytes, reference %zu", where, ob, n_want);
        uint8_t *out = xmalloc(ob + shift);
        memset(out, 0xA5, ob + shift);
        float t;
        switch (s->kind) {
        case MX:
            rc = vcvt_mx_dequantize(s->mx, d, n_d, n_s ? sc : NULL, n_s, rows, cols, out + shift,
                                    (vcvt_dtype)wide);
            break;
        case NV:
            if (strcmp(f[6], "-")) {
                uint32_t b = (uint32_t)hexnum(f[6]);
                memcpy(&t, &b, 4);
            } else {
                CHECK(vcvt_nvfp4_identity_tensor_scale(s->nv, &t) == 0, "%s: identity", where);
            }
            rc = vcvt_nvfp4_dequantize(s->nv, d, n_d, n_s ? sc : NULL, n_s, t, rows, cols,
                                       out + shift, (vcvt_dtype)wide);
            break;
        default:
            rc = vcvt_block_fp8_dequantize(s->fp8, d, n_d, sc, n_s, rows, cols, out + shift,
                                           (vcvt_dtype)wide);
        }
        CHECK(rc == 0, "%s: dequantize rc %d (%s)", where, rc, vcvt_last_error_message());
        ok = rc == 0 && ob == n_want && !memcmp(out + shift, want, ob);
        free(d), free(sc), free(want), free(out);
    }
    return ok;
}

static void test_blocks(const char *dir) {
    static const char *files[] = {
        "fp8_deepseek_128x128", "fp8_deepseek_1x128", "fp8_deepseek_ue8m0_128x128",
        "fp8_deepseek_ue8m0_1x128", "mxfp4_ceil", "mxfp4_ggml_c", "mxfp4_gguf", "mxfp4_mlx",
        "mxfp4_ocp", "mxfp6e2m3_ceil", "mxfp6e2m3_ocp", "mxfp6e3m2_ceil", "mxfp6e3m2_ocp",
        "mxfp8_mlx", "mxfp8e4m3_ceil", "mxfp8e4m3_ocp", "mxfp8e5m2_ceil", "mxfp8e5m2_ocp",
        "nvfp4_ggml_c", "nvfp4_gguf", "nvfp4_mlx", "nvfp4_modelopt",
    };
    long lines = 0;
    for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/block/%s.tsv", dir, files[fi]);
        scheme s;
        CHECK(scheme_of(files[fi], &s), "%s: unknown scheme", files[fi]);
        char *text = read_file(path), *cur = text, *line;
        int ln = 0, file_lines = 0;
        while ((line = next_line(&cur))) {
            ln++;
            if (*line == '#' || !*line) continue;
            size_t len = strlen(line);
            char *copy = xmalloc(len + 1);
            char *f[12];
            int known_different = !strcmp(files[fi], "mxfp4_ggml_c") && strstr(line, "NaN lane");
            for (int b = 0; b <= nbackends; b++) {
                /* Every backend with aligned buffers, then the automatic one at odd addresses. */
                int be = b < nbackends ? backends[b] : VCVT_BACKEND_AUTO;
                size_t shift = b < nbackends ? 0 : 1;
                memcpy(copy, line, len + 1);
                if (split(copy, f, 12) < 9) break;
                set_backend(&s, be);
                char where[256];
                snprintf(where, sizeof where, "%s:%d [%s%s]", files[fi], ln, vcvt_backend_name(be),
                         shift ? ", odd address" : "");
                int ok = block_line(&s, f, shift, where);
                lines++;
                if (known_different) {
                    /* ggml's C skips a NaN lane for amax; the ggml profile follows gguf-py. */
                    CHECK(!ok, "%s: expected to differ from ggml's C (NaN lane)", where);
                } else {
                    CHECK(ok, "%s: differs from the reference", where);
                }
            }
            file_lines++;
            free(copy);
        }
        CHECK(file_lines > 0, "%s: no lines", files[fi]);
        free(text);
    }
    printf("block vectors: %ld line x backend checks\n", lines);
}

/* ---- error paths ------------------------------------------------------------------------ */

#define CANARY 0x5Au
static _Alignas(16) uint8_t canary[256];
static void fill(void) { memset(canary, CANARY, sizeof canary); }
static int untouched(void) {
    for (size_t i = 0; i < sizeof canary; i++)
        if (canary[i] != CANARY) return 0;
    return 1;
}

#define EXPECT_ERR(call, code, fn)                                                           \
    do {                                                                                     \
        fill();                                                                              \
        int rc_ = (call);                                                                    \
        CHECK(rc_ == (code), "%s: got %d (%s), want %d", #call, rc_, vcvt_last_error_message(), \
              (int)(code));                                                                  \
        CHECK(untouched(), "%s: wrote into the output", #call);                             \
        CHECK(strstr(vcvt_last_error_message(), fn) != NULL, "%s: message %s", #call,        \
              vcvt_last_error_message());                                                    \
    } while (0)

static void test_errors(void) {
    float src[64];
    for (int i = 0; i < 64; i++) src[i] = (float)i * 0.5f - 3.0f;
    uint8_t *dst = canary;
    vcvt_options bad_ov = {7, 0, 0}, bad_nan = {0, -1, 0}, bad_be = {0, 0, 99};
    const size_t huge = (size_t)-1 / 2;

    /* vcvt_convert */
    EXPECT_ERR(vcvt_convert(NULL, VCVT_F32, dst, VCVT_F16, 4, NULL), VCVT_E_NULL, "vcvt_convert");
    EXPECT_ERR(vcvt_convert(src, VCVT_F32, NULL, VCVT_F16, 4, NULL), VCVT_E_NULL, "vcvt_convert");
    EXPECT_ERR(vcvt_convert(src, (vcvt_dtype)VCVT_DTYPE_COUNT, dst, VCVT_F16, 4, NULL), VCVT_E_DTYPE,
               "vcvt_convert");
    EXPECT_ERR(vcvt_convert(src, VCVT_F32, dst, (vcvt_dtype)-1, 4, NULL), VCVT_E_DTYPE, "vcvt_convert");
    EXPECT_ERR(vcvt_convert(src, VCVT_F32, dst, VCVT_F32, 4, NULL), VCVT_E_UNSUPPORTED, "vcvt_convert");
    EXPECT_ERR(vcvt_convert(src, VCVT_F32, dst, VCVT_F64, 4, NULL), VCVT_E_UNSUPPORTED, "vcvt_convert");
    EXPECT_ERR(vcvt_convert(src, VCVT_F8E4M3, dst, VCVT_F8E5M2, 4, NULL), VCVT_E_UNSUPPORTED,
               "vcvt_convert");
    EXPECT_ERR(vcvt_convert(src, VCVT_F32, dst, VCVT_F16, huge, NULL), VCVT_E_OVERFLOW, "vcvt_convert");
    EXPECT_ERR(vcvt_convert(src, VCVT_F64, dst, VCVT_F8E4M3, (size_t)-1 / 4, NULL), VCVT_E_OVERFLOW,
               "vcvt_convert");
    EXPECT_ERR(vcvt_convert(src, VCVT_F32, dst, VCVT_F16, 4, &bad_ov), VCVT_E_INVALID, "overflow");
    EXPECT_ERR(vcvt_convert(src, VCVT_F32, dst, VCVT_F16, 4, &bad_nan), VCVT_E_INVALID, "nan");
    EXPECT_ERR(vcvt_convert(src, VCVT_F32, dst, VCVT_F16, 4, &bad_be), VCVT_E_INVALID, "vcvt_convert");
    /* Overlap: the destination inside the source. */
    EXPECT_ERR(vcvt_convert(canary, VCVT_F32, canary + 8, VCVT_F16, 16, NULL), VCVT_E_OVERLAP,
               "vcvt_convert");
    for (int b = VCVT_BACKEND_SCALAR; b <= VCVT_BACKEND_AVX512_FP16; b++) {
        if (vcvt_backend_available(b) == 1) continue;
        vcvt_options o = {0, 0, b};
        EXPECT_ERR(vcvt_convert(src, VCVT_F32, dst, VCVT_F16, 4, &o), VCVT_E_BACKEND, vcvt_backend_name(b));
    }
    /* n == 0 with NULL pointers is fine, and still checks the dtypes. */
    CHECK(vcvt_convert(NULL, VCVT_F32, NULL, VCVT_F16, 0, NULL) == VCVT_OK, "n == 0");
    CHECK(vcvt_convert(NULL, VCVT_F32, NULL, VCVT_F32, 0, NULL) == VCVT_E_UNSUPPORTED, "n == 0 pair");

    /* vcvt_converter_init: nothing written into the handle on error. */
    vcvt_converter *ch = (vcvt_converter *)(void *)canary, conv;
    EXPECT_ERR(vcvt_converter_init(ch, (vcvt_dtype)VCVT_DTYPE_COUNT, VCVT_F16, NULL), VCVT_E_DTYPE,
               "src_dtype");
    EXPECT_ERR(vcvt_converter_init(ch, VCVT_F32, (vcvt_dtype)-1, NULL), VCVT_E_DTYPE, "dst_dtype");
    EXPECT_ERR(vcvt_converter_init(ch, VCVT_F32, VCVT_F64, NULL), VCVT_E_UNSUPPORTED,
               "vcvt_converter_init");
    EXPECT_ERR(vcvt_converter_init(ch, VCVT_F8E3M4, VCVT_F8E5M3FNU, NULL), VCVT_E_UNSUPPORTED,
               "vcvt_converter_init");
    EXPECT_ERR(vcvt_converter_init(ch, VCVT_F32, VCVT_F16, &bad_ov), VCVT_E_INVALID, "overflow");
    EXPECT_ERR(vcvt_converter_init(ch, VCVT_F32, VCVT_F16, &bad_nan), VCVT_E_INVALID, "nan");
    EXPECT_ERR(vcvt_converter_init(ch, VCVT_F32, VCVT_F16, &bad_be), VCVT_E_INVALID, "backend");
    for (int b = VCVT_BACKEND_SCALAR; b <= VCVT_BACKEND_AVX512_FP16; b++) {
        if (vcvt_backend_available(b) == 1) continue;
        vcvt_options o = {0, 0, b};
        EXPECT_ERR(vcvt_converter_init(ch, VCVT_F32, VCVT_F16, &o), VCVT_E_BACKEND, vcvt_backend_name(b));
    }
    CHECK(vcvt_converter_init(NULL, VCVT_F32, VCVT_F16, NULL) == VCVT_E_NULL, "converter_init NULL");
    /* vcvt_converter_run: nothing written into dst on error. */
    CHECK(vcvt_converter_init(&conv, VCVT_F32, VCVT_F16, NULL) == VCVT_OK, "converter_init");
    EXPECT_ERR(vcvt_converter_run(NULL, src, dst, 4), VCVT_E_NULL, "converter");
    EXPECT_ERR(vcvt_converter_run(&conv, NULL, dst, 4), VCVT_E_NULL, "src");
    EXPECT_ERR(vcvt_converter_run(&conv, src, NULL, 4), VCVT_E_NULL, "dst");
    EXPECT_ERR(vcvt_converter_run(&conv, src, dst, huge), VCVT_E_OVERFLOW, "vcvt_converter_run");
    EXPECT_ERR(vcvt_converter_run(&conv, canary, canary + 8, 16), VCVT_E_OVERLAP, "overlap");
    CHECK(vcvt_converter_run(&conv, NULL, NULL, 0) == VCVT_OK, "converter_run n == 0");
    {
        /* Handles that were never initialised or were damaged: VCVT_E_INVALID, dst untouched. */
        static const uint8_t fills[] = {0x00, 0xFF, 0x5A, 0xA5, 0xCD};
        for (size_t i = 0; i < sizeof fills; i++) {
            vcvt_converter bad;
            memset(&bad, fills[i], sizeof bad);
            EXPECT_ERR(vcvt_converter_run(&bad, src, dst, 4), VCVT_E_INVALID, "check");
        }
        for (size_t w = 0; w < sizeof conv / 8; w++) {
            vcvt_converter bad = conv;
            uint64_t word;
            memcpy(&word, (uint8_t *)&bad + 8 * w, 8);
            word ^= (uint64_t)1 << (w * 5 % 64);
            memcpy((uint8_t *)&bad + 8 * w, &word, 8);
            EXPECT_ERR(vcvt_converter_run(&bad, src, dst, 4), VCVT_E_INVALID, "vcvt_converter_run");
        }
        /* A copy of a valid handle at an address not aligned for the struct. */
        _Alignas(8) uint8_t raw[sizeof conv + 8];
        memcpy(raw + 4, &conv, sizeof conv);
        EXPECT_ERR(vcvt_converter_run((const vcvt_converter *)(const void *)(raw + 4), src, dst, 4),
                   VCVT_E_INVALID, "aligned");
    }
    /* The handle still works after all that, and gives vcvt_convert's bits. */
    {
        uint16_t a[64], b[64];
        CHECK(vcvt_converter_run(&conv, src, a, 64) == VCVT_OK, "converter_run");
        CHECK(vcvt_convert(src, VCVT_F32, b, VCVT_F16, 64, NULL) == VCVT_OK, "convert");
        CHECK(!memcmp(a, b, sizeof a), "converter_run differs from vcvt_convert");
    }

    /* vcvt_round_trip */
    EXPECT_ERR(vcvt_round_trip(NULL, VCVT_F32, VCVT_F16, 3, NULL), VCVT_E_NULL, "vcvt_round_trip");
    EXPECT_ERR(vcvt_round_trip(canary, VCVT_F16, VCVT_F8E4M3, 3, NULL), VCVT_E_UNSUPPORTED,
               "vcvt_round_trip");
    EXPECT_ERR(vcvt_round_trip(canary, VCVT_F32, VCVT_F64, 3, NULL), VCVT_E_UNSUPPORTED, "vcvt_round_trip");
    EXPECT_ERR(vcvt_round_trip(canary, VCVT_F32, (vcvt_dtype)77, 3, NULL), VCVT_E_DTYPE, "vcvt_round_trip");
    EXPECT_ERR(vcvt_round_trip(canary, VCVT_F32, VCVT_F16, huge, NULL), VCVT_E_OVERFLOW, "vcvt_round_trip");
    EXPECT_ERR(vcvt_round_trip(canary, VCVT_F32, VCVT_F16, 3, &bad_nan), VCVT_E_INVALID, "vcvt_round_trip");
    CHECK(vcvt_round_trip(NULL, VCVT_F64, VCVT_F4E2M1X2, 0, NULL) == VCVT_OK, "round trip n == 0");

    /* MX */
    vcvt_mx fp4 = {VCVT_MX_E2M1, VCVT_MX_PROFILE_CEIL, VCVT_MX_LAYOUT_PLANAR, 0};
    vcvt_mx fp4g = {VCVT_MX_E2M1, VCVT_MX_PROFILE_GGML, VCVT_MX_LAYOUT_GGML, 0};
    vcvt_mx fp8g = {VCVT_MX_E4M3, VCVT_MX_PROFILE_CEIL, VCVT_MX_LAYOUT_GGML, 0};
    vcvt_mx fp6mlx = {VCVT_MX_E2M3, VCVT_MX_PROFILE_MLX, 0, 0};
    vcvt_mx badel = {9, 0, 0, 0};
    uint8_t codes[64], scales[4];
    size_t len = 12345;
    EXPECT_ERR(vcvt_mx_quantize(fp4, src, VCVT_F32, 2, 32, canary, 31, canary + 64, 2), VCVT_E_LENGTH,
               "data");
    EXPECT_ERR(vcvt_mx_quantize(fp4, src, VCVT_F32, 2, 32, canary, 32, canary + 64, 3), VCVT_E_LENGTH,
               "scales");
    EXPECT_ERR(vcvt_mx_quantize(fp4, NULL, VCVT_F32, 2, 32, canary, 32, canary + 64, 2), VCVT_E_NULL,
               "src");
    EXPECT_ERR(vcvt_mx_quantize(fp4, src, VCVT_F32, 2, 32, NULL, 32, canary + 64, 2), VCVT_E_NULL,
               "data");
    EXPECT_ERR(vcvt_mx_quantize(fp4, src, VCVT_F8E4M3, 2, 32, canary, 32, canary + 64, 2),
               VCVT_E_UNSUPPORTED, "src_dtype");
    EXPECT_ERR(vcvt_mx_quantize(fp4, src, (vcvt_dtype)40, 2, 32, canary, 32, canary + 64, 2),
               VCVT_E_DTYPE, "src_dtype");
    EXPECT_ERR(vcvt_mx_quantize(fp4, src, VCVT_F32, huge, 4, canary, 32, canary + 64, 2),
               VCVT_E_OVERFLOW, "vcvt_mx_quantize");
    EXPECT_ERR(vcvt_mx_quantize(fp4g, src, VCVT_F32, 1, 16, canary, 17, NULL, 0), VCVT_E_SHAPE,
               "multiple of 32");
    EXPECT_ERR(vcvt_mx_quantize(fp8g, src, VCVT_F32, 1, 32, canary, 17, NULL, 0), VCVT_E_UNSUPPORTED,
               "E2M1");
    EXPECT_ERR(vcvt_mx_quantize(fp6mlx, src, VCVT_F32, 1, 32, canary, 32, canary + 64, 1),
               VCVT_E_UNSUPPORTED, "Mlx");
    EXPECT_ERR(vcvt_mx_quantize(badel, src, VCVT_F32, 1, 32, canary, 32, canary + 64, 1),
               VCVT_E_INVALID, "mx.element");
    EXPECT_ERR(vcvt_mx_quantize(fp4, canary, VCVT_F32, 1, 32, canary + 64, 16, canary + 8, 1),
               VCVT_E_OVERLAP, "overlaps");
    EXPECT_ERR(vcvt_mx_dequantize(fp4, codes, 32, scales, 2, 2, 32, canary, VCVT_F8E4M3),
               VCVT_E_UNSUPPORTED, "dst_dtype");
    EXPECT_ERR(vcvt_mx_dequantize(fp4, codes, 32, scales, 1, 2, 32, canary, VCVT_BF16), VCVT_E_LENGTH,
               "scales");
    EXPECT_ERR(vcvt_mx_dequantize(fp4, codes, 32, NULL, 2, 2, 32, canary, VCVT_BF16), VCVT_E_NULL,
               "scales");
    EXPECT_ERR(vcvt_mx_dequantize(fp4, codes, 32, scales, 2, 2, 32, NULL, VCVT_BF16), VCVT_E_NULL, "dst");
    EXPECT_ERR(vcvt_mx_dequantize(fp4, canary + 2, 32, scales, 2, 2, 32, canary, VCVT_BF16),
               VCVT_E_OVERLAP, "overlaps");
    EXPECT_ERR(vcvt_mx_dequantize(fp4, codes, 32, scales, 2, (size_t)1 << 62, 8, canary, VCVT_F32),
               VCVT_E_OVERFLOW, "vcvt_mx_dequantize");
    /* Lengths: out untouched on error. */
    len = 12345;
    CHECK(vcvt_mx_data_len(fp4g, 1, 31, &len) == VCVT_E_SHAPE && len == 12345, "data_len shape");
    CHECK(vcvt_mx_data_len(fp4, 1, 31, NULL) == VCVT_E_NULL, "data_len NULL");
    CHECK(vcvt_mx_data_len(fp4, (size_t)1 << 62, 64, &len) == VCVT_E_OVERFLOW && len == 12345,
          "data_len overflow: %s", vcvt_last_error_message());
    CHECK(vcvt_mx_data_len(fp4g, 3, 64, &len) == VCVT_OK && len == 3 * 2 * 17, "ggml data_len %zu", len);
    CHECK(vcvt_mx_scales_len(fp4g, 3, 64, &len) == VCVT_OK && len == 0, "ggml scales_len");
    CHECK(vcvt_mx_scales_len(fp4, 3, 65, &len) == VCVT_OK && len == 9, "scales_len %zu", len);

    /* NVFP4 */
    vcvt_nvfp4 nv = {0, 0, 0}, nvg = {VCVT_NV_PROFILE_GGML, VCVT_NV_LAYOUT_GGML, 0}, nvbad = {5, 0, 0};
    float t = 1.0f, tout_canary = 1234.5f;
    EXPECT_ERR(vcvt_nvfp4_quantize(nv, src, VCVT_F32, 1, 32, canary, 15, canary + 64, 2, NULL,
                                   &tout_canary),
               VCVT_E_LENGTH, "data");
    CHECK(tout_canary == 1234.5f, "tensor_scale_out written on error");
    EXPECT_ERR(vcvt_nvfp4_quantize(nvg, src, VCVT_F32, 1, 32, canary, 18, NULL, 0, &t, NULL),
               VCVT_E_SHAPE, "multiple of 64");
    EXPECT_ERR(vcvt_nvfp4_quantize(nvbad, src, VCVT_F32, 1, 32, canary, 16, canary + 64, 2, NULL, NULL),
               VCVT_E_INVALID, "nv.profile");
    EXPECT_ERR(vcvt_nvfp4_dequantize(nv, codes, 16, scales, 2, 1.0f, 1, 32, canary, VCVT_F64),
               VCVT_E_UNSUPPORTED, "dst_dtype");
    EXPECT_ERR(vcvt_nvfp4_dequantize(nv, codes, 16, scales, 3, 1.0f, 1, 32, canary, VCVT_F32),
               VCVT_E_LENGTH, "scales");

    /* Block FP8 */
    vcvt_block_fp8 ds = {128, 128, 0, 0}, zero = {0, 128, 0, 0}, badp = {1, 128, 3, 0};
    EXPECT_ERR(vcvt_block_fp8_quantize(zero, src, VCVT_F32, 2, 8, canary, 16, canary + 64, 4),
               VCVT_E_SHAPE, "tile");
    EXPECT_ERR(vcvt_block_fp8_quantize(badp, src, VCVT_F32, 2, 8, canary, 16, canary + 64, 8),
               VCVT_E_INVALID, "fp8.profile");
    EXPECT_ERR(vcvt_block_fp8_quantize(ds, src, VCVT_F32, 2, 8, canary, 16, canary + 64, 8),
               VCVT_E_LENGTH, "scale_inv");
    EXPECT_ERR(vcvt_block_fp8_dequantize(ds, codes, 16, scales, 4, 2, 8, canary, VCVT_F16 + 100),
               VCVT_E_DTYPE, "dst_dtype");
    EXPECT_ERR(vcvt_block_fp8_dequantize(ds, codes, 15, scales, 4, 2, 8, canary, VCVT_F16),
               VCVT_E_LENGTH, "data");

    /* Scaled building blocks */
    float m = 77.0f;
    EXPECT_ERR(vcvt_amax(src, VCVT_F8E4M3, 4, (float *)(void *)canary), VCVT_E_UNSUPPORTED, "vcvt_amax");
    CHECK(vcvt_amax(src, VCVT_F32, 4, NULL) == VCVT_E_NULL, "amax NULL out");
    CHECK(vcvt_amax(NULL, VCVT_F32, 0, &m) == VCVT_OK && m == 0.0f, "amax n == 0");
    EXPECT_ERR(vcvt_narrow_scaled(src, VCVT_F32, 1.0f, canary, VCVT_F4E2M1X2, 4), VCVT_E_UNSUPPORTED,
               "vcvt_narrow_scaled");
    EXPECT_ERR(vcvt_narrow_scaled(src, VCVT_F64, 1.0f, canary, VCVT_F8E4M3, 4), VCVT_E_UNSUPPORTED,
               "vcvt_narrow_scaled");
    EXPECT_ERR(vcvt_narrow_scaled(src, VCVT_F32, 1.0f, NULL, VCVT_F8E4M3, 4), VCVT_E_NULL, "dst");
    EXPECT_ERR(vcvt_narrow_scaled(src, VCVT_F32, 1.0f, canary, VCVT_F16, 4), VCVT_E_UNSUPPORTED,
               "vcvt_narrow_scaled");
    EXPECT_ERR(vcvt_dequantize_scaled(codes, VCVT_F4E2M1X2, 1.0f, canary, VCVT_F32, 4),
               VCVT_E_UNSUPPORTED, "vcvt_dequantize_scaled");
    EXPECT_ERR(vcvt_dequantize_scaled(codes, VCVT_F8E4M3, 1.0f, canary, VCVT_F8E5M2, 4),
               VCVT_E_UNSUPPORTED, "vcvt_dequantize_scaled");
    EXPECT_ERR(vcvt_dequantize_scaled(canary, VCVT_F8E4M3, 1.0f, canary + 2, VCVT_F32, 4),
               VCVT_E_OVERLAP, "overlap");

    /* Small functions */
    CHECK(vcvt_dtype_bytes(VCVT_F4E2M1X2, 7, &len) == 0 && len == 4, "dtype_bytes x2");
    CHECK(vcvt_dtype_bytes(VCVT_F64, huge, &len) == VCVT_E_OVERFLOW, "dtype_bytes overflow");
    CHECK(vcvt_dtype_bytes((vcvt_dtype)VCVT_DTYPE_COUNT, 1, &len) == VCVT_E_DTYPE, "dtype_bytes dtype");
    CHECK(vcvt_dtype_name(VCVT_DTYPE_COUNT) == NULL && !strcmp(vcvt_dtype_name(VCVT_F8E8M0), "f8e8m0") &&
              !strcmp(vcvt_dtype_name(VCVT_F8E5M3FNU), "f8e5m3fnu"),
          "dtype_name");
    /* The appended dtypes keep the values they were published with. */
    CHECK(VCVT_F8E8M0 == 12 && VCVT_F8E3M4 == 13 && VCVT_F8E4M3IEEE == 14 &&
              VCVT_F8E4M3B11FNUZ == 15 && VCVT_F8E5M3FNU == 16 && VCVT_DTYPE_COUNT == 17,
          "dtype values");
    CHECK(vcvt_backend_name(11) == NULL && !strcmp(vcvt_backend_name(VCVT_BACKEND_AVX512_VBMI),
                                                   "avx512-vbmi") &&
              !strcmp(vcvt_backend_name(VCVT_BACKEND_AVX512_FP16), "avx512-fp16"),
          "backend_name");
    CHECK(vcvt_backend_from_name("avx512-fp16") == VCVT_BACKEND_AVX512_FP16, "from_name fp16");
    CHECK(vcvt_backend_available(-1) == VCVT_E_INVALID, "backend_available invalid");
    CHECK(vcvt_backend_available(VCVT_BACKEND_SCALAR) == 1, "scalar available");
    CHECK(vcvt_backend_from_name("avx2") == VCVT_BACKEND_AVX2, "from_name");
    CHECK(vcvt_backend_from_name("sse9") == VCVT_E_INVALID, "from_name unknown");
    CHECK(vcvt_backend_from_name(NULL) == VCVT_E_NULL, "from_name NULL");
    for (int c = 0; c >= -12; c--) {
        const char *s = vcvt_strerror(c);
        CHECK(s && *s && strcmp(s, vcvt_strerror(1)) != 0, "strerror(%d)", c);
    }
    CHECK(!strcmp(vcvt_strerror(-13), "unknown vcvt error code"), "strerror unknown");
    CHECK(vcvt_version_number() == VCVT_VERSION_NUMBER, "version number");
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", VCVT_VERSION_MAJOR, VCVT_VERSION_MINOR, VCVT_VERSION_PATCH);
    CHECK(!strcmp(vcvt_version(), v), "version %s vs header %s", vcvt_version(), v);
    int active = vcvt_backend_active();
    CHECK(active > 0 && vcvt_backend_available(active) == 1, "active backend %d", active);
}

/* ---- round trip, scaled, threads -------------------------------------------------------- */

static void test_round_trip_and_scaled(void) {
    /* A round trip equals the conversion there and back (both checked above against the
     * vectors), at odd addresses too. */
    enum { N = 300 };
    float x[N], y[N];
    uint8_t codes[N * 2];
    for (int i = 0; i < N; i++) x[i] = ((float)i - 150.0f) * 0.37f;
    for (int f = VCVT_F16; f < VCVT_DTYPE_COUNT; f++) {
        memcpy(y, x, sizeof x);
        CHECK(vcvt_round_trip(y, VCVT_F32, (vcvt_dtype)f, N, NULL) == 0, "round trip %d", f);
        float z[N];
        vcvt_convert(x, VCVT_F32, codes, (vcvt_dtype)f, N, NULL);
        vcvt_convert(codes, (vcvt_dtype)f, z, VCVT_F32, N, NULL);
        CHECK(!memcmp(y, z, sizeof z), "round trip %s differs from there and back",
              vcvt_dtype_name(f));
        uint8_t odd[N * 4 + 1];
        memcpy(odd + 1, x, sizeof x);
        CHECK(vcvt_round_trip(odd + 1, VCVT_F32, (vcvt_dtype)f, N, NULL) == 0, "odd round trip");
        CHECK(!memcmp(odd + 1, z, sizeof z), "odd round trip %s", vcvt_dtype_name(f));
    }
    /* amax of the vectors' values: the largest magnitude, computed here. */
    float m, want = 0;
    for (int i = 0; i < N; i++) want = fabsf(x[i]) > want ? fabsf(x[i]) : want;
    CHECK(vcvt_amax(x, VCVT_F32, N, &m) == 0 && m == want, "amax %g vs %g", m, want);
    /* narrow_scaled with a power-of-two scale equals converting the exactly scaled values,
     * and dequantize_scaled the exact products, for every one-code-per-byte format. */
    uint8_t a[N], b[N];
    for (int i = 0; i < N; i++) y[i] = x[i] * 0.25f;
    for (int f = VCVT_F8E4M3; f < VCVT_DTYPE_COUNT; f++) {
        if (f == VCVT_F4E2M1X2) continue;
        CHECK(vcvt_narrow_scaled(x, VCVT_F32, 0.25f, a, (vcvt_dtype)f, N) == 0, "narrow_scaled %s",
              vcvt_dtype_name(f));
        vcvt_convert(y, VCVT_F32, b, (vcvt_dtype)f, N, NULL);
        CHECK(!memcmp(a, b, N), "narrow_scaled %s differs from the scaled conversion",
              vcvt_dtype_name(f));
        float wf[N], yf[N];
        CHECK(vcvt_dequantize_scaled(a, (vcvt_dtype)f, 4.0f, wf, VCVT_F32, N) == 0,
              "dequantize_scaled %s", vcvt_dtype_name(f));
        vcvt_convert(a, (vcvt_dtype)f, yf, VCVT_F32, N, NULL);
        int ok = 1;
        for (int i = 0; i < N; i++) ok &= (yf[i] != yf[i]) ? wf[i] != wf[i] : wf[i] == yf[i] * 4.0f;
        CHECK(ok, "dequantize_scaled %s differs from the exact product", vcvt_dtype_name(f));
    }
    CHECK(vcvt_narrow_scaled(x, VCVT_F32, 0.25f, a, VCVT_F8E4M3, N) == 0, "narrow_scaled");
    vcvt_convert(y, VCVT_F32, b, VCVT_F8E4M3, N, NULL);
    CHECK(!memcmp(a, b, N), "narrow_scaled differs from the scaled conversion");
    float w[N];
    CHECK(vcvt_dequantize_scaled(a, VCVT_F8E4M3, 4.0f, w, VCVT_F32, N) == 0, "dequantize_scaled");
    vcvt_convert(a, VCVT_F8E4M3, y, VCVT_F32, N, NULL);
    int same = 1;
    for (int i = 0; i < N; i++) same &= w[i] == y[i] * 4.0f;
    CHECK(same, "dequantize_scaled differs from the exact product");
    /* The same at odd addresses (the block functions copy an unaligned wide side through the
     * heap). */
    uint8_t xs[N * 4 + 1], ws[N * 4 + 1], cs[N + 1];
    memcpy(xs + 1, x, sizeof x);
    CHECK(vcvt_narrow_scaled(xs + 1, VCVT_F32, 0.25f, cs + 1, VCVT_F8E4M3, N) == 0, "odd narrow");
    CHECK(!memcmp(cs + 1, a, N), "narrow_scaled at odd addresses");
    memset(ws, 0xA5, sizeof ws);
    CHECK(vcvt_dequantize_scaled(cs + 1, VCVT_F8E4M3, 4.0f, ws + 1, VCVT_F32, N) == 0, "odd deq");
    CHECK(!memcmp(ws + 1, w, sizeof w) && ws[0] == 0xA5, "dequantize_scaled at odd addresses");
    CHECK(vcvt_amax(xs + 1, VCVT_F32, N, &m) == 0 && m == want, "amax at an odd address");
}

typedef struct {
    int id, ok;
} job;

/* One handle, made before the threads start, run by all of them at once. */
static vcvt_converter shared_to_f16;

static void *thread_main(void *p) {
    job *j = p;
    enum { N = 4096 };
    float *x = xmalloc(N * 4), *back = xmalloc(N * 4);
    uint16_t *h = xmalloc(N * 2);
    j->ok = 1;
    for (int r = 0; r < 200; r++) {
        for (int i = 0; i < N; i++) x[i] = (float)((i * 7 + j->id * 13 + r) % 2048) - 1024.0f;
        if (vcvt_convert(x, VCVT_F32, h, VCVT_F16, N, NULL) != 0) j->ok = 0;
        if (vcvt_convert(h, VCVT_F16, back, VCVT_F32, N, NULL) != 0) j->ok = 0;
        for (int i = 0; i < N; i++)
            if (back[i] != x[i]) j->ok = 0; /* integers below 2048 are exact in f16 */
        memset(h, 0, N * 2);
        if (vcvt_converter_run(&shared_to_f16, x, h, N) != 0) j->ok = 0;
        if (vcvt_convert(h, VCVT_F16, back, VCVT_F32, N, NULL) != 0) j->ok = 0;
        for (int i = 0; i < N; i++)
            if (back[i] != x[i]) j->ok = 0;
        /* Each thread's message is its own. */
        char want[64];
        snprintf(want, sizeof want, "%d is not a vcvt_backend", 100 + j->id);
        vcvt_options o = {0, 0, 100 + j->id};
        if (vcvt_convert(x, VCVT_F32, h, VCVT_F16, 1, &o) != VCVT_E_INVALID) j->ok = 0;
        if (!strstr(vcvt_last_error_message(), want)) j->ok = 0;
    }
    free(x), free(back), free(h);
    return NULL;
}

static void test_threads(void) {
    pthread_t t[4];
    job j[4];
    CHECK(vcvt_converter_init(&shared_to_f16, VCVT_F32, VCVT_F16, NULL) == VCVT_OK, "shared handle");
    for (int i = 0; i < 4; i++) {
        j[i].id = i;
        pthread_create(&t[i], NULL, thread_main, &j[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(j[i].ok, "thread %d", i);
    }
}

/* Run as a child with VCVT_BACKEND set: an unusable value is an error code for the calls
 * that use the automatic backend (never a panic or an abort), and pinned backends still run;
 * a usable value is the active backend. */
static int env_child(const char *value) {
    float x[4] = {1, 2, 3, 4};
    int want = vcvt_backend_from_name(value);
    if (want < 0) {
        fill();
        int rc = vcvt_convert(x, VCVT_F32, canary, VCVT_F16, 4, NULL);
        CHECK(rc == VCVT_E_BACKEND_ENV, "VCVT_BACKEND=%s: vcvt_convert %d", value, rc);
        CHECK(untouched(), "VCVT_BACKEND=%s: wrote into the output", value);
        CHECK(strstr(vcvt_last_error_message(), "VCVT_BACKEND") != NULL, "message %s",
              vcvt_last_error_message());
        CHECK(vcvt_backend_active() == VCVT_E_BACKEND_ENV, "VCVT_BACKEND=%s: active", value);
        vcvt_mx mx = {VCVT_MX_E2M1, 0, 0, VCVT_BACKEND_AUTO};
        size_t len;
        CHECK(vcvt_mx_data_len(mx, 1, 32, &len) == VCVT_E_BACKEND_ENV, "mx with AUTO");
        vcvt_options o = {0, 0, VCVT_BACKEND_SCALAR};
        CHECK(vcvt_convert(x, VCVT_F32, canary, VCVT_F16, 4, &o) == VCVT_OK, "pinned scalar");
        fill();
        CHECK(vcvt_converter_init((vcvt_converter *)(void *)canary, VCVT_F32, VCVT_F16, NULL) ==
                      VCVT_E_BACKEND_ENV && untouched(),
              "converter_init with AUTO");
        vcvt_converter c;
        CHECK(vcvt_converter_init(&c, VCVT_F32, VCVT_F16, &o) == VCVT_OK, "pinned converter");
    } else {
        CHECK(vcvt_backend_active() == want, "VCVT_BACKEND=%s: active %d", value,
              vcvt_backend_active());
        CHECK(vcvt_convert(x, VCVT_F32, canary, VCVT_F16, 4, NULL) == VCVT_OK, "convert");
    }
    printf("VCVT_BACKEND=%s: %ld checks, %ld failures\n", value, checks, failures);
    return failures ? 1 : 0;
}

static void test_env(const char *self) {
    static const char *values[] = {"sse9", "scalar"};
    for (int i = 0; i < 2; i++) {
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "VCVT_BACKEND=%s '%s' --env-child %s", values[i], self, values[i]);
        int st = system(cmd);
        CHECK(st == 0, "child with VCVT_BACKEND=%s exited with status %d", values[i], st);
    }
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--env-child")) return env_child(argv[2]);
    if (argc != 2) {
        fprintf(stderr, "usage: %s <repo>/tests/data\n", argv[0]);
        return 2;
    }
    backends[nbackends++] = VCVT_BACKEND_AUTO;
    for (int b = VCVT_BACKEND_SCALAR; b <= VCVT_BACKEND_AVX512_FP16; b++)
        if (vcvt_backend_available(b) == 1) backends[nbackends++] = b;
    printf("libvcvt %s; backends:", vcvt_version());
    for (int b = 0; b < nbackends; b++) printf(" %s", vcvt_backend_name(backends[b]));
    printf(" (active: %s)\n", vcvt_backend_name(vcvt_backend_active()));

    test_conversions(argv[1]);
    load_mismatches(argv[1]);
    test_mldtypes(argv[1]);
    test_hubs();
    test_runs(argv[1]);
    /* Every pair that vcvt_convert supports has run against known answers. */
    int pairs = 0;
    for (int a = 0; a < VCVT_DTYPE_COUNT; a++)
        for (int b = 0; b < VCVT_DTYPE_COUNT; b++)
            if (vcvt_convert(NULL, (vcvt_dtype)a, NULL, (vcvt_dtype)b, 0, NULL) == VCVT_OK) {
                pairs++;
                CHECK(covered[a][b], "pair %s -> %s has no known-answer case", vcvt_dtype_name(a),
                      vcvt_dtype_name(b));
            }
    CHECK(pairs == 114, "%d supported pairs", pairs);
    printf("every one of the %d supported pairs checked against known answers\n", pairs);
    test_blocks(argv[1]);
    test_errors();
    test_round_trip_and_scaled();
    test_threads();
    test_env(argv[0]);

    printf("%ld checks, %ld failures\n", checks, failures);
    return failures ? 1 : 0;
}
