/*
 * MXFP4 rows in llama.cpp's block_mxfp4 layout (17 bytes per 32 values: the E8M0 scale byte,
 * then 16 bytes whose low nibbles hold values 0..15 and high nibbles values 16..31) to BF16,
 * as a runtime reads a gpt-oss GGUF tensor. The rows are made with vcvt's ggml profile (what
 * gguf-py's quantizer writes); every BF16 result is checked against the block decoded by
 * hand from the layout's definition.
 *
 *   cc $(pkg-config --cflags vcvt) mxfp4_ggml_to_bf16.c $(pkg-config --libs vcvt) -o mxfp4_ggml_to_bf16
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vcvt.h>

enum { ROWS = 3, COLS = 96 }; /* three rows of three blocks */

/* E2M1 values doubled (ggml's kvalues_mxfp4); a block's values are kvalues * 2^(e - 128). */
static const int8_t KVALUES[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

static float bf16_to_f32(uint16_t b) {
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static int fail(int rc, const char *what) {
    fprintf(stderr, "%s: %s (%s)\n", what, vcvt_strerror(rc), vcvt_last_error_message());
    return 1;
}

int main(void) {
    vcvt_mx mxfp4 = {VCVT_MX_E2M1, VCVT_MX_PROFILE_GGML, VCVT_MX_LAYOUT_GGML, VCVT_BACKEND_AUTO};
    size_t data_len, scales_len;
    int rc;
    if ((rc = vcvt_mx_data_len(mxfp4, ROWS, COLS, &data_len))) return fail(rc, "vcvt_mx_data_len");
    if ((rc = vcvt_mx_scales_len(mxfp4, ROWS, COLS, &scales_len))) return fail(rc, "scales_len");
    printf("%d x %d values: %zu bytes of block_mxfp4, %zu separate scale bytes\n", ROWS, COLS,
           data_len, scales_len);

    float w[ROWS * COLS];
    static const float row_scale[ROWS] = {1.0f, 0.01f, 300.0f};
    for (int i = 0; i < ROWS * COLS; i++)
        w[i] = cosf((float)i * 0.21f) * (float)(1 + i % 7) * row_scale[i / COLS];
    uint8_t *blocks = malloc(data_len);
    uint16_t *out = malloc(sizeof(uint16_t) * ROWS * COLS);
    if (!blocks || !out) return 1;
    /* The ggml layout keeps the scales in the blocks: no scale buffer (NULL, 0). */
    if ((rc = vcvt_mx_quantize(mxfp4, w, VCVT_F32, ROWS, COLS, blocks, data_len, NULL, 0)))
        return fail(rc, "vcvt_mx_quantize");

    /* The conversion this example is about: block_mxfp4 rows -> BF16. */
    if ((rc = vcvt_mx_dequantize(mxfp4, blocks, data_len, NULL, 0, ROWS, COLS, out, VCVT_BF16)))
        return fail(rc, "vcvt_mx_dequantize");

    for (int r = 0; r < ROWS; r++) {
        for (int b = 0; b < COLS / 32; b++) {
            const uint8_t *blk = blocks + (size_t)(r * (COLS / 32) + b) * 17;
            float d = ldexpf(1.0f, (int)blk[0] - 128);
            for (int j = 0; j < 32; j++) {
                int q = j < 16 ? blk[1 + j] & 0xF : blk[1 + j - 16] >> 4;
                float want = (float)KVALUES[q] * d; /* exact: a small integer times 2^k */
                float got = bf16_to_f32(out[r * COLS + b * 32 + j]);
                if (got != want) {
                    fprintf(stderr, "row %d value %d: got %g, the block says %g\n", r,
                            b * 32 + j, got, want);
                    return 1;
                }
            }
        }
        printf("row %d: scale bytes %3u %3u %3u; bf16 %g %g %g ... (f32 input %g %g %g)\n", r,
               blocks[r * 51], blocks[r * 51 + 17], blocks[r * 51 + 34],
               bf16_to_f32(out[r * COLS]), bf16_to_f32(out[r * COLS + 1]),
               bf16_to_f32(out[r * COLS + 2]), w[r * COLS], w[r * COLS + 1], w[r * COLS + 2]);
    }
    printf("every bf16 value equals its block decoded by hand\n");
    free(blocks);
    free(out);
    return 0;
}
