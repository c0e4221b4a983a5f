/*
 * Does a product's arithmetic overlap its weights' reads from memory? Times one pass over 800 MiB
 * of weights (from memory) against the same work over 256 KiB repeated to the same total (from
 * L2), one thread, and prints both beside their sum and their maximum: a time near the maximum
 * overlaps, one near the sum does not. docs/benchmarks.md ("The x loads kept the reads from
 * overlapping") has the figures.
 *
 *   gcc -O2 -march=native bench/decode-experiments/overlap.c -o /tmp/overlap
 *   /tmp/overlap 144 4   # Q4_K's shape: 144-byte super-blocks, each 16 AND-convert-FMA triples
 *                        # whose x is a 64-byte load from L1, x 4 floats (16 bytes) off 64-byte
 *                        # alignment, as a Java float[]'s data: each x load spans two lines
 *   /tmp/overlap 144 0   # the same with x aligned
 *   /tmp/overlap 128 0   # the nibbles in 128-byte blocks, the 16 header bytes in a run of their own
 *   /tmp/overlap fma 16  # per 64 bytes an AND, a conversion and 16 FMAs on registers, no x (8, 16
 *                        # or 32 FMAs)
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static volatile float sink;

/* Per 64 bytes of weights: an AND, a conversion and K FMAs into eight accumulators, no x. */
#define FMA_PASS(K) \
    static __attribute__((noinline)) float fma_pass##K(const unsigned char *p, size_t n) { \
        __m512 acc[8]; \
        for (int i = 0; i < 8; i++) acc[i] = _mm512_setzero_ps(); \
        for (size_t i = 0; i < n; i += 64) { \
            __m512 f = _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_loadu_si512(p + i), _mm512_set1_epi32(15))); \
            _Pragma("GCC unroll 32") for (int j = 0; j < K; j++) acc[j & 7] = _mm512_fmadd_ps(f, _mm512_set1_ps(1.0f + j), acc[j & 7]); \
        } \
        __m512 s = acc[0]; \
        for (int i = 1; i < 8; i++) s = _mm512_add_ps(s, acc[i]); \
        return _mm512_reduce_add_ps(s); \
    }
FMA_PASS(8)
FMA_PASS(16)
FMA_PASS(32)

static float fma_pass(const unsigned char *p, size_t n, int k) {
    return k == 8 ? fma_pass8(p, n) : k == 16 ? fma_pass16(p, n) : fma_pass32(p, n);
}

/* Eight nibble masks of one 64-byte load, each converted and multiplied by its own 16 x. */
static inline void nibbles(__m512i v, const float *x, __m512 *a0, __m512 *a1) {
    __m512i h = _mm512_srli_epi32(v, 4);
    for (int m = 0; m < 4; m++) {
        __m512i mask = _mm512_set1_epi32(0xF << (8 * m));
        *a0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(v, mask)), _mm512_loadu_ps(x + 16 * m), *a0);
        *a1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(h, mask)), _mm512_loadu_ps(x + 64 + 16 * m), *a1);
    }
}

static __attribute__((noinline)) float kernel_pass(const unsigned char *w, const unsigned char *hdr, size_t blocks, int block, const float *xp) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int o = 0;
    for (size_t b = 0; b < blocks; b++) {
        const unsigned char *q = block == 144 ? w + b * 144 + 16 : w + b * 128;
        __m128i h = _mm_loadu_si128((const __m128i *) (block == 144 ? w + b * 144 + 4 : hdr + b * 16));
        nibbles(_mm512_loadu_si512(q), xp + o, &a0, &a1);
        nibbles(_mm512_loadu_si512(q + 64), xp + o + 128, &a2, &a3);
        a0 = _mm512_add_ps(a0, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(h)));
        o = (o + 256) & 2047;
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

int main(int argc, char **argv) {
    int fma = argc == 3 && strcmp(argv[1], "fma") == 0;
    int block = argc == 3 && !fma ? atoi(argv[1]) : 0, k = fma ? atoi(argv[2]) : 0, xoff = argc == 3 && !fma ? atoi(argv[2]) : -1;
    if (fma ? (k != 8 && k != 16 && k != 32) : ((block != 144 && block != 128) || xoff < 0 || xoff > 60)) {
        fprintf(stderr, "usage: overlap 144|128 XOFF (floats, 0-60) | overlap fma 8|16|32\n");
        return 2;
    }
    size_t big = 800ul << 20, small = 256 << 10, unit = fma ? 64 : (size_t) block;
    unsigned char *w = aligned_alloc(4096, big + 4096), *hdr = aligned_alloc(4096, big / 8 + 4096);
    float *x = aligned_alloc(64, (2048 + 64) * sizeof(float));
    memset(w, 1, big + 4096); memset(hdr, 1, big / 8 + 4096);
    for (int i = 0; i < 2048 + 64; i++) x[i] = 0.5f;
    for (int round = 0; round < 3; round++) {
        double t0 = now();
        sink = fma ? fma_pass(w, big, k) : kernel_pass(w, hdr, big / unit, block, x + xoff);
        double mem = now() - t0;
        t0 = now();
        for (size_t r = 0; r < big / small; r++) sink = fma ? fma_pass(w, small, k) : kernel_pass(w, hdr, small / unit, block, x + xoff);
        double l2 = now() - t0, read = big / 29e9;   /* one core reads about 29 GB/s here */
        if (fma) printf("%d FMAs a line", k);
        else printf("block %d, x %d floats off", block, xoff);
        printf(": from memory %.1f ms (%.1f GB/s), from L2 %.1f ms; sum %.1f, max %.1f\n",
               mem * 1e3, big / mem / 1e9, l2 * 1e3, (l2 + read) * 1e3, (l2 > read ? l2 : read) * 1e3);
    }
    return 0;
}
