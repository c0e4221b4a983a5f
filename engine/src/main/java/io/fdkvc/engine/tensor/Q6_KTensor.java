package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.B;
import static io.fdkvc.engine.tensor.Simd.BL;
import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.L;
import static io.fdkvc.engine.tensor.Simd.LE;
import static io.fdkvc.engine.tensor.Simd.PARTS;
import static io.fdkvc.engine.tensor.Simd.SHORT_LE;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * GGML Q6_K: super-blocks of 256 weights (210 bytes): 128 bytes {@code ql} (low 4 bits), 64 bytes
 * {@code qh} (high 2 bits), 16 signed 8-bit scales (one per 16 weights), f16 {@code d}. Each half
 * of 128 weights uses 64 bytes of ql and 32 of qh: for l in 0..31, weight l takes the low nibble
 * of ql[l] and bits 0-1 of qh[l], weight l+32 the low nibble of ql[l+32] and bits 2-3, weight l+64
 * the high nibble of ql[l] and bits 4-5, weight l+96 the high nibble of ql[l+32] and bits 6-7.
 * Weight = d * scale * (q - 32).
 */
public final class Q6_KTensor extends SegmentTensor {
    static final int QK = 256, BLOCK = 210;

    public Q6_KTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q6_K, seg, rows, cols);
    }

    @Override
    public float dot(int row, float[] x, int xOff) {
        long p = rowStart(row);
        // Two passes over the row (the second hits L1): one kernel with all four quarters of a
        // half super-block exceeds C2's node budget and loses vector intrinsics, so each pass
        // decodes the two quarters that share a run of ql bytes.
        return pass(seg, p, cols / QK, x, xOff, 0) + pass(seg, p, cols / QK, x, xOff, 1);
    }

    /**
     * Sum over the row of the quarters {@code v} (low nibbles of ql[32v ..], qh bits 2v..2v+1)
     * and {@code v + 2} (high nibbles of the same bytes, qh bits 2v+4..2v+5) of every half.
     * Products are summed per group of 16 weights before the group's scale is applied, so the
     * scale costs one FMA per group rather than one multiply per vector.
     */
    private static float pass(MemorySegment s, long p, int nb, float[] x, int xOff, int v) {
        FloatVector acc = FloatVector.zero(F);
        int shLo = 4 - 2 * v;   // qh bits 2v, 2v+1 -> bits 4, 5 (left shift by 4 or 2)
        int shHi = 2 * v;       // qh bits 2v+4, 2v+5 -> bits 4, 5 (right shift by 0 or 2)
        for (int b = 0; b < nb; b++, p += BLOCK) {
            FloatVector blockSum = FloatVector.zero(F);
            for (int h = 0; h < 2; h++) {
                long qlp = p + 64 * h + 32 * v, qhp = p + 128 + 32 * h, scp = p + 192 + 8 * h + 2 * v;
                int xa = xOff + b * QK + 128 * h + 32 * v;
                for (int g = 0; g < 2; g++) {
                    FloatVector lo = FloatVector.zero(F), hi = FloatVector.zero(F);
                    for (int m = 0; m < 16; m += BL) {
                        int l = 16 * g + m;
                        ByteVector bl = ByteVector.fromMemorySegment(B, s, qlp + l, LE);
                        ByteVector bh = ByteVector.fromMemorySegment(B, s, qhp + l, LE);
                        for (int k = 0; k < PARTS; k++) {
                            // bit surgery in 32-bit lanes: x86 has no byte shifts
                            IntVector ql = Simd.toInts(bl, k), qh = Simd.toInts(bh, k);
                            IntVector q1 = ql.and(0xF).or(qh.lanewise(VectorOperators.LSHL, shLo).and(0x30)).sub(32);
                            IntVector q3 = ql.lanewise(VectorOperators.ASHR, 4).and(0xF).or(qh.lanewise(VectorOperators.ASHR, shHi).and(0x30)).sub(32);
                            lo = Simd.intsToFloats(q1).fma(FloatVector.fromArray(F, x, xa + l + k * L), lo);
                            hi = Simd.intsToFloats(q3).fma(FloatVector.fromArray(F, x, xa + 64 + l + k * L), hi);
                        }
                    }
                    blockSum = lo.fma(FloatVector.broadcast(F, (float) s.get(ValueLayout.JAVA_BYTE, scp + g)), blockSum);
                    blockSum = hi.fma(FloatVector.broadcast(F, (float) s.get(ValueLayout.JAVA_BYTE, scp + g + 4)), blockSum);
                }
            }
            acc = blockSum.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p + 208))), acc);
        }
        return Simd.sum(acc);
    }

    @Override
    public void dequantizeRow(int row, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p + 208));
            for (int h = 0; h < 2; h++) {
                long qhp = p + 128 + 32 * h, scp = p + 192 + 8 * h;
                int o = off + b * QK + 128 * h;
                // quarter u: low (u < 2) or high nibbles of ql[32 * (u & 1) ..], qh bits 2u, 2u+1
                // (one loop body for the four quarters keeps C2 within its node budget)
                for (int u = 0; u < 4; u++) {
                    long qlp = p + 64 * h + 32 * (u & 1);
                    int shLo = 4 * (u >> 1), shHi = 2 * u;
                    for (int l = 0; l < 32; l += BL) {
                        ByteVector bl = ByteVector.fromMemorySegment(B, s, qlp + l, LE);
                        ByteVector bh = ByteVector.fromMemorySegment(B, s, qhp + l, LE);
                        for (int k = 0; k < PARTS; k++) {
                            // bit surgery in 32-bit lanes: x86 has no byte shifts
                            IntVector lo = Simd.toInts(bl, k).lanewise(VectorOperators.ASHR, shLo).and(0xF);
                            IntVector hi = Simd.toInts(bh, k).lanewise(VectorOperators.ASHR, shHi).and(3).lanewise(VectorOperators.LSHL, 4);
                            int li = l + k * L;   // L <= 16, so a vector never straddles two scales
                            float scale = d * s.get(ValueLayout.JAVA_BYTE, scp + 2 * u + li / 16);
                            Simd.intsToFloats(lo.or(hi).sub(32)).mul(scale).intoArray(out, o + 32 * u + li);
                        }
                    }
                }
            }
        }
    }
}
