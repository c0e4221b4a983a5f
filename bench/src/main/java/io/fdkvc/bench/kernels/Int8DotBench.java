package io.fdkvc.bench.kernels;

/*
 * Q8_0 weights times activations, batch of one, one thread: the float path (as the engine) against
 * 8-bit activations with a ShortVector multiply (what the Vector API offers instead of VNNI).
 * usage: scripts/run-bench kernels.Int8DotBench ROWS COLS
 */
import java.lang.foreign.*;
import java.nio.ByteOrder;
import jdk.incubator.vector.*;
import java.util.*;

/** Q8_0 weights: float path (as the engine) vs int8 activations with a ShortVector multiply. */
public class Int8DotBench {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128, B32 = ByteVector.SPECIES_256;
    static final VectorSpecies<Short> S32 = ShortVector.SPECIES_512;
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static final ValueLayout.OfShort SH = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    static final int QK = 32, BLOCK = 34;

    static float dotF(MemorySegment s, long p, int nb, float[] x) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        for (int b = 0; b < nb; b += 2, p += 2 * BLOCK) {
            int xb = b * QK;
            FloatVector s0 = ((FloatVector) ByteVector.fromMemorySegment(B16, s, p + 2, LE).convertShape(VectorOperators.B2F, F, 0)).mul(FloatVector.fromArray(F, x, xb));
            s0 = ((FloatVector) ByteVector.fromMemorySegment(B16, s, p + 18, LE).convertShape(VectorOperators.B2F, F, 0)).fma(FloatVector.fromArray(F, x, xb + 16), s0);
            FloatVector s1 = ((FloatVector) ByteVector.fromMemorySegment(B16, s, p + BLOCK + 2, LE).convertShape(VectorOperators.B2F, F, 0)).mul(FloatVector.fromArray(F, x, xb + 32));
            s1 = ((FloatVector) ByteVector.fromMemorySegment(B16, s, p + BLOCK + 18, LE).convertShape(VectorOperators.B2F, F, 0)).fma(FloatVector.fromArray(F, x, xb + 48), s1);
            acc0 = s0.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SH, p))), acc0);
            acc1 = s1.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SH, p + BLOCK))), acc1);
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    /** xq: activations quantised to int8 per block of 32 (held as shorts), dx: their block scales. */
    static float dotI8(MemorySegment s, long p, int nb, short[] xq, float[] dx) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        for (int b = 0; b < nb; b += 2, p += 2 * BLOCK) {
            int xb = b * QK;
            ShortVector w0 = (ShortVector) ByteVector.fromMemorySegment(B32, s, p + 2, LE).convertShape(VectorOperators.B2S, S32, 0);
            ShortVector w1 = (ShortVector) ByteVector.fromMemorySegment(B32, s, p + BLOCK + 2, LE).convertShape(VectorOperators.B2S, S32, 0);
            IntVector p0 = w0.mul(ShortVector.fromArray(S32, xq, xb)).reinterpretAsInts();
            IntVector p1 = w1.mul(ShortVector.fromArray(S32, xq, xb + 32)).reinterpretAsInts();
            IntVector i0 = p0.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(p0.lanewise(VectorOperators.ASHR, 16));
            IntVector i1 = p1.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(p1.lanewise(VectorOperators.ASHR, 16));
            acc0 = ((FloatVector) i0.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SH, p)) * dx[b]), acc0);
            acc1 = ((FloatVector) i1.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SH, p + BLOCK)) * dx[b + 1]), acc1);
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    public static void main(String[] a) {
        int rows = Integer.parseInt(a[0]), cols = Integer.parseInt(a[1]);
        int nb = cols / QK; long rowBytes = nb * (long) BLOCK;
        MemorySegment seg = Arena.global().allocate(rowBytes * rows, 64);
        Random r = new Random(1);
        for (long i = 0; i < seg.byteSize(); i++) seg.set(ValueLayout.JAVA_BYTE, i, (byte) (r.nextInt(255) - 127));
        for (long rr = 0; rr < rows; rr++) for (int b = 0; b < nb; b++) seg.set(SH, rr * rowBytes + b * BLOCK, Float.floatToFloat16(0.01f * (1 + r.nextFloat())));
        float[] x = new float[cols]; for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        short[] xq = new short[cols]; float[] dx = new float[nb];
        for (int b = 0; b < nb; b++) { float m = 0; for (int i = 0; i < QK; i++) m = Math.max(m, Math.abs(x[b * QK + i])); dx[b] = m / 127; for (int i = 0; i < QK; i++) xq[b * QK + i] = (short) Math.round(x[b * QK + i] / dx[b]); }
        float[] o1 = new float[rows], o2 = new float[rows];
        for (int round = 0; round < 3; round++) for (int v = 0; v < 2; v++) {
            double best = 0; long end = System.nanoTime() + 2_500_000_000L;
            while (System.nanoTime() < end) {
                long t0 = System.nanoTime();
                for (int k = 0; k < 3; k++) {
                    if (v == 0) for (int i = 0; i < rows; i++) o1[i] = dotF(seg, i * rowBytes, nb, x);
                    else for (int i = 0; i < rows; i++) o2[i] = dotI8(seg, i * rowBytes, nb, xq, dx);
                }
                best = Math.max(best, 3.0 * rows * cols / (System.nanoTime() - t0));
            }
            System.out.printf("round %d %s %dx%d %.2f GMAC/s%n", round, v == 0 ? "float" : "int8 ", rows, cols, best);
        }
        double err = 0, ref = 0; for (int i = 0; i < rows; i++) { err += Math.abs(o1[i] - o2[i]); ref += Math.abs(o1[i]); }
        System.out.printf("int8 activations: mean |diff| / mean |dot| = %.4f%n", err / ref);
    }
}
