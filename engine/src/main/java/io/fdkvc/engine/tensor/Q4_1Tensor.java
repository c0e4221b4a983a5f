package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.B;
import static io.fdkvc.engine.tensor.Simd.BL;
import static io.fdkvc.engine.tensor.Simd.F;
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
 * GGML Q4_1: blocks of 32 weights (20 bytes): f16 scale {@code d}, f16 offset {@code m}, then 16
 * bytes whose low nibbles are elements 0..15 and high nibbles elements 16..31; weight = q * d + m.
 */
public final class Q4_1Tensor extends SegmentTensor {
    static final int QK = 32, BLOCK = 20;

    public Q4_1Tensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q4_1, seg, rows, cols);
    }

    @Override
    public float dot(int row, float[] x, int xOff) {
        MemorySegment s = seg;
        long p = rowStart(row);
        // sum x (q d + m) = d * (q . x) + m * sum(x), per block; one method on purpose (see Q8_0Tensor.dot)
        FloatVector acc = FloatVector.zero(F), accM = FloatVector.zero(F);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            int xb = xOff + b * QK;
            FloatVector qx = FloatVector.zero(F), sx = FloatVector.zero(F);
            for (int j = 0; j < QK / 2; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 4 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    IntVector qi = Simd.toInts(q, k);   // nibbles split in 32-bit lanes: x86 has no byte shifts
                    FloatVector vl = FloatVector.fromArray(F, x, xb + j + k * L);
                    FloatVector vh = FloatVector.fromArray(F, x, xb + QK / 2 + j + k * L);
                    qx = Simd.intsToFloats(qi.and(0xF)).fma(vl, qx);
                    qx = Simd.intsToFloats(qi.lanewise(VectorOperators.ASHR, 4).and(0xF)).fma(vh, qx);
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
            int o = off + b * QK;
            for (int j = 0; j < QK / 2; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 4 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    IntVector qi = Simd.toInts(q, k);
                    // multiply, then add: ggml's order (no fused multiply-add), so the bits agree
                    Simd.intsToFloats(qi.and(0xF)).mul(d).add(m).intoArray(out, o + j + k * L);
                    Simd.intsToFloats(qi.lanewise(VectorOperators.ASHR, 4).and(0xF)).mul(d).add(m).intoArray(out, o + QK / 2 + j + k * L);
                }
            }
        }
    }
}
