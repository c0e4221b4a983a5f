package io.fdkvc.bench.kernels;

import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.GgmlType;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Whether the prefill's tiled product would gain from 16-bit integer products (one thread, all in
 * L1 and L2). Measured: the engine's tiled product ({@code FloatTensor.matmul} on a transposed
 * batch: its 6 x 4-vector kernel, one FMA per weight and 16 batch rows, with the panel's copy and
 * the scatter of the results) over a 48 x 2048 F32 matrix and 64 batch rows; and a 6-row tile of
 * such a panel in 16-bit lanes (32 batch rows a vector: one multiply and one add per weight and
 * 32 batch rows; its strides constant, which only favours it). The integer tile needs a flush per
 * Q4_K sub-block of 32 columns, where the sub-block's scale changes: its 16-bit sums widened to
 * ints, converted and scaled into float accumulators. A lane sums 32 products of a 4-bit weight,
 * so x is rounded to 7 bits here (32 x 15 x 63 = 30240 fits a short; 8 bits would not). Printed:
 * GMAC/s of the engine's product, of the integer tile without its flushes (the ceiling of 16-bit
 * products) and with them, each the best of repeated runs over 2 seconds, third round. 512-bit
 * species: for an AVX-512 machine. The tile's loop is written out: a helper returning vectors
 * that C2 does not inline would box them.
 *   scripts/run-bench kernels.Int16Ceiling
 */
public final class Int16Ceiling {
    private Int16Ceiling() {}

    static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    static final VectorSpecies<Short> S = ShortVector.SPECIES_512;
    static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    static final int K = 2048, PANEL = 48, NB = 64, L = 16, SUB = 32;

    /**
     * The same tile in 16-bit lanes over sub-blocks [s0, s1) of 32 columns: per column, the 6 rows'
     * weights (0-15) broadcast against 64 batch rows' x (two vectors of 32 shorts), multiplied and
     * added in shorts; per sub-block (when {@code flush}) the 12 sums stored, each vector's 32
     * shorts widened as ints (even and odd batch rows apart: a shift pair and a shift), converted,
     * times x's scale per batch row and the row's scale, plus the row's min times the sub-block's
     * sums of x, into the float accumulators acc[j*NB ..] (batch rows in even-odd order).
     */
    static void shortTile(short[] w, int wo, int s0, int s1, short[] xt, float[] sc, float[] mn, float[] dx, float[] xs, float[] acc, int[] tmp, boolean flush) {
        for (int sub = s0; sub < s1; sub++) {
            ShortVector z = ShortVector.zero(S);
            ShortVector c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z, c50 = z, c51 = z;
            for (int k = sub * SUB; k < (sub + 1) * SUB; k++) {
                int p = k * NB, q = wo + k * PANEL;
                ShortVector v0 = ShortVector.fromArray(S, xt, p), v1 = ShortVector.fromArray(S, xt, p + 32);
                ShortVector b = ShortVector.broadcast(S, w[q]);
                c00 = c00.add(v0.mul(b)); c01 = c01.add(v1.mul(b));
                b = ShortVector.broadcast(S, w[q + 1]);
                c10 = c10.add(v0.mul(b)); c11 = c11.add(v1.mul(b));
                b = ShortVector.broadcast(S, w[q + 2]);
                c20 = c20.add(v0.mul(b)); c21 = c21.add(v1.mul(b));
                b = ShortVector.broadcast(S, w[q + 3]);
                c30 = c30.add(v0.mul(b)); c31 = c31.add(v1.mul(b));
                b = ShortVector.broadcast(S, w[q + 4]);
                c40 = c40.add(v0.mul(b)); c41 = c41.add(v1.mul(b));
                b = ShortVector.broadcast(S, w[q + 5]);
                c50 = c50.add(v0.mul(b)); c51 = c51.add(v1.mul(b));
            }
            c00.reinterpretAsInts().intoArray(tmp, 0); c01.reinterpretAsInts().intoArray(tmp, 16);
            c10.reinterpretAsInts().intoArray(tmp, 32); c11.reinterpretAsInts().intoArray(tmp, 48);
            c20.reinterpretAsInts().intoArray(tmp, 64); c21.reinterpretAsInts().intoArray(tmp, 80);
            c30.reinterpretAsInts().intoArray(tmp, 96); c31.reinterpretAsInts().intoArray(tmp, 112);
            c40.reinterpretAsInts().intoArray(tmp, 128); c41.reinterpretAsInts().intoArray(tmp, 144);
            c50.reinterpretAsInts().intoArray(tmp, 160); c51.reinterpretAsInts().intoArray(tmp, 176);
            if (!flush) continue;
            int so = (sub & 63) * 6;
            for (int j = 0; j < 6; j++) {
                FloatVector s = FloatVector.broadcast(F, sc[so + j]), m = FloatVector.broadcast(F, mn[so + j]);
                for (int h = 0; h < 2; h++) {
                    IntVector iv = IntVector.fromArray(I, tmp, j * 32 + h * 16);
                    FloatVector lo = (FloatVector) iv.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
                    FloatVector hi = (FloatVector) iv.lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0);
                    int ao = j * NB + h * 32, xo = (sub & 63) * NB + h * 32;
                    lo.mul(FloatVector.fromArray(F, dx, h * 32)).fma(s, FloatVector.fromArray(F, xs, xo).fma(m, FloatVector.fromArray(F, acc, ao))).intoArray(acc, ao);
                    hi.mul(FloatVector.fromArray(F, dx, h * 32 + L)).fma(s, FloatVector.fromArray(F, xs, xo + L).fma(m, FloatVector.fromArray(F, acc, ao + L))).intoArray(acc, ao + L);
                }
            }
        }
    }

    public static void main(String[] args) {
        java.util.Random r = new java.util.Random(1);
        FloatTensor ft = RandomTensor.of(GgmlType.F32, PANEL, K, r);
        float[] x = RandomTensor.gaussian(NB * K, r), out = new float[NB * PANEL], acc = new float[PANEL * NB];
        // the batch transposed once, as the forward pass transposes an input once for all its products' rows
        FloatTensor.TransposedBatch tb = new FloatTensor.TransposedBatch();
        tb.reset(x, 0, K, NB, K);
        tb.transpose(0, K);
        short[] ws = new short[K * PANEL], xts = new short[K * NB];
        for (int i = 0; i < ws.length; i++) ws[i] = (short) r.nextInt(16);
        for (int i = 0; i < xts.length; i++) xts[i] = (short) (r.nextInt(127) - 63);
        float[] sc = new float[64 * 6], mn = new float[64 * 6], dx = new float[NB], xs = new float[64 * NB];
        int[] tmp = new int[12 * 16];
        double macs = (double) K * PANEL * NB;
        for (int round = 0; round < 3; round++) {
            double[] best = new double[3];
            for (int variant = 0; variant < 3; variant++) {
                long end = System.nanoTime() + 2_000_000_000L;
                while (System.nanoTime() < end) {
                    long t0 = System.nanoTime();
                    for (int rep = 0; rep < 8; rep++) {
                        if (variant == 0) {
                            ft.matmul(0, PANEL, tb, out, 0, PANEL);
                        } else {
                            for (int rb = 0; rb < PANEL / 6; rb++) shortTile(ws, rb * 6, 0, K / SUB, xts, sc, mn, dx, xs, acc, tmp, variant == 2);
                        }
                    }
                    best[variant] = Math.max(best[variant], 8 * macs / (System.nanoTime() - t0));
                }
            }
            if (round == 2) {
                System.out.printf("the engine's product (F32):    %.1f GMAC/s%n", best[0]);
                System.out.printf("16-bit tile, no flushes:       %.1f GMAC/s%n", best[1]);
                System.out.printf("16-bit tile, flushed per 32:   %.1f GMAC/s%n", best[2]);
            }
        }
        System.out.printf("(checksum %.4g)%n", out[7] + acc[7] + tmp[3]);   // the results used, so that no loop is dropped
    }
}
