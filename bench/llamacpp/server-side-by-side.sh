#!/usr/bin/env bash
# `fdkvc serve` and llama.cpp's `llama-server` under the same load and the same bounded context
# (scripts/serve-bench's conversations: C concurrent x T turns, greedy, streamed), for each C in CS,
# the three servers in turn (llama-server, FD-KVC, window), ROUNDS rounds; the load generator's reports go to
# OUT/{llama,window,fdkvc}-ROUND-C.txt and one line per run to OUT/runs.txt.
# usage: [CS="1 4 16" T=30 BUDGET=256 TURN=256 MAX_TOKENS=64 LLAMA_ARGS="-fa off --cache-reuse 16" WARMUP=30 LLAMA_WARMUP=4 \
#         SLOT_PER_CONVERSATION=1] \
#        bench/llamacpp/server-side-by-side.sh LLAMA_BUILD_DIR OUT_DIR ROUNDS MODEL.gguf
# MODEL: a file both read, e.g. the synthetic SmolLM2-135M Q8_0 that
#   ./fdkvc bench --synthetic smollm2-135m --quant Q8_0 --save FILE --turns 1 --warmup 0 --prompt-tokens 4 --jit-warmup 0
# writes (its placeholder vocabulary has byte tokens and one character per other token, so
# llama.cpp reads it, and a character of a message is about a token).
# The bound: BUDGET cache entries per conversation, plus a turn.
# ours:      fdkvc serve --policy window|fdkvc --budget BUDGET --max-turn-tokens MAX_TOKENS --threads 2
#            --parallel min(C, 16); the client resends the whole history each turn and the policy
#            keeps BUDGET entries of it (plus the turn's own, up to --max-turn-tokens at a time)
# llama.cpp: llama-server -t 2 -tb 2 -np C -c C*(BUDGET+TURN) --context-shift $LLAMA_ARGS, i.e.
#            BUDGET + TURN tokens per slot (llama.cpp rounds a slot's context up to a multiple of 256:
#            512 is its smallest above 256 plus a turn); it refuses a prompt longer than that, so its client
#            resends only the latest turns of at most BUDGET characters (SERVE_BENCH_HISTORY_CHARS),
#            and context shift handles a reply that runs past the slot's end; with the oldest turn
#            dropped the prompt's prefix changes, and --cache-reuse 16 lets llama-server shift the
#            cached chunks it still has into place rather than prefill them again; the chat template
#            is plain.jinja, our 'plain' format in Jinja; SLOT_PER_CONVERSATION=1 (the default) pins
#            conversation c to slot c with "id_slot" (left to itself, llama-server picks slots by prompt
#            similarity, the shifting prefixes match none, and conversations trade slots and caches)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 4 ] || { echo "usage: bench/llamacpp/server-side-by-side.sh LLAMA_BUILD_DIR OUT_DIR ROUNDS MODEL.gguf" >&2; exit 2; }
ls=$1/bin/llama-server out=$2 rounds=$3 model=$4
CS=${CS:-1 4 16} T=${T:-30} WARMUP=${WARMUP:-30} LLAMA_WARMUP=${LLAMA_WARMUP:-4} BUDGET=${BUDGET:-256} TURN=${TURN:-256} MAX_TOKENS=${MAX_TOKENS:-64} LLAMA_ARGS=${LLAMA_ARGS:--fa off --cache-reuse 16} SLOT_PER_CONVERSATION=${SLOT_PER_CONVERSATION:-1}
port=${PORT:-8090}
[ -x "$ls" ] || { echo "server-side-by-side: no llama-server at $ls (see bench/llamacpp/README.md)" >&2; exit 2; }
[ -f "$model" ] || { echo "server-side-by-side: no model file $model" >&2; exit 2; }
mkdir -p "$out"
bench=$here/../../scripts/serve-bench
for r in $(seq 1 "$rounds"); do
  for c in $CS; do
    # shellcheck disable=SC2086
    "$ls" -m "$model" -t 2 -tb 2 -np "$c" -c $((c * (BUDGET + TURN))) --context-shift $LLAMA_ARGS --host 127.0.0.1 --port "$port" \
        --no-webui --chat-template-file "$here/plain.jinja" > "$out/llama-server-$r-$c.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 60); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 1; done
    # a llama-server that did not start: its log says why, and serve-bench refuses the URL
    # llama.cpp has no JIT: a few warm-up turns fault the weights in (ours: WARMUP turns, for the JIT)
    SERVE_BENCH_WARMUP=$LLAMA_WARMUP SERVE_BENCH_MESSAGE='go on.' SERVE_BENCH_HISTORY_CHARS=$BUDGET SERVE_BENCH_SLOT_PER_CONVERSATION=$SLOT_PER_CONVERSATION "$bench" "$c" "$T" "$MAX_TOKENS" 900 \
        --url "http://127.0.0.1:$port" --pid "$pid" > "$out/llama-$r-$c.txt" 2>&1 || true
    kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    echo "$r C=$c llama.cpp $(date -u +%H:%M:%S) $(grep generated "$out/llama-$r-$c.txt" || echo 'no report')" | tee -a "$out/runs.txt"
    for policy in fdkvc window; do
      SERVE_BENCH_WARMUP=$WARMUP SERVE_BENCH_MESSAGE='go on.' "$bench" "$c" "$T" "$MAX_TOKENS" 900 \
          --model "$model" --policy "$policy" --budget "$BUDGET" --max-turn-tokens "$MAX_TOKENS" --threads 2 > "$out/$policy-$r-$c.txt" 2>&1 || true
      echo "$r C=$c $policy $(date -u +%H:%M:%S) $(grep generated "$out/$policy-$r-$c.txt" || echo 'no report')" | tee -a "$out/runs.txt"
    done
  done
done
