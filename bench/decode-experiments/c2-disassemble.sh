#!/usr/bin/env bash
# The machine code C2 made of one method, as assembly, without the hsdis plugin: the JVM prints
# the compiled method's bytes (-XX:CompileCommand=print), and objdump disassembles the last
# full (non-OSR) C2 compile. With LOOP=MNEMONIC (e.g. LOOP=vpmullw) it also counts the
# instructions of the shortest backward-jump loop holding the most of that mnemonic: vector and
# scalar instructions and stack references (spills).
#
# usage (repository root): bench/decode-experiments/c2-disassemble.sh 'CLASS::METHOD' OUT JAVA-ARGS...
#   e.g. LOOP=vpmullw bench/decode-experiments/c2-disassemble.sh 'io.fdkvc.engine.tensor.Q4_KRowLanes::pairInt8' /tmp/q4k \
#          -cp bench/target/benchmarks.jar io.fdkvc.bench.kernels.DotBench Q4_K 512 2048 8
# writes OUT.raw (the JVM's output), OUT.bin (the code) and OUT.s (its assembly). Let the program
# run long enough for C2 to compile the method (a few seconds of a benchmark).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/scripts/find-jdk.sh"
fdkvc_find_jdk || exit 1
if [ $# -lt 3 ]; then
  echo "usage: $0 'CLASS::METHOD' OUT JAVA-ARGS... (see the script's head)" >&2
  exit 2
fi
method=$1 out=$2
shift 2
case $method in *::*) ;; *) echo "$0: the method must be CLASS::METHOD, not '$method'" >&2; exit 2 ;; esac
[ -d "$(dirname -- "$out")" ] || { echo "$0: no directory for OUT '$out'" >&2; exit 2; }
command -v objdump > /dev/null || { echo "$0: objdump (binutils) is needed" >&2; exit 1; }
"$FDKVC_JAVA_HOME/bin/java" --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
  -XX:+UnlockDiagnosticVMOptions -XX:CompileCommand=quiet "-XX:CompileCommand=print,$method" "$@" > "$out.raw" 2>&1 || true
python3 - "$out" "${LOOP:-}" <<'PY'
import re, subprocess, sys
out, loop = sys.argv[1], sys.argv[2]
lines = open(out + '.raw', errors='replace').read().split('\n')
compiles = [i for i, l in enumerate(lines) if 'Compiled method (c2)' in l and ' % ' not in l]
if not compiles:
    sys.exit(f'no full C2 compile of the method in {out}.raw (the JVM\'s output): run the program longer, or see why it stopped')
first = compiles[-1]
last = next((j for j in range(first + 1, len(lines)) if lines[j].startswith('-' * 30)), len(lines))
code, start = bytearray(), None
for l in lines[first:last]:
    m = re.match(r'\s*0x([0-9a-f]+):\s+((?:[0-9a-f]{4}\s*\|?\s*)+)$', l)
    if not m:
        continue
    address, data = int(m.group(1), 16), bytes.fromhex(re.sub(r'[\s|]', '', m.group(2)))
    start = address if start is None else start
    code[len(code):] = b'\x90' * max(0, address - start - len(code))
    code[address - start:address - start + len(data)] = data
open(out + '.bin', 'wb').write(code)
asm = subprocess.run(['objdump', '-D', '-b', 'binary', '-mi386:x86-64', f'--adjust-vma={start:#x}', out + '.bin'],
                     capture_output=True, text=True, check=True).stdout
open(out + '.s', 'w').write(asm)
print(lines[first].strip(), f'-> {out}.s ({len(code)} bytes)')
if loop:
    ins = []
    for l in asm.split('\n'):
        parts = l.split('\t')
        if len(parts) >= 3 and parts[0].strip().endswith(':'):
            ins.append((int(parts[0].strip()[:-1], 16), parts[2].strip()))
    best = None
    for address, text in ins:
        m = re.match(r'j\w+\s+0x([0-9a-f]+)', text)
        if m and int(m.group(1), 16) < address:
            body = [t for a, t in ins if int(m.group(1), 16) <= a <= address]
            count = sum(t.startswith(loop) for t in body)
            if count and (best is None or (count, -len(body)) > (best[0], -len(best[1]))):
                best = (count, body, m.group(1))
    if best is None:
        sys.exit(f'no loop holds {loop}')
    count, body, at = best
    vector = sum(t.startswith('v') for t in body)
    print(f'loop at 0x{at}: {len(body)} instructions, {vector} vector, {len(body) - vector} scalar, '
          f'{count} {loop}, {sum("rsp" in t for t in body)} stack references')
PY
