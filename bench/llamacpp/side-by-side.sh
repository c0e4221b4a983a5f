#!/usr/bin/env bash
# Ours and llama.cpp on the same GGUF files, alternating, ROUNDS rounds; appends every raw line to
# OUT/raw.log and the per-run figures to OUT/runs.tsv (medians, llama.cpp's better configuration
# and the paired ratios: summarise.py).
# usage: [T=2 P=64 N=32 TURNS=4 WARMUP=1 JITW=2 DEPTHS=0,256,512 FA=0,1 BUDGETED_ONLY=] \
#        bench/llamacpp/side-by-side.sh LLAMA_BUILD_DIR OUT_DIR ROUNDS FILE...
# Ours:      ./fdkvc bench --model FILE --threads T --budget 256 --prompt-tokens P --gen-tokens N
#                --turns TURNS --warmup WARMUP --jit-warmup JITW
#            (fdkvc: 256 entries + the turn's own tokens; full: the context grows turn by turn;
#            BUDGETED_ONLY=1 adds --budgeted-only: fdkvc alone, the configuration at equal context)
# llama.cpp: llama-bench -m FILE -t T -r 1 -p P -n N -d DEPTHS -fa FA -o csv
#            once per flash-attention setting in FA (llama-bench's default, -fa auto, turns it on,
#            which is not llama.cpp's faster setting at every depth on every machine), so that
#            summarise.py can compare against the better of -fa 0 and -fa 1 per file and phase.
# Steady state: TURNS=10 WARMUP=4 JITW=8 (docs/benchmarks.md); with fewer turns the reported
# ones include the JIT compiling the eviction paths, on the same cores as the forward pass.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: bench/llamacpp/side-by-side.sh LLAMA_BUILD_DIR OUT_DIR ROUNDS FILE..." >&2; exit 2; }
lb=$1/bin/llama-bench out=$2 rounds=$3
shift 3
T=${T:-2} P=${P:-64} N=${N:-32} TURNS=${TURNS:-4} WARMUP=${WARMUP:-1} JITW=${JITW:-2} DEPTHS=${DEPTHS:-0,256,512} FA=${FA:-0,1} BUDGETED_ONLY=${BUDGETED_ONLY:-}
[ -x "$lb" ] || { echo "side-by-side: no llama-bench at $lb (see bench/llamacpp/README.md)" >&2; exit 2; }
for f in "$@"; do [ -f "$f" ] || { echo "side-by-side: no model file $f" >&2; exit 2; }; done
mkdir -p "$out"
touch "$out/runs.tsv"
./fdkvc --version >/dev/null   # build the jar first, so that no run measures (or parses) a build
for r in $(seq 1 "$rounds"); do
  for f in "$@"; do
    name=$(basename "$f" .gguf)
    echo "== round $r $name ours t=$T; $(date -u +%H:%M:%S); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
    ./fdkvc bench --model "$f" --threads "$T" --budget 256 --prompt-tokens "$P" --gen-tokens "$N" \
        --turns "$TURNS" --warmup "$WARMUP" --jit-warmup "$JITW" ${BUDGETED_ONLY:+--budgeted-only} 2>&1 | tee -a "$out/raw.log" | awk -v r="$r" -v n="$name" \
        '$1 ~ /^(full|fdkvc)\(/ { split($1, p, "("); print r "\t" n "\tours-" p[1] "\tprefill\t" $2; print r "\t" n "\tours-" p[1] "\tdecode\t" $3 }' >> "$out/runs.tsv"
    for fa in ${FA//,/ }; do
      echo "== round $r $name llama.cpp t=$T fa=$fa; $(date -u +%H:%M:%S); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
      "$lb" -m "$f" -t "$T" -r 1 -p "$P" -n "$N" -d "$DEPTHS" -fa "$fa" -o csv 2>/dev/null | tee -a "$out/raw.log" | awk -F, -v r="$r" -v n="$name" -v fa="$fa" '
        NR == 1 { for (i = 1; i <= NF; i++) { gsub(/"/, "", $i); col[$i] = i }; next }
        { gsub(/"/, ""); np = $col["n_prompt"]; d = $col["n_depth"]; ts = $col["avg_ts"];
          print r "\t" n "\tllama.cpp-fa" fa "-d" d "\t" (np > 0 ? "prefill" : "decode") "\t" ts }' >> "$out/runs.tsv"
    done
  done
done
echo "== done; $(date -u +%H:%M:%S); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
