#!/usr/bin/env python3
"""Per step, the largest |difference| between two logit dumps (logits.c's format: STEP then every logit).
usage: logit-diff.py A.txt B.txt   prints one line: each step's max |A - B|, then the maximum."""
import sys


def load(path):
    with open(path) as f:
        return [list(map(float, line.split()[1:])) for line in f if line.strip()]


a, b = load(sys.argv[1]), load(sys.argv[2])
if len(a) != len(b):
    sys.exit(f"{sys.argv[1]} has {len(a)} steps, {sys.argv[2]} {len(b)}")
steps = [max(abs(x - y) for x, y in zip(r, s)) for r, s in zip(a, b)]
print(" ".join(f"{d:.3f}" for d in steps), f"| max {max(steps):.4f}")
