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
import jdk.incubator.vector.VectorOperators;

/**
 * GGML Q5_1: blocks of 32 weights (24 bytes): f16 scale {@code d}, f16 offset {@code m}, the
 * 32-bit word of fifth bits, 16 bytes of nibbles (as {@link Q5_0Tensor}); weight = q * d + m.
 */
public final class Q5_1Tensor extends SegmentTensor {
    static final int QK = 32, BLOCK = 24;

    public Q5_1Tensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q5_1, seg, rows, cols);
    }

    @Override
    public float dot(int row, float[] x, int xOff) {
        MemorySegment s = seg;
        long p = rowStart(row);
        FloatVector acc = FloatVector.zero(F), accM = FloatVector.zero(F);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            int xb = xOff + b * QK;
            IntVector qh = IntVector.broadcast(I, s.get(INT_LE, p + 4));
            FloatVector qx = FloatVector.zero(F), sx = FloatVector.zero(F);
            for (int j = 0; j < QK / 2; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 8 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    int e = j + k * L;
                    IntVector qi = Simd.toInts(q, k);
                    IntVector h0 = qh.lanewise(VectorOperators.LSHR, IntVector.fromArray(I, IOTA32, e)).and(1).lanewise(VectorOperators.LSHL, 4);
                    IntVector h1 = qh.lanewise(VectorOperators.LSHR, IntVector.fromArray(I, IOTA32, e + 16)).and(1).lanewise(VectorOperators.LSHL, 4);
                    FloatVector vl = FloatVector.fromArray(F, x, xb + e), vh = FloatVector.fromArray(F, x, xb + 16 + e);
                    qx = Simd.intsToFloats(qi.and(0xF).or(h0)).fma(vl, qx);
                    qx = Simd.intsToFloats(qi.lanewise(VectorOperators.ASHR, 4).and(0xF).or(h1)).fma(vh, qx);
                    sx = sx.add(vl).add(vh);
                }
            }
            acc = qx.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p))), acc);
            accM = sx.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p + 2))), accM);
        }
        return Simd.sum(acc.add(accM));
    }

    @Override
    void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row) + (long) (from / QK) * BLOCK;
        off -= from;   // block b's weights go to out[off + b * QK ..]
        for (int b = from / QK, nb = to / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p)), m = Float.float16ToFloat(s.get(SHORT_LE, p + 2));
            IntVector qh = IntVector.broadcast(I, s.get(INT_LE, p + 4));
            int o = off + b * QK;
            for (int j = 0; j < QK / 2; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 8 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    int e = j + k * L;
                    IntVector qi = Simd.toInts(q, k);
                    IntVector h0 = qh.lanewise(VectorOperators.LSHR, IntVector.fromArray(I, IOTA32, e)).and(1).lanewise(VectorOperators.LSHL, 4);
                    IntVector h1 = qh.lanewise(VectorOperators.LSHR, IntVector.fromArray(I, IOTA32, e + 16)).and(1).lanewise(VectorOperators.LSHL, 4);
                    Simd.intsToFloats(qi.and(0xF).or(h0)).mul(d).add(m).intoArray(out, o + e);
                    Simd.intsToFloats(qi.lanewise(VectorOperators.ASHR, 4).and(0xF).or(h1)).mul(d).add(m).intoArray(out, o + 16 + e);
                }
            }
        }
    }
}
