#!/usr/bin/env bash
# Ours and llama.cpp on the same GGUF files, alternating, ROUNDS rounds; appends every raw line to
# OUT/raw.log and the per-run figures to OUT/runs.tsv (medians, llama.cpp's better configuration
# and the paired ratios: summarise.py).
# usage: [T=2 P=64 N=32 TURNS=4 WARMUP=1 JITW=2 DEPTHS=0,256,512 FA=0,1 LM=auto WEIGHTS=mapped BUDGETED_ONLY= DROP_CACHES=auto] \
#        bench/llamacpp/side-by-side.sh LLAMA_BUILD_DIR OUT_DIR ROUNDS FILE...
# Ours:      ./fdkvc bench --model FILE --threads T --budget 256 --prompt-tokens P --gen-tokens N
#                --turns TURNS --warmup WARMUP --jit-warmup JITW
#            (fdkvc: 256 entries + the turn's own tokens; full: the context grows turn by turn;
#            BUDGETED_ONLY=1 adds --budgeted-only: fdkvc alone, the configuration at equal context)
#            once per weight placement in WEIGHTS (mapped, copied: -Dfdkvc.weights, the file
#            mapped or read into private memory; a copied run is labelled ours-NAME+copied)
# llama.cpp: llama-bench -m FILE -t T -r 1 -p P -n N -d DEPTHS -fa FA -lm LM -o csv
#            once per flash-attention setting in FA and load mode in LM (llama-bench's default,
#            -fa auto, turns flash attention on, which is not llama.cpp's faster setting at every
#            depth on every machine; -lm auto maps the file, -lm none reads it into memory, as
#            ours' copied does), so that summarise.py compares against llama.cpp's best setting
#            per file and phase.
# DROP_CACHES: before each round the page cache is written back and dropped (sync; echo 1 >
#            /proc/sys/vm/drop_caches), so that every run maps or reads files freshly read into
#            memory: auto (the default) where that file is writable (root), 1 always (refused
#            where it is not writable), 0 never. On the EPYC Zen 5 VM a file cached before the
#            machine was last suspended and restored read 6-10x slower mapped, after a second
#            untouched, than the same file read afresh (docs/benchmarks.md).
# Steady state: TURNS=10 WARMUP=4 JITW=8 (docs/benchmarks.md); with fewer turns the reported
# ones include the JIT compiling the eviction paths, on the same cores as the forward pass.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: bench/llamacpp/side-by-side.sh LLAMA_BUILD_DIR OUT_DIR ROUNDS FILE..." >&2; exit 2; }
lb=$1/bin/llama-bench out=$2 rounds=$3
shift 3
T=${T:-2} P=${P:-64} N=${N:-32} TURNS=${TURNS:-4} WARMUP=${WARMUP:-1} JITW=${JITW:-2} DEPTHS=${DEPTHS:-0,256,512} FA=${FA:-0,1} LM=${LM:-auto} WEIGHTS=${WEIGHTS:-mapped} BUDGETED_ONLY=${BUDGETED_ONLY:-} DROP_CACHES=${DROP_CACHES:-auto}
[ -x "$lb" ] || { echo "side-by-side: no llama-bench at $lb (see bench/llamacpp/README.md)" >&2; exit 2; }
for f in "$@"; do [ -f "$f" ] || { echo "side-by-side: no model file $f" >&2; exit 2; }; done
for wm in ${WEIGHTS//,/ }; do case $wm in mapped|copied) ;; *) echo "side-by-side: WEIGHTS holds mapped and/or copied, got '$wm'" >&2; exit 2 ;; esac; done
for lm in ${LM//,/ }; do case $lm in auto|none|mmap|mlock|mmap+mlock|dio) ;; *) echo "side-by-side: LM holds llama-bench load modes (auto, none, mmap, mlock, mmap+mlock, dio), got '$lm'" >&2; exit 2 ;; esac; done
case $DROP_CACHES in
  auto) drop=$([ -w /proc/sys/vm/drop_caches ] && echo 1 || echo 0) ;;
  1) [ -w /proc/sys/vm/drop_caches ] || { echo "side-by-side: DROP_CACHES=1 needs a writable /proc/sys/vm/drop_caches (root)" >&2; exit 2; }; drop=1 ;;
  0) drop=0 ;;
  *) echo "side-by-side: DROP_CACHES is auto, 1 or 0, got '$DROP_CACHES'" >&2; exit 2 ;;
esac
mkdir -p "$out"
touch "$out/runs.tsv"
./fdkvc --version >/dev/null   # build the jar first, so that no run measures (or parses) a build
for r in $(seq 1 "$rounds"); do
  if [ "$drop" = 1 ]; then
    sync && echo 1 > /proc/sys/vm/drop_caches
    echo "== round $r: page cache dropped; $(date -u +%H:%M:%S)" | tee -a "$out/raw.log"
  fi
  for f in "$@"; do
    name=$(basename "$f" .gguf)
    for wm in ${WEIGHTS//,/ }; do
      suffix=$([ "$wm" = mapped ] && echo "" || echo "+$wm")
      echo "== round $r $name ours t=$T weights=$wm; $(date -u +%H:%M:%S); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
      FDKVC_JAVA_OPTS="${FDKVC_JAVA_OPTS:-} -Dfdkvc.weights=$wm" ./fdkvc bench --model "$f" --threads "$T" --budget 256 --prompt-tokens "$P" --gen-tokens "$N" \
          --turns "$TURNS" --warmup "$WARMUP" --jit-warmup "$JITW" ${BUDGETED_ONLY:+--budgeted-only} 2>&1 | tee -a "$out/raw.log" | awk -v r="$r" -v n="$name" -v s="$suffix" \
          '$1 ~ /^(full|fdkvc)\(/ { split($1, p, "("); print r "\t" n "\tours-" p[1] s "\tprefill\t" $2; print r "\t" n "\tours-" p[1] s "\tdecode\t" $3 }' >> "$out/runs.tsv"
    done
    for fa in ${FA//,/ }; do
      for lm in ${LM//,/ }; do
        # llama-bench's default load mode (auto: mapped) keeps the label of older runs: llama.cpp-faF-dD
        label=$([ "$lm" = auto ] && echo "" || echo "-lm$lm")
        echo "== round $r $name llama.cpp t=$T fa=$fa lm=$lm; $(date -u +%H:%M:%S); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
        "$lb" -m "$f" -t "$T" -r 1 -p "$P" -n "$N" -d "$DEPTHS" -fa "$fa" -lm "$lm" -o csv 2>/dev/null | tee -a "$out/raw.log" | awk -F, -v r="$r" -v n="$name" -v fa="$fa" -v m="$label" '
          NR == 1 { for (i = 1; i <= NF; i++) { gsub(/"/, "", $i); col[$i] = i }; next }
          { gsub(/"/, ""); np = $col["n_prompt"]; d = $col["n_depth"]; ts = $col["avg_ts"];
            print r "\t" n "\tllama.cpp-fa" fa m "-d" d "\t" (np > 0 ? "prefill" : "decode") "\t" ts }' >> "$out/runs.tsv"
      done
    done
  done
done
echo "== done; $(date -u +%H:%M:%S); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/raw.log"
