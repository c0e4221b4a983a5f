package io.fdkvc.engine.tensor;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * Writes the input blocks of engine/src/test/resources/ggml-golden: for every type, 512 Gaussian
 * values (several scales) quantised by our Quantizer, then 512 values' worth of random bytes whose
 * f16 scales are set to finite values (every bit pattern of the quants and packed scales occurs).
 * A program beside the tests that read its output ({@link GgmlGoldenTest}); run from the repository
 * root as bench/llamacpp/README.md shows: java --add-modules jdk.incubator.vector
 * -cp engine/target/test-classes:engine/target/classes io.fdkvc.engine.tensor.GoldenBlocks OUT_DIR
 */
public final class GoldenBlocks {
    private GoldenBlocks() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        for (GgmlType t : GgmlType.values()) {
            if (t.blockSize == 1) continue;
            Random r = new Random(9000 + t.id);
            float[] x = new float[512];
            for (int i = 0; i < x.length; i++) x[i] = (float) (r.nextGaussian() * Math.pow(10, (i / 128) - 2));
            byte[] q = Quantizer.quantize(t, x);
            byte[] rnd = new byte[(int) t.bytes(512)];
            r.nextBytes(rnd);
            for (int b = 0; b < 512 / t.blockSize; b++) {
                int p = b * t.blockBytes;
                for (int off : scaleOffsets(t)) putHalf(rnd, p + off, (float) ((r.nextBoolean() ? 1 : -1) * Math.pow(2, -8 + 8 * r.nextDouble())));
            }
            byte[] all = new byte[q.length + rnd.length];
            System.arraycopy(q, 0, all, 0, q.length);
            System.arraycopy(rnd, 0, all, q.length, rnd.length);
            Files.write(dir.resolve(t + ".blocks"), all);
            System.out.println(t.id + " " + t);
        }
        // Q8_0 quantiser input: Gaussian blocks of several scales, then blocks whose amax is 127
        // (d = 1) with ties x.5 of both signs, which C's roundf takes away from zero
        float[] x = new float[1024];
        Random r = new Random(8);
        for (int i = 0; i < 768; i++) x[i] = (float) (r.nextGaussian() * Math.pow(10, (i / 128) - 3));
        for (int i = 768; i < 1024; i++) x[i] = i % 32 == 0 ? 127f : (r.nextInt(200) - 100) + 0.5f;
        java.nio.ByteBuffer bb = java.nio.ByteBuffer.allocate(4 * x.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (float v : x) bb.putFloat(v);
        Files.write(dir.resolve("Q8_0.input.f32"), bb.array());
    }

    /** Byte offsets of the f16 fields in a block (random bytes there could be infinities or NaNs). */
    static int[] scaleOffsets(GgmlType t) {
        return switch (t) {
            case Q4_0, Q5_0, Q8_0, IQ4_NL, IQ4_XS -> new int[] {0};
            case Q4_1, Q5_1, Q4_K, Q5_K -> new int[] {0, 2};
            case Q2_K -> new int[] {80, 82};
            case Q3_K -> new int[] {108};
            case Q6_K -> new int[] {208};
            default -> new int[0];
        };
    }

    static void putHalf(byte[] b, int i, float v) {
        short h = Float.floatToFloat16(v);
        b[i] = (byte) h;
        b[i + 1] = (byte) (h >> 8);
    }
}
