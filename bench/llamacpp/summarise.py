#!/usr/bin/env python3
"""Medians per (file, configuration, phase) from side-by-side.sh's runs.tsv, and the ratios ours / llama.cpp.
usage: bench/llamacpp/summarise.py OUT_DIR/runs.tsv"""
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
for line in open(sys.argv[1]):
    r, name, conf, phase, value = line.rstrip("\n").split("\t")
    runs[(name, conf, phase)].append(float(value))
med = {k: statistics.median(v) for k, v in runs.items()}
rng = {k: (min(v), max(v)) for k, v in runs.items()}
names = sorted({k[0] for k in runs})


def cell(name, ours, ref, phase):
    a, b = med.get((name, ours, phase)), med.get((name, ref, phase))
    if a is None or b is None:
        return "n/a"
    return f"**{a / b:.2f}** ({a:.1f} / {b:.1f})"


print("| file | decode: fdkvc 256 vs llama.cpp d256 | decode: full vs d256 | decode: full vs d512 "
      "| prefill 64: fdkvc vs d0 | prefill 64: fdkvc vs d512 |")
print("|---|---|---|---|---|---|")
for n in names:
    print(f"| {n} | {cell(n, 'ours-fdkvc', 'llama.cpp-d256', 'decode')} | {cell(n, 'ours-full', 'llama.cpp-d256', 'decode')} "
          f"| {cell(n, 'ours-full', 'llama.cpp-d512', 'decode')} | {cell(n, 'ours-fdkvc', 'llama.cpp-d0', 'prefill')} "
          f"| {cell(n, 'ours-fdkvc', 'llama.cpp-d512', 'prefill')} |")
print()
print("| file | configuration | phase | median tok/s | min-max | runs |")
print("|---|---|---|---|---|---|")
for k in sorted(runs):
    print(f"| {k[0]} | {k[1]} | {k[2]} | {med[k]:.1f} | {rng[k][0]:.1f}-{rng[k][1]:.1f} | {len(runs[k])} |")
