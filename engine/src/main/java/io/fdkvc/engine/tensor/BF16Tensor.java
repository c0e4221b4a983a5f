package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.L;
import static io.fdkvc.engine.tensor.Simd.LE;
import static io.fdkvc.engine.tensor.Simd.S;
import static io.fdkvc.engine.tensor.Simd.SHORT_LE;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/** bfloat16 rows: the upper 16 bits of a float32, so widening is a 16-bit shift. */
public final class BF16Tensor extends SegmentTensor {
    public BF16Tensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.BF16, seg, rows, cols);
    }

    static float bf16ToFloat(short bits) {
        return Float.intBitsToFloat(bits << 16);
    }

    private static FloatVector widen(ShortVector v) {
        return Simd.shortsToInts(v).lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    @Override
    public float dot(int row, float[] x, int xOff) {
        MemorySegment s = seg;
        long p = rowStart(row);
        int n = cols, i = 0;
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        for (int up = n - 2 * L; i <= up; i += 2 * L, p += 4L * L) {
            FloatVector w0 = widen(ShortVector.fromMemorySegment(S, s, p, LE));
            FloatVector w1 = widen(ShortVector.fromMemorySegment(S, s, p + 2L * L, LE));
            acc0 = w0.fma(FloatVector.fromArray(F, x, xOff + i), acc0);
            acc1 = w1.fma(FloatVector.fromArray(F, x, xOff + i + L), acc1);
        }
        float r = Simd.sum(acc0.add(acc1));
        for (; i < n; i++, p += 2) r += bf16ToFloat(s.get(SHORT_LE, p)) * x[xOff + i];
        return r;
    }

    @Override
    void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        long p = rowStart(row) + 2L * from;
        int i = 0, n = to - from;
        for (int up = n - L; i <= up; i += L, p += 2L * L) widen(ShortVector.fromMemorySegment(S, seg, p, LE)).intoArray(out, off + i);
        for (; i < n; i++, p += 2) out[off + i] = bf16ToFloat(seg.get(SHORT_LE, p));
    }
}
