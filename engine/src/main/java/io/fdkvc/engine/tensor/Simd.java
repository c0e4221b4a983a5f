package io.fdkvc.engine.tensor;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Vector species and helpers shared by the tensor kernels. The species are static finals so that
 * C2 folds them into the kernels; the float species is the platform's preferred one unless the
 * system property {@code fdkvc.vectorBits} (128, 256 or 512) overrides it, which exists only to
 * exercise the other code shapes in a separate JVM.
 *
 * <p>Public only for the model's own kernels (attention scores, softmax sums, RMSNorm), which must
 * reduce lanes in the same fixed order as the tensor kernels and on the same species.
 */
public final class Simd {
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static final ValueLayout.OfShort SHORT_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    /** 0, 1, ..., 47: per-lane shift counts (lane i of a vector loaded at offset e shifts by e + i). */
    static final int[] IOTA32 = new int[48];
    static {
        for (int i = 0; i < IOTA32.length; i++) IOTA32[i] = i;
    }
    static final ValueLayout.OfFloat FLOAT_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);

    /** Float lanes per vector (4, 8 or 16). */
    public static final VectorSpecies<Float> F = floatSpecies();
    public static final int L = F.length();
    /**
     * Byte loads carry at least 8 lanes (there is no 32-bit byte vector); with 4 float lanes one
     * byte load is converted in {@link #PARTS} parts.
     */
    static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(Math.max(64, L * 8)));
    static final int BL = B.length();
    static final int PARTS = BL / L;
    /** Shorts and ints with the same lane count as {@link #F}, for F16 and BF16 rows. */
    static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(L * 16));
    static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, VectorShape.forBitSize(L * 32));
    /** Shorts as wide as a float vector, two per int lane: the integer kernels' products ({@link RowLanes#INT8_ACTIVATIONS}). */
    static final VectorSpecies<Short> S2 = VectorSpecies.of(short.class, VectorShape.forBitSize(L * 32));

    /** Lane i takes lane i + step (mod L): the folds of {@link #sum}. */
    static final VectorShuffle<Float> FOLD8 = fold(8), FOLD4 = fold(4), FOLD2 = fold(2), FOLD1 = fold(1);

    private Simd() {}

    private static VectorShuffle<Float> fold(int step) {
        return VectorShuffle.fromOp(F, i -> (i + step) % L);
    }

    /**
     * The sum of the lanes in a fixed pairwise order. {@code reduceLanes(ADD)} leaves the order
     * open, and the interpreter and C2 do use different orders, so the same dot product could
     * differ in its last bit before and after compilation; with this fold a result does not
     * depend on how warm the JIT is (greedy decoding stays reproducible).
     */
    public static float sum(FloatVector v) {
        if (L >= 16) v = v.add(v.rearrange(FOLD8));
        if (L >= 8) v = v.add(v.rearrange(FOLD4));
        v = v.add(v.rearrange(FOLD2));
        v = v.add(v.rearrange(FOLD1));
        return v.lane(0);
    }

    /**
     * {@link #sum} of the L lanes stored at {@code a[off ..]}, in the same order (the fold's lane
     * 0 is v0 + v[L/2], then + the pair L/4 apart, ...), so bit-for-bit equal to it; the array
     * is overwritten. For kernels that reduce many accumulators at once: each {@code sum(v)}
     * call that C2 declines to inline (a large caller runs out of inlining budget) boxes v.
     */
    public static float sum(float[] a, int off) {
        for (int h = L / 2; h >= 1; h >>= 1) {
            for (int i = 0; i < h; i++) a[off + i] += a[off + i + h];
        }
        return a[off];
    }

    private static final float LOG2E = 1.44269504f, LN2_HI = 0.693145751953125f, LN2_LO = 1.42860677e-6f;
    /** 1.5 * 2^23: adding it rounds a float of magnitude below 2^22 to an integer, in the low mantissa bits. */
    private static final float ROUNDER = 12582912f;
    private static final int ROUNDER_BITS = 0x4B400000;

    /**
     * e^x per lane, within 2 ulp, from exactly rounded operations only (FMA, add, multiply, bit
     * moves), so the interpreter and C2 give the same bits. {@code lanewise(EXP)} does not: C2
     * calls a vector math library whose last bit differs from the Java fallback in a few percent
     * of lanes, which made softmax, and so greedy decoding, depend on how warm the JIT is. Lanes
     * below -87.3 give 0 (instead of subnormals), lanes above 88 are clamped to e^88.
     */
    public static FloatVector exp(FloatVector x) {
        FloatVector xc = x.max(-87.3f).min(88f);
        // x = n ln2 + r, |r| <= ln2/2; n rounded to nearest by the 1.5 * 2^23 trick
        FloatVector t = xc.fma(FloatVector.broadcast(F, LOG2E), FloatVector.broadcast(F, ROUNDER));
        FloatVector n = t.sub(ROUNDER);
        FloatVector r = n.fma(FloatVector.broadcast(F, -LN2_HI), xc);
        r = n.fma(FloatVector.broadcast(F, -LN2_LO), r);
        // e^r: Taylor to degree 7 (remainder below 6e-9 relative on |r| <= 0.35), Horner with FMAs
        FloatVector p = r.fma(FloatVector.broadcast(F, 1f / 5040), FloatVector.broadcast(F, 1f / 720));
        p = p.fma(r, FloatVector.broadcast(F, 1f / 120));
        p = p.fma(r, FloatVector.broadcast(F, 1f / 24));
        p = p.fma(r, FloatVector.broadcast(F, 1f / 6));
        p = p.fma(r, FloatVector.broadcast(F, 0.5f));
        p = p.fma(r, FloatVector.broadcast(F, 1f));
        p = p.fma(r, FloatVector.broadcast(F, 1f));
        // 2^n from n's integer bits (n in [-126, 127])
        IntVector ni = t.reinterpretAsInts().sub(ROUNDER_BITS);
        FloatVector scale = ni.add(127).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats();
        FloatVector e = p.mul(scale);
        return e.blend(0f, x.compare(VectorOperators.LT, -87.3f));
    }

    private static VectorSpecies<Float> floatSpecies() {
        String bits = System.getProperty("fdkvc.vectorBits");
        if (bits == null) {
            VectorSpecies<Float> p = FloatVector.SPECIES_PREFERRED;
            // 64-bit float vectors (2 lanes) are not worth it; such a platform gets 128-bit ones.
            return p.length() < 4 ? FloatVector.SPECIES_128 : p;
        }
        return switch (bits) {
            case "128" -> FloatVector.SPECIES_128;
            case "256" -> FloatVector.SPECIES_256;
            case "512" -> FloatVector.SPECIES_512;
            default -> throw new IllegalArgumentException("fdkvc.vectorBits must be 128, 256 or 512, not " + bits);
        };
    }

    /** {@code sum a[aOff+i] * b[bOff+i]} for i in [0, n). */
    public static float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        int i = 0;
        // two accumulators hide the FMA latency
        for (int up = n - 2 * L; i <= up; i += 2 * L) {
            acc0 = FloatVector.fromArray(F, a, aOff + i).fma(FloatVector.fromArray(F, b, bOff + i), acc0);
            acc1 = FloatVector.fromArray(F, a, aOff + i + L).fma(FloatVector.fromArray(F, b, bOff + i + L), acc1);
        }
        if (i <= n - L) {
            acc0 = FloatVector.fromArray(F, a, aOff + i).fma(FloatVector.fromArray(F, b, bOff + i), acc0);
            i += L;
        }
        float s = sum(acc0.add(acc1));
        for (; i < n; i++) s += a[aOff + i] * b[bOff + i];
        return s;
    }

    /**
     * out[outOff + g] = the sum of {@code x[xOff + g * group ..]}'s {@code group} floats (a
     * multiple of L) for each of the n / group groups: lane-wise adds, then the fixed fold of
     * {@link #sum}, so the same x gives the same bits on every thread and in every tier.
     */
    static void groupSumsInto(float[] x, int xOff, int n, int group, float[] out, int outOff) {
        for (int g = 0, groups = n / group; g < groups; g++) {
            int o = xOff + g * group;
            FloatVector a = FloatVector.fromArray(F, x, o);
            for (int i = L; i < group; i += L) a = a.add(FloatVector.fromArray(F, x, o + i));
            out[outOff + g] = sum(a);
        }
    }

    /** Signed bytes to floats: part {@code k} (lanes k*L .. k*L+L-1) of a byte vector. */
    static FloatVector toFloats(ByteVector v, int k) {
        return (FloatVector) v.convertShape(VectorOperators.B2F, F, k);
    }

    /**
     * IEEE half-precision bits (in the low 16 bits of each int lane, any upper bits) to floats.
     * Normal and subnormal halves become exact floats by moving the exponent and mantissa 13 bits
     * up and multiplying by 2^112 (the difference of the exponent biases); infinities and NaNs
     * (exponent 31) are patched separately because the multiplication would make them finite.
     */
    static FloatVector halfToFloat(IntVector h) {
        IntVector em = h.and(0x7FFF);
        IntVector sign = h.and(0x8000).lanewise(VectorOperators.LSHL, 16);
        IntVector shifted = em.lanewise(VectorOperators.LSHL, 13);
        FloatVector finite = shifted.reinterpretAsFloats().mul(0x1p112f);
        IntVector bits = finite.reinterpretAsInts();
        IntVector special = shifted.or(0x7F800000);
        bits = bits.blend(special, em.compare(VectorOperators.GE, 0x7C00));
        return bits.or(sign).reinterpretAsFloats();
    }

    /** Signed bytes to ints: part {@code k} of a byte vector, as {@link #toFloats}. */
    static IntVector toInts(ByteVector v, int k) {
        return (IntVector) v.convertShape(VectorOperators.B2I, I, k);
    }

    static FloatVector intsToFloats(IntVector v) {
        return (FloatVector) v.convert(VectorOperators.I2F, 0);
    }

    static IntVector shortsToInts(ShortVector s) {
        return (IntVector) s.convertShape(VectorOperators.S2I, I, 0);
    }
}
