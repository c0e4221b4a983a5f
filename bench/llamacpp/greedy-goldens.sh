#!/bin/bash
# llama.cpp's greedy ids on the small files of LlamaCppChecks, as the goldens of LlamaCppGreedyTest:
# writes engine/src/test/resources/llamacpp-greedy/NAME.txt for every check (or only the NAMEs given).
# Needs the engine's test classes (mvn -pl engine -am test-compile) and a llama.cpp build ($LLAMA).
# usage: bench/llamacpp/greedy-goldens.sh [NAME...]
set -euo pipefail
LLAMA=${LLAMA:-/work/llama.cpp-build}
JAVA=${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
gcc -O1 -o "$WORK/greedy" "$ROOT/bench/llamacpp/greedy.c" -I"$LLAMA/src/include" -I"$LLAMA/src/ggml/include" \
    -L"$LLAMA/build/bin" -lllama -Wl,-rpath,"$LLAMA/build/bin"
CP=$ROOT/engine/target/classes:$ROOT/core/target/classes:$ROOT/engine/target/test-classes
"$JAVA" --add-modules jdk.incubator.vector -cp "$CP" io.fdkvc.engine.modelwriter.LlamaCppChecks "$WORK/files" > "$WORK/runs.txt" 2>/dev/null
OUT=$ROOT/engine/src/test/resources/llamacpp-greedy
COMMIT=$(git -C "$LLAMA/src" rev-parse --short=8 HEAD 2>/dev/null || echo unknown)
declare -A started
while read -r name form seed ctx file prompt; do
    if [ $# -gt 0 ] && [[ ! " $* " =~ " $name " ]]; then continue; fi
    if [ -z "${started[$name]:-}" ]; then
        started[$name]=1
        printf '# llama.cpp %s, bench/llamacpp/greedy-goldens.sh: FORM SEED CONTEXT, then the 32 greedy ids after the prompt %s\n' \
            "$COMMIT" "$prompt" > "$OUT/$name.txt"
    fi
    ids=$("$WORK/greedy" "$file" 32 "$ctx" $prompt 2>>"$WORK/llama.log") || { tail -20 "$WORK/llama.log" >&2; echo "llama.cpp failed on $file" >&2; exit 1; }
    echo "$form $seed $ctx $ids" >> "$OUT/$name.txt"
done < "$WORK/runs.txt"
ls -l "$OUT"
