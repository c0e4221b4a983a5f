package io.fdkvc.bench.kernels;

/**
 * What bounds continuous batching's Q8_0 kernel (four batch rows, one thread, in cache): the
 * same loop as Q8_0Tensor.dot4 over a 1536 x 576 Q8_0 matrix (0.9 MB, in L2), against the same
 * loop with each block's scale already a float, and with no scale at all. The gap between the
 * first two is the f16 scale's conversion and broadcast per block; the third is the ceiling of
 * converting bytes to floats and multiplying in floats (no 8-bit dot product: the Vector API has
 * no operation that C2 maps to VNNI). Prints the best GMAC/s of 2-second runs, third round.
 * 512-bit species: for an AVX-512 machine. The three loops are written out although they differ in
 * one line each: in one loop with the variant as a parameter C2 boxed
 * the vectors that the variant's branch merges in some JVMs, so it would measure the harness.
 *   scripts/run-bench kernels.Q8BatchCeiling
 */
import jdk.incubator.vector.*;
import java.lang.foreign.*;
import java.nio.ByteOrder;
public class Q8BatchCeiling {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    static final VectorSpecies<Byte> B = ByteVector.SPECIES_128;
    static final ValueLayout.OfShort SH = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final int N = 576, ROWS = 1536, NB = N / 32, BLK = 34;
    // final: with a plain static field C2 leaves the segment's checks in the loop
    static final MemorySegment seg = Arena.global().allocate((long) ROWS * NB * BLK, 64);
    static float[] scales = new float[ROWS * NB];
    static float[] x = new float[4 * N];
    static float[] out = new float[4 * ROWS];
    static void v1() { // as Q8_0Tensor.dot4
        MemorySegment s = seg;
        for (int r = 0; r < ROWS; r++) {
            long p = (long) r * NB * BLK;
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
            for (int b = 0; b < NB; b++, p += BLK) {
                FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(s.get(SH, p)));
                int c = b * 32;
                for (int j = 0; j < 32; j += 16) {
                    FloatVector w = ((FloatVector) ByteVector.fromMemorySegment(B, s, p + 2 + j, ByteOrder.LITTLE_ENDIAN).convertShape(VectorOperators.B2F, F, 0)).mul(d);
                    int cc = c + j;
                    a0 = w.fma(FloatVector.fromArray(F, x, cc), a0);
                    a1 = w.fma(FloatVector.fromArray(F, x, N + cc), a1);
                    a2 = w.fma(FloatVector.fromArray(F, x, 2 * N + cc), a2);
                    a3 = w.fma(FloatVector.fromArray(F, x, 3 * N + cc), a3);
                }
            }
            out[r] = a0.reduceLanes(VectorOperators.ADD); out[ROWS + r] = a1.reduceLanes(VectorOperators.ADD);
            out[2*ROWS + r] = a2.reduceLanes(VectorOperators.ADD); out[3*ROWS + r] = a3.reduceLanes(VectorOperators.ADD);
        }
    }
    static void v3() { // float scales
        MemorySegment s = seg;
        for (int r = 0; r < ROWS; r++) {
            long p = (long) r * NB * BLK;
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
            for (int b = 0; b < NB; b++, p += BLK) {
                FloatVector d = FloatVector.broadcast(F, scales[r * NB + b]);
                int c = b * 32;
                for (int j = 0; j < 32; j += 16) {
                    FloatVector w = ((FloatVector) ByteVector.fromMemorySegment(B, s, p + 2 + j, ByteOrder.LITTLE_ENDIAN).convertShape(VectorOperators.B2F, F, 0)).mul(d);
                    int cc = c + j;
                    a0 = w.fma(FloatVector.fromArray(F, x, cc), a0);
                    a1 = w.fma(FloatVector.fromArray(F, x, N + cc), a1);
                    a2 = w.fma(FloatVector.fromArray(F, x, 2 * N + cc), a2);
                    a3 = w.fma(FloatVector.fromArray(F, x, 3 * N + cc), a3);
                }
            }
            out[r] = a0.reduceLanes(VectorOperators.ADD); out[ROWS + r] = a1.reduceLanes(VectorOperators.ADD);
            out[2*ROWS + r] = a2.reduceLanes(VectorOperators.ADD); out[3*ROWS + r] = a3.reduceLanes(VectorOperators.ADD);
        }
    }
    static void v4() { // no scale at all (upper bound of the layout)
        MemorySegment s = seg;
        for (int r = 0; r < ROWS; r++) {
            long p = (long) r * NB * BLK;
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
            for (int b = 0; b < NB; b++, p += BLK) {
                int c = b * 32;
                for (int j = 0; j < 32; j += 16) {
                    FloatVector w = ((FloatVector) ByteVector.fromMemorySegment(B, s, p + 2 + j, ByteOrder.LITTLE_ENDIAN).convertShape(VectorOperators.B2F, F, 0));
                    int cc = c + j;
                    a0 = w.fma(FloatVector.fromArray(F, x, cc), a0);
                    a1 = w.fma(FloatVector.fromArray(F, x, N + cc), a1);
                    a2 = w.fma(FloatVector.fromArray(F, x, 2 * N + cc), a2);
                    a3 = w.fma(FloatVector.fromArray(F, x, 3 * N + cc), a3);
                }
            }
            out[r] = a0.reduceLanes(VectorOperators.ADD); out[ROWS + r] = a1.reduceLanes(VectorOperators.ADD);
            out[2*ROWS + r] = a2.reduceLanes(VectorOperators.ADD); out[3*ROWS + r] = a3.reduceLanes(VectorOperators.ADD);
        }
    }
    public static void main(String[] a) {
        if (a.length != 0) {
            System.err.println("Q8BatchCeiling: takes no arguments");
            System.exit(2);
        }
        java.util.Random rnd = new java.util.Random(1);
        for (long i = 0; i < seg.byteSize(); i++) seg.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt());
        for (int r = 0; r < ROWS; r++) for (int b = 0; b < NB; b++) { short h = Float.floatToFloat16(rnd.nextFloat() * 0.01f); seg.set(SH, ((long) r * NB + b) * BLK, h); scales[r * NB + b] = Float.float16ToFloat(h); }
        for (int i = 0; i < x.length; i++) x[i] = rnd.nextFloat();
        String[] names = {"f16 scale per block (Q8_0Tensor.dot4's structure)", "float scale per block (scales converted beforehand)", "no scale (bytes to floats and FMAs only)"};
        for (int round = 0; round < 3; round++) for (int k = 0; k < 3; k++) {
            double best = 0;
            long end = System.nanoTime() + 2_000_000_000L;
            while (System.nanoTime() < end) {
                long t0 = System.nanoTime();
                for (int rep = 0; rep < 5; rep++) { switch (k) { case 0 -> v1(); case 1 -> v3(); default -> v4(); } }
                best = Math.max(best, 5.0 * ROWS * N * 4 / (System.nanoTime() - t0));
            }
            if (round == 2) System.out.printf("%-52s %.1f GMAC/s%n", names[k], best);
        }
    }
}
