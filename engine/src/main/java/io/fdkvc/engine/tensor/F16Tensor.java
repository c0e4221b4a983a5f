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

/** IEEE half-precision rows; lanes are widened to floats in registers (there is no vector half type). */
public final class F16Tensor extends SegmentTensor {
    public F16Tensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.F16, seg, rows, cols);
    }

    @Override
    public float dot(int row, float[] x, int xOff) {
        MemorySegment s = seg;
        long p = rowStart(row);
        int n = cols, i = 0;
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        for (int up = n - 2 * L; i <= up; i += 2 * L, p += 4L * L) {
            FloatVector w0 = Simd.halfToFloat(Simd.shortsToInts(ShortVector.fromMemorySegment(S, s, p, LE)));
            FloatVector w1 = Simd.halfToFloat(Simd.shortsToInts(ShortVector.fromMemorySegment(S, s, p + 2L * L, LE)));
            acc0 = w0.fma(FloatVector.fromArray(F, x, xOff + i), acc0);
            acc1 = w1.fma(FloatVector.fromArray(F, x, xOff + i + L), acc1);
        }
        float r = Simd.sum(acc0.add(acc1));
        for (; i < n; i++, p += 2) r += Float.float16ToFloat(s.get(SHORT_LE, p)) * x[xOff + i];
        return r;
    }

    @Override
    void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        long p = rowStart(row) + 2L * from;
        for (int i = 0, n = to - from; i < n; i++, p += 2) out[off + i] = Float.float16ToFloat(seg.get(SHORT_LE, p));
    }
}
