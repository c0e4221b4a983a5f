package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Against llama.cpp's own decoder: {@code ggml-golden/TYPE.blocks} holds 512 values quantised by our
 * {@link Quantizer} and 512 values' worth of random blocks; {@code TYPE.f32} is what ggml's
 * {@code to_float} (llama.cpp source as bundled in node-llama-cpp 3.22.1, ggml 0.25.1) made of
 * them, by {@code bench/llamacpp/ggml-dequant.c} (see {@code bench/llamacpp/README.md}).
 */
class GgmlGoldenTest {
    static byte[] resource(String name) throws IOException {
        try (InputStream in = GgmlGoldenTest.class.getResourceAsStream("/ggml-golden/" + name)) {
            assertThat(in).as(name).isNotNull();
            return in.readAllBytes();
        }
    }

    static float[] floats(byte[] b) {
        float[] f = new float[b.length / 4];
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f);
        return f;
    }

    /** The type's golden blocks (rows of 256 weights) for ggml's {@code values} floats. */
    static FloatTensor goldenBlocks(GgmlType type, int values) throws IOException {
        byte[] blocks = resource(type + ".blocks");
        assertThat(blocks.length).as(type + ".blocks").isEqualTo(type.bytes(values));
        return Tensors.view(type, MemorySegment.ofArray(blocks), values / 256, 256);
    }

    /** Every row of t, dequantised, one after the other. */
    static float[] dequantised(FloatTensor t) {
        float[] out = new float[t.rows() * t.cols()];
        for (int r = 0; r < t.rows(); r++) t.dequantizeRow(r, out, r * t.cols());
        return out;
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16"}, mode = EnumSource.Mode.EXCLUDE)
    void dequantisationEqualsGgml(GgmlType type) throws IOException {
        float[] ggml = floats(resource(type + ".f32"));
        FloatTensor t = goldenBlocks(type, ggml.length);
        int cols = t.cols(), rows = t.rows();
        float[] ours = dequantised(t);
        // bit for bit: our decoders round as ggml's reference decoder does (multiply, then add or subtract)
        assertThat(ours).as(type.toString()).containsExactly(ggml);
        // and the fused dot product agrees with ggml's values
        Random r = new Random(type.id);
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        for (int row = 0; row < rows; row++) {
            double exact = 0, mag = 0;
            for (int i = 0; i < cols; i++) {
                exact += (double) ggml[row * cols + i] * x[i];
                mag += Math.abs((double) ggml[row * cols + i] * x[i]);
            }
            assertThat((double) t.dot(row, x, 0)).as("%s row %d", type, row).isCloseTo(exact, org.assertj.core.api.Assertions.within(3e-6 * mag + 1e-30));
        }
    }

    /**
     * The decoders choose their loop shape by vector width (Q6_K: one shape for 8 and 16 float
     * lanes, another for 4, where the first would be boxed), so each width is checked against
     * ggml in a child JVM (the species are fixed when {@link Simd} loads).
     */
    @ParameterizedTest
    @ValueSource(ints = {128, 256})
    void dequantisationEqualsGgmlAtOtherVectorWidths(int bits) throws IOException, InterruptedException {
        ChildJvm jvm = ChildJvm.run(300, List.of("-Dfdkvc.vectorBits=" + bits), GgmlGoldenTest.class);
        String out = jvm.output();
        assertThat(jvm.exitValue()).as(out).isZero();
        assertThat(out).contains("float lanes " + bits / 32, "Q6_K equal", "Q4_K equal", "Q8_0 equal");
    }

    /** Child JVM: each block type's decoder against ggml's floats, one line per type; exit 1 on a difference. */
    public static void main(String[] args) throws IOException {
        System.out.println("float lanes " + Simd.L);
        boolean differs = false;
        for (GgmlType type : GgmlType.values()) {
            if (type == GgmlType.F32 || type == GgmlType.F16 || type == GgmlType.BF16) continue;
            float[] ggml = floats(resource(type + ".f32"));
            float[] ours = dequantised(goldenBlocks(type, ggml.length));
            int i = 0;
            while (i < ours.length && Float.floatToRawIntBits(ours[i]) == Float.floatToRawIntBits(ggml[i])) i++;
            differs |= i < ours.length;
            System.out.println(i < ours.length ? type + " differs at " + i + ": " + ours[i] + " vs ggml's " + ggml[i] : type + " equal");
        }
        System.exit(differs ? 1 : 0);
    }

    @Test
    void q8_0QuantiserMakesGgmlsBytes() throws IOException {
        float[] x = floats(resource("Q8_0.input.f32"));
        assertThat(Quantizer.quantize(GgmlType.Q8_0, x)).containsExactly(resource("Q8_0.ggml.blocks"));
    }
}
