#!/usr/bin/env bash
# Ours and llama.cpp on the same GGUF files, alternating, ROUNDS rounds; prints every raw line to
# OUT/raw.log and the per-run figures to OUT/runs.tsv (medians: summarise.py).
# usage: bench/llamacpp/side-by-side.sh LLAMA_BUILD_DIR OUT_DIR ROUNDS FILE...
# Ours: ./fdkvc bench --model FILE --threads 2 --budget 256 --prompt-tokens 64 --gen-tokens 32
#       --turns 5 --warmup 2 --jit-warmup 2  (full: context 192-480 over the reported turns;
#       fdkvc: 256 entries + the turn's own tokens)
# llama.cpp: llama-bench -m FILE -t 2 -r 1 -p 64 -n 32 -d 0,256,512  (tg32 and pp64 at those depths)
set -euo pipefail
lb=$1/bin/llama-bench out=$2 rounds=$3
shift 3
mkdir -p "$out"
: > "$out/runs.tsv"
for r in $(seq 1 "$rounds"); do
  for f in "$@"; do
    name=$(basename "$f" .gguf)
    echo "== round $r $name ours; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
    ./fdkvc bench --model "$f" --threads 2 --budget 256 --prompt-tokens 64 --gen-tokens 32 \
        --turns 5 --warmup 2 --jit-warmup 2 2>&1 | tee -a "$out/raw.log" | awk -v r="$r" -v n="$name" \
        '$1 ~ /^full|^fdkvc/ { split($1, p, "("); print r "\t" n "\tours-" p[1] "\tprefill\t" $2; print r "\t" n "\tours-" p[1] "\tdecode\t" $3 }' >> "$out/runs.tsv"
    echo "== round $r $name llama.cpp; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
    "$lb" -m "$f" -t 2 -r 1 -p 64 -n 32 -d 0,256,512 -o csv 2>/dev/null | tee -a "$out/raw.log" | awk -F, -v r="$r" -v n="$name" '
      NR == 1 { for (i = 1; i <= NF; i++) { gsub(/"/, "", $i); col[$i] = i }; next }
      { gsub(/"/, ""); np = $col["n_prompt"]; ng = $col["n_gen"]; d = $col["n_depth"]; ts = $col["avg_ts"];
        print r "\t" n "\tllama.cpp-d" d "\t" (np > 0 ? "prefill" : "decode") "\t" ts }' >> "$out/runs.tsv"
  done
done
