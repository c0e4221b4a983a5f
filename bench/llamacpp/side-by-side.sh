#!/usr/bin/env bash
# Ours and llama.cpp on the same GGUF files, alternating, ROUNDS rounds; appends every raw line to
# OUT/raw.log and the per-run figures to OUT/runs.tsv (medians and ratios: summarise.py).
# usage: [T=2 P=64 N=32 TURNS=4 WARMUP=1 JITW=2 DEPTHS=0,256,512 FA=] \
#        bench/llamacpp/side-by-side.sh LLAMA_BUILD_DIR OUT_DIR ROUNDS FILE...
# Ours:      ./fdkvc bench --model FILE --threads T --budget 256 --prompt-tokens P --gen-tokens N
#                --turns TURNS --warmup WARMUP --jit-warmup JITW
#            (fdkvc: 256 entries + the turn's own tokens; full: the context grows turn by turn)
# llama.cpp: llama-bench -m FILE -t T -r 1 -p P -n N -d DEPTHS -o csv
# Steady state: TURNS=10 WARMUP=4 JITW=8 (docs/benchmarks.md); with fewer turns the reported
# ones include the JIT compiling the eviction paths, on the same cores as the forward pass.
# llama-bench runs with its default flash attention (-fa auto), or with FA's settings (FA=0,1: both,
# each labelled llama.cpp-dDEPTH-faF); docs/benchmarks.md compares against the better of -fa 0 and 1.
set -euo pipefail
lb=$1/bin/llama-bench out=$2 rounds=$3
shift 3
T=${T:-2} P=${P:-64} N=${N:-32} TURNS=${TURNS:-4} WARMUP=${WARMUP:-1} JITW=${JITW:-2} DEPTHS=${DEPTHS:-0,256,512} FA=${FA:-}
mkdir -p "$out"
touch "$out/runs.tsv"
./fdkvc --version >/dev/null   # build the jar first, so that no run measures (or parses) a build
for r in $(seq 1 "$rounds"); do
  for f in "$@"; do
    name=$(basename "$f" .gguf)
    echo "== round $r $name ours t=$T; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
    ./fdkvc bench --model "$f" --threads "$T" --budget 256 --prompt-tokens "$P" --gen-tokens "$N" \
        --turns "$TURNS" --warmup "$WARMUP" --jit-warmup "$JITW" 2>&1 | tee -a "$out/raw.log" | awk -v r="$r" -v n="$name" \
        '$1 ~ /^(full|fdkvc)\(/ { split($1, p, "("); print r "\t" n "\tours-" p[1] "\tprefill\t" $2; print r "\t" n "\tours-" p[1] "\tdecode\t" $3 }' >> "$out/runs.tsv"
    echo "== round $r $name llama.cpp t=$T; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
    "$lb" -m "$f" -t "$T" -r 1 -p "$P" -n "$N" -d "$DEPTHS" ${FA:+-fa "$FA"} -o csv 2>/dev/null | tee -a "$out/raw.log" | awk -F, -v r="$r" -v n="$name" -v fa_set="$FA" '
      NR == 1 { for (i = 1; i <= NF; i++) { gsub(/"/, "", $i); col[$i] = i }; next }
      { gsub(/"/, ""); np = $col["n_prompt"]; d = $col["n_depth"]; ts = $col["avg_ts"];
        fa = fa_set != "" ? "-fa" $col["flash_attn"] : "";
        print r "\t" n "\tllama.cpp-d" d fa "\t" (np > 0 ? "prefill" : "decode") "\t" ts }' >> "$out/runs.tsv"
  done
done
echo "== done; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
