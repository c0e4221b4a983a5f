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


ours = sorted({k[1] for k in runs if k[1].startswith("ours-")})
refs = sorted({k[1] for k in runs if k[1].startswith("llama.cpp")}, key=lambda c: int(c.split("-d")[1]))
print("Ratios of medians, ours / llama.cpp (ours tok/s / llama.cpp tok/s):")
print()
print("| file | phase | ours | " + " | ".join("vs " + r for r in refs) + " |")
print("|---|---|---|" + "---|" * len(refs))
for n in names:
    for phase in ("decode", "prefill"):
        for o in ours:
            a = med.get((n, o, phase))
            if a is None:
                continue
            cells = []
            for r in refs:
                b = med.get((n, r, phase))
                cells.append("n/a" if b is None else f"**{a / b:.2f}** ({a:.1f} / {b:.1f})")
            print(f"| {n} | {phase} | {o[5:]} | " + " | ".join(cells) + " |")
print()
print("| file | configuration | phase | median tok/s | min-max | runs |")
print("|---|---|---|---|---|---|")
for k in sorted(runs):
    print(f"| {k[0]} | {k[1]} | {k[2]} | {med[k]:.1f} | {rng[k][0]:.1f}-{rng[k][1]:.1f} | {len(runs[k])} |")
