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
 * GGML Q5_0: blocks of 32 weights (22 bytes): f16 scale {@code d}, a little-endian 32-bit word
 * {@code qh} whose bit i is the fifth bit of element i, then 16 bytes of low nibbles (byte j:
 * element j low, element j + 16 high); weight = (q - 16) * d. llama-quantize falls back to this
 * type from Q4_K when a row is not a multiple of 256 (SmolLM2's 576, Qwen2.5's 896).
 */
public final class Q5_0Tensor extends SegmentTensor {
    static final int QK = 32, BLOCK = 22;

    public Q5_0Tensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q5_0, seg, rows, cols);
    }

    @Override
    public float dot(int row, float[] x, int xOff) {
        MemorySegment s = seg;
        long p = rowStart(row);
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            int xb = xOff + b * QK;
            IntVector qh = IntVector.broadcast(I, s.get(INT_LE, p + 2));
            FloatVector lo = FloatVector.zero(F), hi = FloatVector.zero(F);
            for (int j = 0; j < QK / 2; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 6 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    int e = j + k * L;
                    IntVector qi = Simd.toInts(q, k);
                    // the fifth bits: lane i takes bit e + i (or e + 16 + i) of qh, a per-lane shift
                    IntVector h0 = qh.lanewise(VectorOperators.LSHR, IntVector.fromArray(I, IOTA32, e)).and(1).lanewise(VectorOperators.LSHL, 4);
                    IntVector h1 = qh.lanewise(VectorOperators.LSHR, IntVector.fromArray(I, IOTA32, e + 16)).and(1).lanewise(VectorOperators.LSHL, 4);
                    lo = Simd.intsToFloats(qi.and(0xF).or(h0).sub(16)).fma(FloatVector.fromArray(F, x, xb + e), lo);
                    hi = Simd.intsToFloats(qi.lanewise(VectorOperators.ASHR, 4).and(0xF).or(h1).sub(16)).fma(FloatVector.fromArray(F, x, xb + 16 + e), hi);
                }
            }
            acc = lo.add(hi).fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p))), acc);
        }
        return Simd.sum(acc);
    }

    @Override
    public void dequantizeRow(int row, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
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
