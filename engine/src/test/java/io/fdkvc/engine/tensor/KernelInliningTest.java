package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedObject;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * C2 compiles the decode's and the prefill's kernels whole. A kernel is one long body of Vector
 * API calls, each of which C2 must inline to turn it into instructions; once a method's parse
 * has grown past C2's node budget it inlines nothing more (NodeCountInliningCutoff), so a call
 * written near the end of a kernel stays a call, with the live vectors spilled around it (a
 * Vector API call left so would box its vectors). Q6_K's row-lane kernel ran at 26 GMAC/s
 * instead of 42 from L2 for one such call (the offset of its scales). A fresh JVM ({@link
 * KernelInliningMain}) runs every type's products until C2 has compiled them and records the
 * JIT's decisions; this reads them back.
 */
class KernelInliningTest {
    /** Kernels that must have been compiled by C2 (as a compilation of their own or inlined into one). */
    static final List<String> KERNELS = List.of("Q4_KRowLanes.groupInt8", "Q6_KRowLanes.groupInt8", "Q4_KRowLanes.pairInt8", "Q6_KRowLanes.pairInt8", "Q4_KRowLanes.group2Int8", "Q6_KRowLanes.group2Int8", "Q8_0RowLanes.pair",
            "Q8_0RowLanes.group2", "Q4_KRowLanes.fillBlock", "Q6_KRowLanes.fillBlock", "Q8_0RowLanes.fillBlock", "FloatTensor.kernelWideColumns");
    /**
     * C2's reasons that mean it wanted a call inlined and had no budget left: its node budget, its
     * bytecode budget, its depth. C2 tests them after a site's own merits, so a cold site (an
     * error path, a species check's failure) fails first with "too big", "never executed" or the
     * like, whatever the budget; those depend on the profile of the moment and cost the loop
     * nothing.
     */
    static final List<String> OUT_OF_BUDGET = List.of("NodeCountInliningCutoff", "size > DesiredMethodLimit", "inlining too deep");
    /**
     * C2's reason for a hot call whose callee is over the size it inlines there (FreqInlineSize):
     * harmless where a kernel's entry calls the kernel (arrays cross the call), lost where vectors
     * cross it (a Vector API value passed or returned is boxed). A helper of vector operations
     * shared by Q6_K's two kernels, 453 bytes of bytecode, stayed such a call: 48 -> 6 GMAC/s.
     */
    static final String HOT_TOO_BIG = "hot method too big";

    @Test
    void theKernelsInlineEverythingTheyCall(@TempDir Path dir) throws IOException, InterruptedException {
        Path jfr = dir.resolve("jit.jfr");
        ChildJvm jvm = ChildJvm.run(120, List.of(), KernelInliningMain.class, "20000", jfr.toString());
        assertThat(jvm.exitValue()).as("the JVM's output:%n%s", jvm.output()).isZero();
        assertThat(Files.exists(jfr)).as("the recording was written").isTrue();

        Map<Long, String> c2Roots = new HashMap<>();
        List<RecordedEvent> inlining = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(jfr)) {
            switch (e.getEventType().getName()) {
                case "jdk.Compilation" -> {
                    if (e.getShort("compileLevel") == 4) c2Roots.put(e.getLong("compileId"), name(e.getValue("method")));
                }
                case "jdk.CompilerInlining" -> inlining.add(e);
                default -> { }
            }
        }
        Set<String> compiled = new HashSet<>(c2Roots.values());
        List<String> lost = new ArrayList<>();
        for (RecordedEvent e : inlining) {
            String root = c2Roots.get(e.getLong("compileId"));
            if (root == null) continue; // C1's compilations: their code runs only until C2's replaces it
            RecordedObject callee = e.getValue("callee");
            String calleeType = callee.getString("type"), calleeName = calleeType.substring(calleeType.lastIndexOf('/') + 1) + "." + callee.getString("name");
            if (e.getBoolean("succeeded")) {
                compiled.add(calleeName);
                continue;
            }
            if (!isKernel(root)) continue;
            String why = e.getString("message");
            boolean vectorsCross = callee.getString("descriptor").contains("Ljdk/incubator/vector/");
            if (OUT_OF_BUDGET.stream().anyMatch(why::contains) || (vectorsCross && why.contains(HOT_TOO_BIG))) {
                lost.add(root + " -> " + calleeName + " (bci " + e.getInt("bci") + "): " + why);
            }
        }
        assertThat(compiled).as("C2 compiled the kernels (20000 products of each type)").containsAll(KERNELS);
        assertThat(lost).as("calls C2 left in a kernel").isEmpty();
    }

    /** The row-lane copies' kernels and fills, and the tiled product's kernels. */
    static boolean isKernel(String method) {
        return method.contains("RowLanes.") || method.startsWith("FloatTensor.kernel");
    }

    static String name(RecordedMethod m) {
        String type = m.getType().getName();
        return type.substring(type.lastIndexOf('.') + 1) + "." + m.getName();
    }
}
