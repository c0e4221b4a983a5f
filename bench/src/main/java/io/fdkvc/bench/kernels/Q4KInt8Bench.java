package io.fdkvc.bench.kernels;

import static jdk.incubator.vector.VectorOperators.ASHR;
import static jdk.incubator.vector.VectorOperators.I2F;
import static jdk.incubator.vector.VectorOperators.LSHL;
import static jdk.incubator.vector.VectorOperators.LSHR;
import static jdk.incubator.vector.VectorOperators.ZERO_EXTEND_B2S;

import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Quantizer;
import io.fdkvc.engine.tensor.Tensors;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Whether an integer Q4_K decode kernel pays on AVX2 through the Vector API (which has no
 * vpmaddubsw / VNNI): x quantised once per call to 8 bits with one float scale per super-block of
 * 256 (as llama.cpp's Q8_K), the nibbles widened to 16-bit lanes (one vpmovzxbw per 16 bytes),
 * against the engine's float kernel, batch of one, one thread. Two integer forms:
 * <ul>
 * <li>{@code int8-short}: 16-bit products (ShortVector.mul, vpmullw), summed in shorts over a
 *     sub-block (two products a lane: at most 2 x 15 x 127), then adjacent pairs added into
 *     32-bit lanes (shift left, two arithmetic shifts, add) and multiplied by the sub-block scale;
 * <li>{@code int8-pairs}: a 32-bit lane holds two weights (q0 + q1 2^16, the widened bytes as
 *     they are) and is multiplied (vpmulld) by x's pair swapped (x1 + x0 2^16): the product's high
 *     half is q0 x0 + q1 x1, vpmaddwd's result, the low half q0 x1, kept from borrowing by a bias
 *     of 2^15 that the sub-block sum starts from; one arithmetic shift per sub-block.
 * </ul>
 * Both are checked against a scalar form of the same integer arithmetic (they agree to float
 * rounding) and against the float kernel (they differ by x's 8-bit quantisation). Prints the
 * median over interleaved 0.3 s slices of GMAC per second of this thread's CPU time, after a
 * warm-up long enough for C2 to compile every form.
 * usage: scripts/run-bench kernels.Q4KInt8Bench ROWS COLS [SECONDS]
 */
public class Q4KInt8Bench {
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort SH = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfInt IN = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    private static final VectorSpecies<Byte> B128 = ByteVector.SPECIES_128;
    private static final VectorSpecies<Short> S256 = ShortVector.SPECIES_256;
    private static final VectorSpecies<Integer> I256 = IntVector.SPECIES_256;
    private static final VectorSpecies<Float> F256 = FloatVector.SPECIES_256;
    private static final int QK = 256, BLOCK = 144;
    private static final String[] NAMES = {"engine-float", "int8-short", "int8-pairs"};

    /** x quantised per 256 (xq: int8 values in shorts; xi: them in swapped pairs), dx the scales, bs the sums per 32. */
    private record QuantX(short[] xq, int[] xi, float[] dx, int[] bs) {
        static QuantX of(int cols) {
            return new QuantX(new short[cols], new int[cols / 2], new float[cols / QK], new int[cols / 32]);
        }

        void quantize(float[] x) {
            for (int b = 0; b < dx.length; b++) {
                float amax = 0;
                for (int i = 0; i < QK; i++) amax = Math.max(amax, Math.abs(x[b * QK + i]));
                float id = amax == 0 ? 0 : 127f / amax;
                dx[b] = amax / 127f;
                for (int j = 0; j < 8; j++) {
                    int s = 0;
                    for (int i = b * QK + 32 * j; i < b * QK + 32 * j + 32; i++) {
                        int q = Math.round(x[i] * id);
                        xq[i] = (short) q;
                        s += q;
                    }
                    bs[b * 8 + j] = s;
                }
            }
            for (int j = 0; j < xi.length; j++) xi[j] = xq[2 * j] * 65536 + xq[2 * j + 1];
        }
    }

    private static long scales(MemorySegment s, long p) {
        int s0 = s.get(IN, p + 4), s2 = s.get(IN, p + 12);
        return (s0 & 0x3F3F3F3FL) | (long) ((s2 & 0x0F0F0F0F) | ((s0 >>> 6) & 0x03030303) << 4) << 32;
    }

    private static long mins(MemorySegment s, long p) {
        int s1 = s.get(IN, p + 8), s2 = s.get(IN, p + 12);
        return (s1 & 0x3F3F3F3FL) | (long) (((s2 >>> 4) & 0x0F0F0F0F) | ((s1 >>> 6) & 0x03030303) << 4) << 32;
    }

    private static int sub(long packed, int j) {
        return (int) (packed >>> (8 * j)) & 0xFF;
    }

    /** dx * (d * sum_j scale_j (q . xq)_j - dmin * sum_j min_j bs_j), one super-block at a time, in scalars. */
    static float dotScalar(MemorySegment s, long p, int cols, QuantX x) {
        float acc = 0;
        for (int b = 0; b < cols / QK; b++, p += BLOCK) {
            long sc = scales(s, p), mn = mins(s, p);
            int isum = 0, msum = 0;
            for (int j = 0; j < 8; j++) {
                int t = 0;
                for (int l = 0; l < 32; l++) t += ((s.get(ValueLayout.JAVA_BYTE, p + 16 + 32 * (j >> 1) + l) >> (4 * (j & 1))) & 0xF) * x.xq[b * QK + 32 * j + l];
                isum += t * sub(sc, j);
                msum += x.bs[b * 8 + j] * sub(mn, j);
            }
            acc += x.dx[b] * (Float.float16ToFloat(s.get(SH, p)) * isum - Float.float16ToFloat(s.get(SH, p + 2)) * msum);
        }
        return acc;
    }

    static float dotShort(MemorySegment s, long p, int cols, QuantX x) {
        FloatVector acc = FloatVector.zero(F256);
        float mAcc = 0;
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            long sc = scales(s, p);
            IntVector isum = IntVector.zero(I256);
            for (int c = 0; c < 4; c++) {
                ShortVector lo = ShortVector.zero(S256), hi = ShortVector.zero(S256);
                for (int h = 0; h < 2; h++) {
                    ShortVector w = (ShortVector) ByteVector.fromMemorySegment(B128, s, p + 16 + 32 * c + 16 * h, LE).convertShape(ZERO_EXTEND_B2S, S256, 0);
                    int xb = b * QK + 64 * c + 16 * h;
                    lo = lo.add(w.and((short) 0xF).mul(ShortVector.fromArray(S256, x.xq, xb)));
                    hi = hi.add(w.lanewise(LSHR, 4).mul(ShortVector.fromArray(S256, x.xq, xb + 32)));
                }
                isum = isum.add(pairSums(lo).mul(sub(sc, 2 * c))).add(pairSums(hi).mul(sub(sc, 2 * c + 1)));
            }
            acc = scaled(isum, s, p, b, x, acc);
            mAcc += minsTerm(s, p, b, x);
        }
        return acc.reduceLanes(VectorOperators.ADD) - mAcc;
    }

    /** Lane i: shorts 2i and 2i + 1 of v added, as an int. */
    private static IntVector pairSums(ShortVector v) {
        IntVector i = v.reinterpretAsInts();
        return i.lanewise(LSHL, 16).lanewise(ASHR, 16).add(i.lanewise(ASHR, 16));
    }

    static float dotPairs(MemorySegment s, long p, int cols, QuantX x) {
        FloatVector acc = FloatVector.zero(F256);
        float mAcc = 0;
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            long sc = scales(s, p);
            IntVector isum = IntVector.zero(I256);
            for (int c = 0; c < 4; c++) {
                // a local, not a static final: a vector constant from a field enters the loop's phi
                // with its declared type, and the lanewise calls on it were no longer intrinsified
                IntVector lo = IntVector.broadcast(I256, 1 << 15), hi = lo;
                for (int h = 0; h < 2; h++) {
                    IntVector w = ((ShortVector) ByteVector.fromMemorySegment(B128, s, p + 16 + 32 * c + 16 * h, LE).convertShape(ZERO_EXTEND_B2S, S256, 0)).reinterpretAsInts();
                    int xb = (b * QK + 64 * c + 16 * h) / 2;
                    lo = lo.add(w.and(0x000F000F).mul(IntVector.fromArray(I256, x.xi, xb)));
                    hi = hi.add(w.lanewise(LSHR, 4).and(0x000F000F).mul(IntVector.fromArray(I256, x.xi, xb + 16)));
                }
                isum = isum.add(lo.lanewise(ASHR, 16).mul(sub(sc, 2 * c))).add(hi.lanewise(ASHR, 16).mul(sub(sc, 2 * c + 1)));
            }
            acc = scaled(isum, s, p, b, x, acc);
            mAcc += minsTerm(s, p, b, x);
        }
        return acc.reduceLanes(VectorOperators.ADD) - mAcc;
    }

    /** acc + the super-block's integer sums times d * dx. */
    private static FloatVector scaled(IntVector isum, MemorySegment s, long p, int b, QuantX x, FloatVector acc) {
        return ((FloatVector) isum.convert(I2F, 0)).fma(FloatVector.broadcast(F256, Float.float16ToFloat(s.get(SH, p)) * x.dx[b]), acc);
    }

    private static float minsTerm(MemorySegment s, long p, int b, QuantX x) {
        long mn = mins(s, p);
        int ms = 0;
        for (int j = 0; j < 8; j++) ms += x.bs[b * 8 + j] * sub(mn, j);
        return Float.float16ToFloat(s.get(SH, p + 2)) * x.dx[b] * ms;
    }

    public static void main(String[] a) {
        String usage = "Q4KInt8Bench ROWS COLS [SECONDS]";
        if (a.length < 2 || a.length > 3) BenchArgs.orRefuse("Q4KInt8Bench", usage, () -> { throw new IllegalArgumentException("expected 2 or 3 arguments, got " + a.length); });
        int rows = BenchArgs.orRefuse("Q4KInt8Bench", usage, () -> BenchArgs.whole("ROWS", a[0], 1, 1 << 16));
        int cols = BenchArgs.orRefuse("Q4KInt8Bench", usage, () -> BenchArgs.whole("COLS", a[1], QK, 1 << 16));
        double secs = a.length > 2 ? BenchArgs.orRefuse("Q4KInt8Bench", usage, () -> BenchArgs.seconds(a[2])) : 30;
        if (cols % QK != 0) BenchArgs.orRefuse("Q4KInt8Bench", usage, () -> { throw new IllegalArgumentException("COLS must be a multiple of 256, got " + cols); });
        RandomTensor.checkShape(rows, cols);
        Random r = new Random(1);
        MemorySegment seg = RandomTensor.segment(Quantizer.quantize(GgmlType.Q4_K, RandomTensor.gaussian(rows * cols, r)));
        FloatTensor t = Tensors.view(GgmlType.Q4_K, seg, rows, cols);
        float[] x = RandomTensor.gaussian(cols, r);
        QuantX xq = QuantX.of(cols);
        long rowBytes = (long) cols / QK * BLOCK;
        float[][] out = new float[NAMES.length][rows];
        double[][] perCpu = new double[NAMES.length][(int) (secs / 0.3) + 2];
        int[] count = new int[NAMES.length];
        ThreadMXBean tm = ManagementFactory.getThreadMXBean();
        long start = System.nanoTime(), warm = start + (long) (0.4 * secs * 1e9), end = start + (long) (secs * 1e9);
        while (System.nanoTime() < end) {
            for (int v = 0; v < NAMES.length; v++) {
                long tEnd = System.nanoTime() + 300_000_000L, cpu0 = tm.getCurrentThreadCpuTime(), done = 0;
                while (System.nanoTime() < tEnd) {
                    if (v == 0) {
                        t.matmul(0, rows, x, 0, cols, 1, out[0], 0, rows);
                    } else {
                        xq.quantize(x);   // once per call, as a decode step would
                        for (int i = 0; i < rows; i++) out[v][i] = v == 1 ? dotShort(seg, i * rowBytes, cols, xq) : dotPairs(seg, i * rowBytes, cols, xq);
                    }
                    done++;
                }
                if (System.nanoTime() > warm && count[v] < perCpu[v].length) perCpu[v][count[v]++] = done * (double) rows * cols / (tm.getCurrentThreadCpuTime() - cpu0);
            }
        }
        float[] ref = new float[rows];
        for (int i = 0; i < rows; i++) ref[i] = dotScalar(seg, i * rowBytes, cols, xq);
        double[] median = new double[NAMES.length];
        for (int v = 0; v < NAMES.length; v++) {
            double dFloat = 0, dRef = 0, big = 0;
            for (int i = 0; i < rows; i++) {
                dFloat = Math.max(dFloat, Math.abs(out[v][i] - out[0][i]));
                dRef = Math.max(dRef, Math.abs(out[v][i] - ref[i]));
                big = Math.max(big, Math.abs(out[0][i]));
            }
            double[] c = Arrays.copyOf(perCpu[v], count[v]);
            Arrays.sort(c);
            median[v] = c.length == 0 ? Double.NaN : c[c.length / 2];
            System.out.printf("Q4_K %dx%d %-12s CPU-time median %6.2f GMAC/s (%d slices, %.2fx float)  max |diff| vs float %.3g, vs scalar int8 %.3g (max |dot| %.3g)%n",
                    rows, cols, NAMES[v], median[v], c.length, median[v] / median[0], dFloat, v == 0 ? Double.NaN : dRef, big);
        }
    }
}
