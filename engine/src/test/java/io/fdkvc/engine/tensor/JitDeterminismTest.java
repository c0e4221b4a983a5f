package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A dot product must not depend on how warm the JIT is: the same row and vector give the same
 * bits in an interpreter-only JVM (-Xint: the Vector API's Java fallback) and here after C2 has
 * compiled the kernels. (reduceLanes(ADD) leaves the lane order open, and the two tiers differ.)
 */
class JitDeterminismTest {
    static final int ROWS = 16, COLS = 512;

    /** One line per type: the bits of every row's dot product, and of one dequantised row. */
    static List<String> results(int warmups) {
        List<String> lines = new ArrayList<>();
        for (GgmlType t : GgmlType.values()) {
            Random r = new Random(t.ordinal() + 11);
            float[] w = new float[ROWS * COLS];
            for (int i = 0; i < w.length; i++) w[i] = (float) r.nextGaussian();
            float[] x = new float[COLS + 3];
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            FloatTensor ten = Tensors.view(t, MemorySegment.ofArray(Quantizer.quantize(t, w)), ROWS, COLS);
            for (int k = 0; k < warmups; k++) for (int i = 0; i < ROWS; i++) ten.dot(i, x, 3);
            StringBuilder sb = new StringBuilder(t.name());
            for (int i = 0; i < ROWS; i++) sb.append(' ').append(Integer.toHexString(Float.floatToRawIntBits(ten.dot(i, x, 3))));
            float[] row = new float[COLS];
            ten.dequantizeRow(ROWS - 1, row, 0);
            long h = 0;
            for (float v : row) h = h * 31 + Float.floatToRawIntBits(v);
            // the batched product (prefill): its own kernel, its own fixed summation order
            int batch = FloatTensor.NB + 3;
            float[] xs = new float[batch * COLS];
            for (int i = 0; i < xs.length; i++) xs[i] = (float) r.nextGaussian();
            float[] mm = new float[batch * ROWS];
            for (int k = 0; k < warmups / 100; k++) ten.matmul(0, ROWS, xs, 0, COLS, batch, mm, 0, ROWS);
            ten.matmul(0, ROWS, xs, 0, COLS, batch, mm, 0, ROWS);
            long hm = 0;
            for (float v : mm) hm = hm * 31 + Float.floatToRawIntBits(v);
            lines.add(sb.append(" deq ").append(Long.toHexString(h)).append(" matmul ").append(Long.toHexString(hm)).toString());
        }
        // the softmax exponential (Simd.exp): the Vector API's EXP differs between the tiers
        float[] e = new float[64 * Simd.L];
        Random r = new Random(5);
        for (int i = 0; i < e.length; i++) e[i] = (float) (-40 * r.nextDouble());
        float[] y = new float[e.length];
        for (int k = 0; k <= warmups; k++) {
            for (int i = 0; i < e.length; i += Simd.L) Simd.exp(jdk.incubator.vector.FloatVector.fromArray(Simd.F, e, i)).intoArray(y, i);
        }
        long h = 0;
        for (float v : y) h = h * 31 + Float.floatToRawIntBits(v);
        lines.add("exp " + Long.toHexString(h));
        return lines;
    }

    /** Entry point of the interpreter-only child JVM. */
    public static void main(String[] args) {
        for (String l : results(0)) System.out.println(l);
    }

    @Test
    void interpretedAndCompiledKernelsGiveTheSameBits() throws IOException, InterruptedException {
        List<String> warm = results(5_000);   // 80k calls a type: far past C2's thresholds
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Xint", "--add-modules=jdk.incubator.vector", "-cp",
                System.getProperty("java.class.path")));
        String bits = System.getProperty("fdkvc.vectorBits");
        if (bits != null) cmd.add("-Dfdkvc.vectorBits=" + bits);
        cmd.add(JitDeterminismTest.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(err).isZero();
        assertThat(out.lines().toList()).containsExactlyElementsOf(warm);
    }
}
