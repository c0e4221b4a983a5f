#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <fcntl.h>
#include <unistd.h>
// The pages behind a running process's mappings whose /proc/PID/maps line contains PATTERN (the
// decode copies' files: "/tmp/#" for scratch-files.patch's unnamed files, the directory for
// copy-files.patch's): how many are present, in large folios (/proc/kpageflags' compound head
// or tail bits), dirty, and how often the next page of a mapping is the physically next frame.
// Root only (page frame numbers). Usage: copy-pages PID PATTERN
int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: copy-pages PID PATTERN\n"); return 2; }
  char path[64]; snprintf(path, sizeof path, "/proc/%s/maps", argv[1]);
  FILE *m = fopen(path, "r"); snprintf(path, sizeof path, "/proc/%s/pagemap", argv[1]);
  int pm = open(path, O_RDONLY), kf = open("/proc/kpageflags", O_RDONLY);
  if (!m || pm < 0 || kf < 0) { perror("copy-pages: /proc/PID/maps, /proc/PID/pagemap or /proc/kpageflags (root only)"); return 2; }
  char line[512]; size_t pages = 0, present = 0, compound = 0, contig = 0, runs = 0, dirty = 0, maps = 0;
  while (fgets(line, sizeof line, m)) {
    if (!strstr(line, argv[2])) continue;
    maps++;
    unsigned long a, b; sscanf(line, "%lx-%lx", &a, &b);
    uint64_t prev = 0; int have = 0;
    for (unsigned long p = a; p < b; p += 4096) {
      uint64_t e; pread(pm, &e, 8, (off_t)(p / 4096) * 8); pages++;
      if (!(e >> 63)) { have = 0; continue; }
      present++;
      uint64_t pfn = e & ((1ULL << 55) - 1), f = 0; pread(kf, &f, 8, pfn * 8);
      if (f & ((1ULL << 15) | (1ULL << 16))) compound++;
      if (f & (1ULL << 4)) dirty++;
      if (have && pfn == prev + 1) contig++; else runs++;
      prev = pfn; have = 1;
    }
  }
  if (present == 0) { fprintf(stderr, "copy-pages: no present pages in mappings matching '%s'\n", argv[2]); return 1; }
  printf("%zu mappings, pages %zu, present %zu, in large folios %.1f%%, dirty %.1f%%, next physically next %.1f%%, runs %zu (mean %.1f)\n",
    maps, pages, present, 100.0 * compound / present, 100.0 * dirty / present, 100.0 * contig / present, runs, (double)present / runs);
  return 0;
}
