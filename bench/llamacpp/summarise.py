#!/usr/bin/env python3
"""Medians per (file, configuration, phase) from side-by-side.sh's runs.tsv, and the ratios ours / llama.cpp.

First, at equal context: ours with FD-KVC (budget 256) against llama.cpp at depth DEPTH (default 256),
per file and phase, against llama.cpp's better flash-attention setting there (of the -fa settings in
the file, the one with the higher median). Paired ratios are ours / llama.cpp within each round (the
runs minutes apart, so that the machine's drift over the hour hits both), with their median, a 95%
percentile bootstrap interval of that median (10,000 resamples of the rounds, fixed seed) and the
rounds where ours >= llama.cpp; the stricter column pairs each round with the better of llama.cpp's
settings in that same round. Then every configuration of ours against every one of llama.cpp's, and
the medians of every configuration.

Configurations: ours-NAME, ours-NAME+copied (the weights read into private memory); llama.cpp-faF-dD
and llama.cpp-faF-lmMODE-dD (side-by-side.sh runs each -fa setting F, with llama-bench's default load
mode, auto (mapped), and the modes LM asks for, e.g. none (read into memory), at each depth D; llama.cpp-dD-faF is read alike); llama.cpp-dD (older runs.tsv files: llama-bench's
default, -fa auto). "Better" and "best" are over all of llama.cpp's settings at the depth.
usage: bench/llamacpp/summarise.py OUT_DIR/runs.tsv [DEPTH]"""
import math
import random
import re
import statistics
import sys
from collections import defaultdict


def fail(message):
    print("summarise.py: " + message, file=sys.stderr)
    sys.exit(2)


if len(sys.argv) not in (2, 3):
    fail("usage: bench/llamacpp/summarise.py OUT_DIR/runs.tsv [DEPTH]")
depth = sys.argv[2] if len(sys.argv) == 3 else "256"
if not depth.isdigit():
    fail(f"DEPTH must be a whole number of tokens, got {depth[:40]!r}")
depth = str(int(depth))
try:
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = f.read().splitlines()
except OSError as e:
    fail(f"cannot read {sys.argv[1]}: {e.strerror}")
except UnicodeDecodeError as e:
    fail(f"{sys.argv[1]} is not UTF-8 text (byte {e.start}): not a runs.tsv")
if not lines:
    fail(f"{sys.argv[1]} holds no runs")
LLAMA = re.compile(r"llama\.cpp-(?:fa(\d+)(?:-lm([a-z+]+))?-)?d(\d+)(?:-fa(\d+))?")
runs = defaultdict(list)
by_round = {}
for number, line in enumerate(lines, 1):
    fields = line.split("\t")
    if len(fields) != 5:
        fail(f"{sys.argv[1]} line {number}: expected 5 tab-separated fields, got {len(fields)}")
    r, name, conf, phase, text = fields
    if not (conf.startswith("ours-") and len(conf) > 5 or LLAMA.fullmatch(conf)):
        fail(f"{sys.argv[1]} line {number}: configuration must be ours-NAME, llama.cpp-faF-dDEPTH or llama.cpp-dDEPTH, got {conf[:40]!r}")
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


def fa_of(conf):
    """The -fa setting of a llama.cpp configuration (either label order), None for -fa auto."""
    m = LLAMA.fullmatch(conf)
    return m.group(1) if m.group(1) is not None else m.group(4)


def lm_of(conf):
    """llama-bench's load mode (-lm) of a configuration: the label's, else auto (its default)."""
    m = LLAMA.fullmatch(conf)
    return "auto" if m.group(2) is None else m.group(2)


def llama_key(conf):
    """(depth, -fa setting; -1 for -fa auto, then load mode, auto first) of a llama.cpp configuration, for ordering."""
    fa = fa_of(conf)
    return int(LLAMA.fullmatch(conf).group(3)), -1 if fa is None else int(fa), lm_of(conf) != "auto", lm_of(conf)


def fa_label(conf):
    fa = fa_of(conf)
    return ("-fa auto" if fa is None else "-fa " + fa) + ("" if lm_of(conf) == "auto" else " -lm " + lm_of(conf))


ours = sorted({k[1] for k in runs if k[1].startswith("ours-")})
refs = sorted({k[1] for k in runs if k[1].startswith("llama.cpp")}, key=llama_key)
at_depth = [c for c in refs if llama_key(c)[0] == int(depth)]


def rounds_of(name, conf, phase):
    return {k[0] for k in by_round if k[1:] == (name, conf, phase)}


def paired(name, o, r, phase):
    """Per-round ratios ours / llama.cpp, for the rounds that have both runs."""
    common = sorted(rounds_of(name, o, phase) & rounds_of(name, r, phase))
    return [by_round[(x, name, o, phase)] / by_round[(x, name, r, phase)] for x in common]


def bootstrap_median(values, resamples=10000, seed=1):
    rnd = random.Random(seed)
    meds = sorted(statistics.median(rnd.choices(values, k=len(values))) for _ in range(resamples))
    return meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def interval(v):
    if not v:
        return "n/a"
    lo, hi = bootstrap_median(v)
    wins = sum(1 for x in v if x >= 1)
    return f"**{statistics.median(v):.2f}** [{lo:.2f}, {hi:.2f}], {wins}/{len(v)}"


def equal_context():
    """ours-fdkvc (each weight placement) against llama.cpp at the depth, its best setting per file and phase."""
    print(f"At equal context: ours (fdkvc, budget 256) against llama.cpp at depth {depth}, its best "
          "setting per file and phase (higher median); paired ratio ours / llama.cpp: "
          "median [95% bootstrap interval], rounds where ours >= llama.cpp:")
    print()
    print("| file | phase | ours | ours tok/s | " + " | ".join(f"llama.cpp {fa_label(c)} tok/s" for c in at_depth)
          + " | better | ours / better | ours / the round's better |")
    print("|---|---|---|---|" + "---|" * len(at_depth) + "---|---|---|")
    for n in names:
        for phase, o in [(ph, o) for ph in ("decode", "prefill") for o in ours if o == "ours-fdkvc" or o.startswith("ours-fdkvc+")]:
            refs_here = [c for c in at_depth if (n, c, phase) in runs]
            if (n, o, phase) not in runs or not refs_here:
                continue
            best = max(refs_here, key=lambda c: med[(n, c, phase)])
            cells = [f"{med[(n, c, phase)]:.1f}" if (n, c, phase) in runs else "n/a" for c in at_depth]
            # the stricter pairing: each round against whichever setting was faster in that round
            strict = []
            for x in sorted(rounds_of(n, o, phase)):
                theirs = [by_round[(x, n, c, phase)] for c in refs_here if (x, n, c, phase) in by_round]
                if theirs:
                    strict.append(by_round[(x, n, o, phase)] / max(theirs))
            weights = o.split("+")[1] if "+" in o else "mapped"
            print(f"| {n} | {phase} | {weights} | {med[(n, o, phase)]:.1f} | " + " | ".join(cells)
                  + f" | {fa_label(best)} | {interval(paired(n, o, best, phase))} | {interval(strict)} |")


def table(title, cell):
    """One row per file, phase and configuration of ours that has runs; one cell per llama.cpp configuration."""
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


if any(o == "ours-fdkvc" or o.startswith("ours-fdkvc+") for o in ours) and at_depth:
    equal_context()
    print()
table("Ratios of medians, ours / llama.cpp (ours tok/s / llama.cpp tok/s):", ratio_of_medians)
print()
table("Paired ratios, ours / llama.cpp within each round: median [95% bootstrap interval of the median], rounds where ours >= llama.cpp:",
      lambda n, o, r, phase: interval(paired(n, o, r, phase)))
print()
print("| file | configuration | phase | median tok/s | min-max | runs |")
print("|---|---|---|---|---|---|")
for k in sorted(runs):
    print(f"| {k[0]} | {k[1]} | {k[2]} | {med[k]:.1f} | {rng[k][0]:.1f}-{rng[k][1]:.1f} | {len(runs[k])} |")
