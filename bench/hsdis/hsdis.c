// A minimal disassembler plugin for HotSpot, over capstone: with it, -XX:CompileCommand=print,...
// (or -XX:+PrintAssembly) shows the instructions C2 emitted for a kernel instead of raw bytes.
// Debian's libhsdis0-fcml exports only the plugin's old entry point, which JDK 25 no longer calls.
// Build and install beside the JDK's libjvm.so (a local tool; nothing in fdkvc loads it):
//   apt-get install libcapstone-dev
//   gcc -O2 -shared -fPIC -o hsdis-amd64.so bench/hsdis/hsdis.c -lcapstone
//   cp hsdis-amd64.so $JAVA_HOME/lib/server/
// then e.g. (one line): RUN_BENCH_JAVA_OPTS="-XX:+UnlockDiagnosticVMOptions
//   -XX:CompileCommand=print,io.fdkvc.engine.tensor.Q8_0Tensor::dot4Pair" scripts/run-bench kernels.DotBench Q8_0 1536 576 3 4
// Capstone 4 (Debian 12) does not decode some EVEX forms (memory-operand broadcasts, some
// loads); they print as ".byte 0x62" followed by a few misread instructions.
// HotSpot looks the plugin up by the symbol decode_instructions_virtual and calls it per code
// range: it wants an "insn" and a "/insn" event around each instruction's text.
#include <capstone/capstone.h>
#include <stdint.h>
#include <stddef.h>
void *decode_instructions_virtual(uintptr_t start_va, uintptr_t end_va, unsigned char *buffer, uintptr_t length,
                                  void *(*event_callback)(void *, const char *, void *), void *event_stream,
                                  int (*printf_callback)(void *, const char *, ...), void *printf_stream,
                                  const char *options, int newline) {
  csh h;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) return NULL;
  cs_insn *insn = cs_malloc(h);
  const uint8_t *code = buffer;
  size_t size = length;
  uint64_t addr = start_va;
  while (size > 0) {
    if (event_callback) event_callback(event_stream, "insn", (void *) (uintptr_t) addr);
    if (cs_disasm_iter(h, &code, &size, &addr, insn)) {
      printf_callback(printf_stream, "%s %s", insn->mnemonic, insn->op_str);
    } else {
      printf_callback(printf_stream, ".byte 0x%02x", *code);
      code++; size--; addr++;
    }
    if (event_callback) event_callback(event_stream, "/insn", (void *) (uintptr_t) addr);
    if (newline) printf_callback(printf_stream, "\n");
  }
  cs_free(insn, 1);
  cs_close(&h);
  return (void *) (uintptr_t) addr;
}
