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
import jdk.incubator.vector.VectorOperators;

/**
 * GGML Q8_0: blocks of 32 weights stored as an f16 scale {@code d} followed by 32 signed bytes
 * {@code q}; weight i is {@code d * q[i]} (34 bytes per block).
 */
public final class Q8_0Tensor extends SegmentTensor {
    static final int QK = 32, BLOCK = 34;

    public Q8_0Tensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q8_0, seg, rows, cols);
    }

    @Override
    public float dot(int row, float[] x, int xOff) {
        MemorySegment s = seg;
        long base = rowStart(row);
        int nb = cols / QK;
        // Everything stays in this one method: a helper returning a vector that C2 declines to
        // inline would box the vector on every block. Two blocks per iteration with their own
        // accumulators: the per-block FMA with the scale is the only loop-carried dependency,
        // and two chains halve it (about 10% on Zen 3).
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        int b = 0;
        for (; b + 1 < nb; b += 2) {
            long p = base + b * (long) BLOCK;
            int xb = xOff + b * QK;
            FloatVector s0 = FloatVector.zero(F), s1 = FloatVector.zero(F);
            for (int j = 0; j < QK; j += BL) {
                ByteVector q0 = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                ByteVector q1 = ByteVector.fromMemorySegment(B, s, p + BLOCK + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    s0 = Simd.toFloats(q0, k).fma(FloatVector.fromArray(F, x, xb + j + k * L), s0);
                    s1 = Simd.toFloats(q1, k).fma(FloatVector.fromArray(F, x, xb + QK + j + k * L), s1);
                }
            }
            acc0 = s0.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p))), acc0);
            acc1 = s1.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p + BLOCK))), acc1);
        }
        if (b < nb) {
            long p = base + b * (long) BLOCK;
            int xb = xOff + b * QK;
            FloatVector s0 = FloatVector.zero(F);
            for (int j = 0; j < QK; j += BL) {
                ByteVector q0 = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) s0 = Simd.toFloats(q0, k).fma(FloatVector.fromArray(F, x, xb + j + k * L), s0);
            }
            acc0 = s0.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p))), acc0);
        }
        return Simd.sum(acc0.add(acc1));
    }

    @Override
    public void dequantizeRow(int row, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p));
            int o = off + b * QK;
            for (int j = 0; j < QK; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) Simd.toFloats(q, k).mul(d).intoArray(out, o + j + k * L);
            }
        }
    }
}
