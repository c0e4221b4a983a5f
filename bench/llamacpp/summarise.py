#!/usr/bin/env python3
"""Medians per (file, configuration, phase) from side-by-side.sh's runs.tsv, and the ratios ours / llama.cpp:
the ratio of the medians, and the paired ratios (ours / llama.cpp within each round, the two runs minutes
apart, so that the machine's drift over the hour hits both) with their median and a 95% percentile
bootstrap interval of that median (10,000 resamples of the rounds, fixed seed).
usage: bench/llamacpp/summarise.py OUT_DIR/runs.tsv"""
import math
import random
import statistics
import sys
from collections import defaultdict


def fail(message):
    print("summarise.py: " + message, file=sys.stderr)
    sys.exit(2)


if len(sys.argv) != 2:
    fail("usage: bench/llamacpp/summarise.py OUT_DIR/runs.tsv")
try:
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = f.read().splitlines()
except OSError as e:
    fail(f"cannot read {sys.argv[1]}: {e.strerror}")
except UnicodeDecodeError as e:
    fail(f"{sys.argv[1]} is not UTF-8 text (byte {e.start}): not a runs.tsv")
if not lines:
    fail(f"{sys.argv[1]} holds no runs")
runs = defaultdict(list)
by_round = {}
for number, line in enumerate(lines, 1):
    fields = line.split("\t")
    if len(fields) != 5:
        fail(f"{sys.argv[1]} line {number}: expected 5 tab-separated fields, got {len(fields)}")
    r, name, conf, phase, text = fields
    depth, _, fa = conf[len("llama.cpp-d"):].partition("-fa")
    if not (conf.startswith("ours-") or conf.startswith("llama.cpp-d") and depth.isdigit() and (fa == "" or fa.isdigit())):
        fail(f"{sys.argv[1]} line {number}: configuration must be ours-NAME, llama.cpp-dDEPTH or llama.cpp-dDEPTH-faF, got {conf[:40]!r}")
    if phase not in ("decode", "prefill"):
        fail(f"{sys.argv[1]} line {number}: phase must be decode or prefill, got {phase[:40]!r}")
    try:
        value = float(text)
    except ValueError:
        fail(f"{sys.argv[1]} line {number}: tok/s is not a number: {text[:40]!r}")
    if not (value > 0 and math.isfinite(value)):
        fail(f"{sys.argv[1]} line {number}: tok/s must be a positive finite number, got {text[:40]!r}")
    if (r, name, conf, phase) in by_round:
        fail(f"{sys.argv[1]} line {number}: round {r} of {name} {conf} {phase} appears twice (two runs into one directory?)")
    runs[(name, conf, phase)].append(value)
    by_round[(r, name, conf, phase)] = value
med = {k: statistics.median(v) for k, v in runs.items()}
rng = {k: (min(v), max(v)) for k, v in runs.items()}
names = sorted({k[0] for k in runs})


ours = sorted({k[1] for k in runs if k[1].startswith("ours-")})
refs = sorted({k[1] for k in runs if k[1].startswith("llama.cpp")}, key=lambda c: (int(c.split("-d")[1].partition("-fa")[0]), c))


def table(title, cell):
    """One row per file, phase and configuration of ours that has runs; one cell per llama.cpp depth."""
    print(title)
    print()
    print("| file | phase | ours | " + " | ".join("vs " + r for r in refs) + " |")
    print("|---|---|---|" + "---|" * len(refs))
    for n in names:
        for phase in ("decode", "prefill"):
            for o in ours:
                if (n, o, phase) in runs:
                    print(f"| {n} | {phase} | {o[5:]} | " + " | ".join(cell(n, o, r, phase) for r in refs) + " |")


def ratio_of_medians(n, o, r, phase):
    a, b = med[(n, o, phase)], med.get((n, r, phase))
    return "n/a" if b is None else f"**{a / b:.2f}** ({a:.1f} / {b:.1f})"


def paired(name, o, r, phase):
    """Per-round ratios ours / llama.cpp, for the rounds that have both runs."""
    rounds = sorted({k[0] for k in by_round if k[1:] == (name, o, phase)} & {k[0] for k in by_round if k[1:] == (name, r, phase)})
    return [by_round[(x, name, o, phase)] / by_round[(x, name, r, phase)] for x in rounds]


def bootstrap_median(values, resamples=10000, seed=1):
    rnd = random.Random(seed)
    meds = sorted(statistics.median(rnd.choices(values, k=len(values))) for _ in range(resamples))
    return meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def paired_ratios(n, o, r, phase):
    v = paired(n, o, r, phase)
    if not v:
        return "n/a"
    lo, hi = bootstrap_median(v)
    wins = sum(1 for x in v if x >= 1)
    return f"**{statistics.median(v):.2f}** [{lo:.2f}, {hi:.2f}], {wins}/{len(v)}"


table("Ratios of medians, ours / llama.cpp (ours tok/s / llama.cpp tok/s):", ratio_of_medians)
print()
table("Paired ratios, ours / llama.cpp within each round: median [95% bootstrap interval of the median], rounds where ours >= llama.cpp:",
      paired_ratios)
print()
print("| file | configuration | phase | median tok/s | min-max | runs |")
print("|---|---|---|---|---|---|")
for k in sorted(runs):
    print(f"| {k[0]} | {k[1]} | {k[2]} | {med[k]:.1f} | {rng[k][0]:.1f}-{rng[k][1]:.1f} | {len(runs[k])} |")
