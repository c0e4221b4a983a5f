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
 * GGML Q4_0: blocks of 32 weights stored as an f16 scale {@code d} and 16 bytes; byte j holds
 * element j in its low nibble and element j + 16 in its high nibble; weight = (nibble - 8) * d
 * (18 bytes per block).
 */
public final class Q4_0Tensor extends SegmentTensor {
    static final int QK = 32, BLOCK = 18;

    public Q4_0Tensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q4_0, seg, rows, cols);
    }

    @Override
    public float dot(int row, float[] x, int xOff) {
        MemorySegment s = seg;
        long p = rowStart(row);
        int nb = cols / QK;
        // one method on purpose: see Q8_0Tensor.dot
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < nb; b++, p += BLOCK) {
            int xb = xOff + b * QK;
            FloatVector lo = FloatVector.zero(F), hi = FloatVector.zero(F);
            for (int j = 0; j < QK / 2; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    // nibbles split in 32-bit lanes: x86 has no byte shifts
                    IntVector qi = Simd.toInts(q, k);
                    int xi = xb + j + k * L;
                    lo = Simd.intsToFloats(qi.and(0xF).sub(8)).fma(FloatVector.fromArray(F, x, xi), lo);
                    hi = Simd.intsToFloats(qi.lanewise(VectorOperators.ASHR, 4).and(0xF).sub(8)).fma(FloatVector.fromArray(F, x, xi + QK / 2), hi);
                }
            }
            acc = lo.add(hi).fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p))), acc);
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
            int o = off + b * QK;
            for (int j = 0; j < QK / 2; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    IntVector qi = Simd.toInts(q, k);   // nibbles split in 32-bit lanes, as in dot
                    Simd.intsToFloats(qi.and(0xF).sub(8)).mul(d).intoArray(out, o + j + k * L);
                    Simd.intsToFloats(qi.lanewise(VectorOperators.ASHR, 4).and(0xF).sub(8)).mul(d).intoArray(out, o + QK / 2 + j + k * L);
                }
            }
        }
    }
}
