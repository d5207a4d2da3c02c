/*
 * A KV-cache row in FP8: each f32 row of keys is stored as F8E4M3 codes plus one f32 scale
 * per row (scale = amax / 448, so the row's largest value lands on E4M3's maximum), and read
 * back. Checks that every value comes back within E4M3's rounding error.
 *
 *   cc $(pkg-config --cflags vcvt) kv_cache_fp8.c $(pkg-config --libs vcvt) -lm -o kv_cache_fp8
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <vcvt.h>

enum { ROWS = 4, HEAD_DIM = 128 };

static int check(int rc, const char *what) {
    if (rc != VCVT_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, vcvt_strerror(rc), vcvt_last_error_message());
        return 1;
    }
    return 0;
}

int main(void) {
    static float keys[ROWS][HEAD_DIM], back[ROWS][HEAD_DIM];
    static uint8_t codes[ROWS][HEAD_DIM]; /* the cache: one E4M3 byte per value */
    float scale[ROWS];                    /* and one f32 per row */
    for (int r = 0; r < ROWS; r++)
        for (int i = 0; i < HEAD_DIM; i++)
            keys[r][i] = sinf(0.37f * (float)(i + 1) * (float)(r + 1)) * powf(10.0f, (float)r - 2.0f);

    int worst_row = 0;
    double worst = 0;
    for (int r = 0; r < ROWS; r++) {
        /* Write: amax, the row's scale, then codes = e4m3(x / scale), rounded once. */
        float amax;
        if (check(vcvt_amax(keys[r], VCVT_F32, HEAD_DIM, &amax), "vcvt_amax")) return 1;
        scale[r] = amax > 0 ? amax / 448.0f : 1.0f;
        if (check(vcvt_narrow_scaled(keys[r], VCVT_F32, 1.0f / scale[r], codes[r], VCVT_F8E4M3,
                                     HEAD_DIM),
                  "vcvt_narrow_scaled"))
            return 1;
        /* Read: decode(code) * scale. */
        if (check(vcvt_dequantize_scaled(codes[r], VCVT_F8E4M3, scale[r], back[r], VCVT_F32,
                                         HEAD_DIM),
                  "vcvt_dequantize_scaled"))
            return 1;
        for (int i = 0; i < HEAD_DIM; i++) {
            /* E4M3 keeps 3 fraction bits: a normal value is within 2^-4 of itself (relative);
             * below E4M3's smallest normal (2^-6 * scale) the step is 2^-9 * scale. Allow for
             * the rounding of the scale and its reciprocal (a few f32 ulps). */
            double x = keys[r][i], err = fabs(back[r][i] - x);
            double bound = fmax(fabs(x) * 0x1p-4, scale[r] * 0x1p-10) * (1 + 0x1p-20);
            if (err > bound) {
                fprintf(stderr, "row %d value %d: %g came back as %g\n", r, i, x, back[r][i]);
                return 1;
            }
            if (x != 0 && err / fabs(x) > worst) {
                worst = err / fabs(x);
                worst_row = r;
            }
        }
        printf("row %d: amax %-10g scale %-12g first values %g %g %g -> codes %02x %02x %02x -> "
               "%g %g %g\n",
               r, amax, scale[r], keys[r][0], keys[r][1], keys[r][2], codes[r][0], codes[r][1],
               codes[r][2], back[r][0], back[r][1], back[r][2]);
    }
    printf("%d rows x %d values: %d bytes of codes + %d scales; worst relative error %.4f (row %d)\n",
           ROWS, HEAD_DIM, ROWS * HEAD_DIM, ROWS, worst, worst_row);
    return 0;
}
