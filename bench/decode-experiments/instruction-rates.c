/*
 * One core's rate of the 512-bit integer and float operations a decode kernel is made of: twelve
 * independent chains of one operation, 10^8 rounds, in G operations per second. The Vector API
 * reaches vpmullw, vpaddw, vpand, vpsrlw and the FMA; vpmaddwd, vpmaddubsw and the VNNI dot
 * products (vpdpwssd, vpdpbusd) are llama.cpp's and have no Vector API operation. docs/benchmarks.md
 * ("Where the 1B decode's time goes at two threads") has the figures.
 *
 *   gcc -O2 -mavx512f -mavx512bw -mavx512vnni bench/decode-experiments/instruction-rates.c -o /tmp/instruction-rates
 *   /tmp/instruction-rates
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

#define ROUNDS 100000000L
/* Twelve chains of OP, kept in registers (the empty asm stops the compiler folding them). */
#define RATE(name, OP) { \
    __m512i a0 = _mm512_set1_epi16(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0; \
    __m512i k = _mm512_set1_epi16(3); \
    double t0 = now(); \
    for (long i = 0; i < ROUNDS; i++) { \
        OP(a0); OP(a1); OP(a2); OP(a3); OP(a4); OP(a5); OP(a6); OP(a7); OP(a8); OP(a9); OP(a10); OP(a11); \
        __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11)); \
    } \
    double t = now() - t0; \
    __m512i s = _mm512_add_epi32(a0, _mm512_add_epi32(a1, a11)); \
    printf("%-10s %5.2f G/s  (%d)\n", name, ROUNDS * 12 / t / 1e9, _mm512_reduce_add_epi32(s)); }

#define MULLO(x) x = _mm512_mullo_epi16(x, k)
#define ADDW(x) x = _mm512_add_epi16(x, k)
#define AND(x) x = _mm512_and_si512(x, k)
#define SRLW(x) x = _mm512_srli_epi16(x, 4)
/* The FMA on normal floats (x = x * 0.9999 + 0.0001, which tends to 1): the integer lanes read as
 * floats are subnormal, and Intel's cores take a slow assist for those (0.02 G/s on a Xeon 207). */
#define FMA(x) x = _mm512_castps_si512(_mm512_fmadd_ps(_mm512_castsi512_ps(x), kf, cf))
#define MADDWD(x) x = _mm512_madd_epi16(x, k)
#define MADDUBSW(x) x = _mm512_maddubs_epi16(x, k)
#define DPWSSD(x) x = _mm512_dpwssd_epi32(x, x, k)
#define DPBUSD(x) x = _mm512_dpbusd_epi32(x, x, k)

int main(void) {
    const __m512 kf = _mm512_set1_ps(0.9999f), cf = _mm512_set1_ps(0.0001f);
    RATE("vpmullw", MULLO) RATE("vpaddw", ADDW) RATE("vpand", AND) RATE("vpsrlw", SRLW) RATE("fma", FMA)
    RATE("vpmaddwd", MADDWD) RATE("vpmaddubsw", MADDUBSW) RATE("vpdpwssd", DPWSSD) RATE("vpdpbusd", DPBUSD)
    return 0;
}
