// How fast two threads read memory of each kind this host gives a process: a region of SIZE MiB
// mapped as KIND, every page written once (not for a file), then eight passes that sum it with
// 64-byte AVX-512 loads, THREADS threads over contiguous slices, each pass's GB/s printed.
// KIND: anon4k (anonymous, MADV_NOHUGEPAGE, as engine.tensor.AnonymousMemory), anon2m
// (anonymous, MADV_HUGEPAGE before the first write), memfd (a shared memory file), or the path
// of a file (mapped read-only, as a model file is).
//   gcc -O2 -march=native -pthread fresh-memory.c -o fresh-memory
//   for k in anon4k anon2m memfd llama-3.2-1b-Q8_0.gguf; do ./fresh-memory $k 1200 2; done
#define _GNU_SOURCE
#include <fcntl.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct { const char *p; size_t n; int sum; } slice;

// two accumulators, so that the adds are not one chain; the sum is printed nowhere but kept
static void *sum(void *arg) {
    slice *s = arg;
    __m512i a = _mm512_setzero_si512(), b = a;
    for (size_t i = 0; i < s->n; i += 128) {
        a = _mm512_add_epi32(a, _mm512_load_si512(s->p + i));
        b = _mm512_add_epi32(b, _mm512_load_si512(s->p + i + 64));
    }
    s->sum = _mm512_reduce_add_epi32(_mm512_add_epi32(a, b));
    return NULL;
}

static double pass(const char *p, size_t n, int threads) {
    pthread_t th[16];
    slice s[16];
    double t0 = now();
    for (int t = 0; t < threads; t++) {
        s[t] = (slice) {p + n / threads * t, n / threads, 0};
        pthread_create(&th[t], NULL, sum, &s[t]);
    }
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    return n / (now() - t0) / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: fresh-memory anon4k|anon2m|memfd|FILE SIZE_MIB THREADS\n"); return 2; }
    const char *kind = argv[1];
    size_t n = (size_t) atol(argv[2]) << 20;
    int threads = atoi(argv[3]);
    if (n == 0 || threads < 1 || threads > 16 || n % (128 * (size_t) threads)) { fprintf(stderr, "SIZE_MIB > 0, THREADS 1-16\n"); return 2; }
    char *p;
    int file = strcmp(kind, "anon4k") && strcmp(kind, "anon2m") && strcmp(kind, "memfd");
    if (!strcmp(kind, "memfd")) {
        int fd = memfd_create("fresh-memory", 0);
        if (fd < 0 || ftruncate(fd, n)) { perror("memfd"); return 1; }
        p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    } else if (file) {
        int fd = open(kind, O_RDONLY);
        if (fd < 0) { perror(kind); return 2; }
        if (lseek(fd, 0, SEEK_END) < (off_t) n) { fprintf(stderr, "%s is smaller than %s MiB\n", kind, argv[2]); return 2; }
        p = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
    } else {
        p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) madvise(p, n, strcmp(kind, "anon2m") ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
    }
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    double t0 = now();
    if (!file) for (size_t i = 0; i < n; i += 4096) p[i] = (char) i;
    printf("%s: first writes %.2f s; passes, GB/s:", kind, now() - t0);
    for (int k = 0; k < 8; k++) printf(" %.1f", pass(p, n, threads));
    printf("\n");
    return 0;
}
