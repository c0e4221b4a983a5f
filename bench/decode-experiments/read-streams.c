/*
 * How fast threads read memory with a given number of weight streams each and a given amount of
 * Q4_K-like work per 64-byte line: a 1 GiB anonymous region in base pages, split into one half
 * per thread, each half into STREAMS contiguous parts read in lockstep (a line of each in turn),
 * every line taken through WORK steps of shift, AND, 16-bit multiply and add (0: one add). With
 * BLOCK (bytes, a multiple of 64), each stream is taken BLOCK bytes at a time, every block first
 * read by a dense pass (one load per line) and then worked from the caches. Prints six passes'
 * GB/s; the first pass also pays for the region's first reads. docs/benchmarks.md ("Where the 1B
 * decode's time goes at two threads") has the figures.
 *
 *   gcc -O2 -march=native bench/decode-experiments/read-streams.c -o /tmp/read-streams -lpthread
 *   /tmp/read-streams THREADS STREAMS WORK PREFETCH [BLOCK]   # e.g. 2 2 4 0; PREFETCH: bytes ahead, 0 none
 */
#define _GNU_SOURCE
#include <errno.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static const size_t SIZE = (size_t) 1 << 30;
static char *region;
static int threads, streams, work, prefetch;
static size_t block;
static volatile int sink;

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static void *pass(void *arg) {
    long id = (long) arg;
    size_t half = SIZE / threads, part = half / streams / 64 * 64;
    const char *base = region + id * half;
    __m512i acc[8], mask = _mm512_set1_epi16(0xF), x0 = _mm512_set1_epi32(0x00030002), x1 = _mm512_set1_epi32(0x00050004);
    for (int i = 0; i < 8; i++) acc[i] = _mm512_setzero_si512();
    __m512i dense = _mm512_setzero_si512();   // the dense pass's sum: a register of its own, no chain through acc
    size_t step = block ? block : part;
    for (size_t o0 = 0; o0 < part; o0 += step) {
      size_t end = o0 + step < part ? o0 + step : part;
      if (block) {
        for (int s = 0; s < streams; s++) {
            for (size_t o = o0; o < end; o += 64) dense = _mm512_add_epi32(dense, _mm512_load_si512(base + s * part + o));
        }
      }
      for (size_t o = o0; o < end; o += 64) {
        for (int s = 0; s < streams; s++) {
            const char *p = base + s * part + o;
            if (prefetch) _mm_prefetch(p + prefetch, _MM_HINT_T0);
            __m512i q = _mm512_load_si512(p);
            if (work == 0) acc[s & 7] = _mm512_add_epi32(acc[s & 7], q);
            for (int w = 0; w < work; w++) {
                __m512i n = _mm512_and_si512(_mm512_srli_epi16(q, 4 * w), mask);
                int a = (s * 4 + w) & 7;
                acc[a] = _mm512_add_epi16(acc[a], _mm512_mullo_epi16(n, (w & 1) ? x1 : x0));
            }
        }
      }
    }
    __m512i t = dense;
    for (int i = 0; i < 8; i++) t = _mm512_add_epi32(t, acc[i]);
    sink += _mm512_reduce_add_epi32(t);
    return NULL;
}

/* A whole decimal number in [0, LONG_MAX], the whole argument: 1, else 0 (garbage, a sign, a fraction, overflow). */
static int whole(const char *s, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0) return 0;
    *out = v;
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) { fprintf(stderr, "usage: read-streams THREADS STREAMS WORK PREFETCH [BLOCK]\n"); return 2; }
    long t, st, w, p, b = 0;
    int parsed = whole(argv[1], &t) && whole(argv[2], &st) && whole(argv[3], &w) && whole(argv[4], &p) && (argc == 5 || whole(argv[5], &b));
    if (!parsed || t < 1 || t > 16 || st < 1 || st > 64 || w > 4 || p > 1 << 20 || b % 64 != 0) {
        fprintf(stderr, "read-streams: THREADS 1-16, STREAMS 1-64, WORK 0-4, PREFETCH 0-1048576, BLOCK a multiple of 64 (0: none), each a whole number\n"); return 2;
    }
    threads = (int) t; streams = (int) st; work = (int) w; prefetch = (int) p; block = (size_t) b;
    region = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (region == MAP_FAILED) { perror("mmap"); return 1; }
    madvise(region, SIZE, MADV_NOHUGEPAGE);
    memset(region, 1, SIZE);
    for (int r = 0; r < 6; r++) {
        pthread_t th[16];
        double t0 = now();
        for (long i = 0; i < threads; i++) pthread_create(&th[i], NULL, pass, (void *) i);
        for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
        printf("%.1f ", SIZE / (now() - t0) / 1e9);
    }
    printf("GB/s  threads %d streams %d work %d prefetch %d block %zu\n", threads, streams, work, prefetch, block);
    return 0;
}
