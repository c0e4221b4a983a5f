package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.B;
import static io.fdkvc.engine.tensor.Simd.BL;
import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.I;
import static io.fdkvc.engine.tensor.Simd.INT_LE;
import static io.fdkvc.engine.tensor.Simd.IOTA32;
import static io.fdkvc.engine.tensor.Simd.L;
import static io.fdkvc.engine.tensor.Simd.LE;
import static io.fdkvc.engine.tensor.Simd.PARTS;
import static io.fdkvc.engine.tensor.Simd.SHORT_LE;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;

/**
 * GGML Q5_0: blocks of 32 weights (22 bytes): f16 scale {@code d}, a little-endian 32-bit word
 * {@code qh} whose bit i is the fifth bit of element i, then 16 bytes of low nibbles (byte j:
 * element j low, element j + 16 high); weight = (q - 16) * d. llama-quantize falls back to this
 * type from Q4_K when a row is not a multiple of 256 (SmolLM2's 576, Qwen2.5's 896).
 */
public final class Q5_0Tensor extends PreparedXTensor {
    static final int QK = 32, BLOCK = 22;

    public Q5_0Tensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q5_0, seg, rows, cols);
    }

    /** Bit i (low nibbles) and bit 16 + i (high nibbles) of qh per lane i: the fifth bits. */
    private static final int[] BIT = new int[32];
    static {
        for (int i = 0; i < 32; i++) BIT[i] = 1 << i;
    }

    /**
     * x as the kernel wants it, per block b: {@code xp[32b + i]} = x of element i, {@code
     * xp[32b + 16 + i]} = x of element 16 + i divided by 16 (the kernel takes the high nibble in
     * place, as 16 times its value: exact, barring underflow below 2^-122), and {@code xs[Lb + i]}
     * = -16 times the sum of the x of the elements the kernel's lane i sees in block b, the
     * offset of q - 16, which each block's sum starts from.
     */
    @Override
    void prepare(float[] x, int xOff, float[] xp, float[] xs) {
        for (int b = 0, nb = cols / QK; b < nb; b++) {
            // in vectors: per element scalar work here cost as much as tens of rows' products
            FloatVector sum = FloatVector.zero(F);
            for (int i = 0; i < 16; i += L) {
                FloatVector lo = FloatVector.fromArray(F, x, xOff + 32 * b + i), hi = FloatVector.fromArray(F, x, xOff + 32 * b + 16 + i);
                lo.intoArray(xp, 32 * b + i);
                hi.mul(0x1p-4f).intoArray(xp, 32 * b + 16 + i);
                sum = sum.add(lo.add(hi));
            }
            sum.mul(-16f).intoArray(xs, L * b);
        }
    }

    @Override
    int sumsLength() {
        return cols / QK * L;
    }

    @Override
    void rows(int from, int to, float[] xp, float[] xs, float[] out, int outOff) {
        for (int i = 0; i < to - from; i++) {
            int r = streamedRow(from, to, i, ROW_STREAMS);
            out[outOff + r] = dot(r, xp, xs);
        }
    }

    @Override
    float dot(int row, float[] xp, float[] xs) {
        MemorySegment s = seg;
        long p = rowStart(row);
        // Per block one sum over both halves, started from the -16 offsets and scaled by d once.
        // Low nibble: q & 0xF; high nibble in place: q & 0xF0 (16 times the value, x carries
        // 1/16). The fifth bit is OR-ed in under a mask (lanes whose qh bit is set), which saves
        // the per-lane variable shift that moving the bit into place would cost.
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            IntVector qh = IntVector.broadcast(I, s.get(INT_LE, p + 2));
            FloatVector sm = FloatVector.fromArray(F, xs, L * b);
            for (int j = 0; j < QK / 2; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 6 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    int e = j + k * L;
                    IntVector qi = Simd.toInts(q, k);
                    VectorMask<Integer> h0 = qh.and(IntVector.fromArray(I, BIT, e)).compare(VectorOperators.NE, 0);
                    VectorMask<Integer> h1 = qh.and(IntVector.fromArray(I, BIT, 16 + e)).compare(VectorOperators.NE, 0);
                    sm = Simd.intsToFloats(qi.and(0xF).lanewise(VectorOperators.OR, 0x10, h0)).fma(FloatVector.fromArray(F, xp, 32 * b + e), sm);
                    sm = Simd.intsToFloats(qi.and(0xF0).lanewise(VectorOperators.OR, 0x100, h1)).fma(FloatVector.fromArray(F, xp, 32 * b + 16 + e), sm);
                }
            }
            acc = sm.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p))), acc);
        }
        return Simd.sum(acc);
    }

    @Override
    void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row) + (long) (from / QK) * BLOCK;
        off -= from;   // block b's weights go to out[off + b * QK ..]
        for (int b = from / QK, nb = to / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p));
            IntVector qh = IntVector.broadcast(I, s.get(INT_LE, p + 2));
            int o = off + b * QK;
            for (int j = 0; j < QK / 2; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 6 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    int e = j + k * L;
                    IntVector qi = Simd.toInts(q, k);
                    IntVector h0 = qh.lanewise(VectorOperators.LSHR, IntVector.fromArray(I, IOTA32, e)).and(1).lanewise(VectorOperators.LSHL, 4);
                    IntVector h1 = qh.lanewise(VectorOperators.LSHR, IntVector.fromArray(I, IOTA32, e + 16)).and(1).lanewise(VectorOperators.LSHL, 4);
                    Simd.intsToFloats(qi.and(0xF).or(h0).sub(16)).mul(d).intoArray(out, o + e);
                    Simd.intsToFloats(qi.lanewise(VectorOperators.ASHR, 4).and(0xF).or(h1).sub(16)).mul(d).intoArray(out, o + 16 + e);
                }
            }
        }
    }
}
