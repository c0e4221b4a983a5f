#!/usr/bin/env bash
# `fdkvc serve` and llama.cpp's `llama-server` under the same load (scripts/serve-bench's
# conversations: C concurrent x T turns, greedy, streamed, the whole history resent each turn),
# C = 1 then C = 4, the two servers alternating, ROUNDS rounds; the load generator's reports go to
# OUT/{fdkvc,llama}-ROUND-C.txt and one line per run to OUT/runs.txt.
# usage: [T=20 MAX_TOKENS=64 LLAMA_ARGS="-fa off"] \
#        bench/llamacpp/server-side-by-side.sh LLAMA_BUILD_DIR OUT_DIR ROUNDS MODEL.gguf
# MODEL: a file both read, e.g. the synthetic SmolLM2-135M Q8_0 that
#   ./fdkvc bench --synthetic smollm2-135m-q8 --save FILE --turns 1 --warmup 0 --prompt-tokens 4 --jit-warmup 0
# writes (its placeholder vocabulary has byte tokens and one character per other token, so
# llama.cpp reads it and both servers' prefix caches see a resent reply as the same tokens).
# Ours:      fdkvc serve --policy fdkvc --budget 256 --max-turn-tokens 64 --threads 2 (--parallel 4)
# llama.cpp: llama-server -t 2 -np 4 -c 16384 $LLAMA_ARGS --chat-template-file plain.jinja (our
#            'plain' template, which fdkvc picks for a vocabulary without one, in Jinja)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 4 ] || { echo "usage: bench/llamacpp/server-side-by-side.sh LLAMA_BUILD_DIR OUT_DIR ROUNDS MODEL.gguf" >&2; exit 2; }
ls=$1/bin/llama-server out=$2 rounds=$3 model=$4
T=${T:-20} MAX_TOKENS=${MAX_TOKENS:-64} LLAMA_ARGS=${LLAMA_ARGS:--fa off}
port=${PORT:-8090}
[ -x "$ls" ] || { echo "server-side-by-side: no llama-server at $ls (see bench/llamacpp/README.md)" >&2; exit 2; }
[ -f "$model" ] || { echo "server-side-by-side: no model file $model" >&2; exit 2; }
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for c in 1 4; do
    # shellcheck disable=SC2086
    "$ls" -m "$model" -t 2 -tb 2 -np 4 -c 16384 $LLAMA_ARGS --host 127.0.0.1 --port "$port" --no-webui \
        --chat-template-file "$here/plain.jinja" > "$out/llama-server-$r-$c.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 60); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 1; done
    # a llama-server that did not start: its log says why, and serve-bench refuses the URL
    # llama.cpp has no JIT: a few warm-up turns fault the weights in
    SERVE_BENCH_WARMUP=4 SERVE_BENCH_MESSAGE='go on.' "$here/../../scripts/serve-bench" "$c" "$T" "$MAX_TOKENS" 900 \
        --url "http://127.0.0.1:$port" --pid "$pid" > "$out/llama-$r-$c.txt" 2>&1 || true
    kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    echo "$r C=$c llama.cpp $(date -u +%H:%M:%S) $(grep generated "$out/llama-$r-$c.txt")" | tee -a "$out/runs.txt"
    SERVE_BENCH_WARMUP=30 SERVE_BENCH_MESSAGE='go on.' "$here/../../scripts/serve-bench" "$c" "$T" "$MAX_TOKENS" 900 \
        --model "$model" --policy fdkvc --budget 256 --max-turn-tokens 64 --threads 2 > "$out/fdkvc-$r-$c.txt" 2>&1 || true
    echo "$r C=$c fdkvc $(date -u +%H:%M:%S) $(grep generated "$out/fdkvc-$r-$c.txt")" | tee -a "$out/runs.txt"
  done
done
