package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.FLOAT_LE;
import static io.fdkvc.engine.tensor.Simd.L;
import static io.fdkvc.engine.tensor.Simd.LE;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/** Little-endian float32 rows in a memory segment. */
public final class F32SegmentTensor extends SegmentTensor {
    public F32SegmentTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.F32, seg, rows, cols);
    }

    @Override
    public float dot(int row, float[] x, int xOff) {
        MemorySegment s = seg;
        long p = rowStart(row);
        int n = cols, i = 0;
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        for (int up = n - 2 * L; i <= up; i += 2 * L, p += 8L * L) {
            acc0 = FloatVector.fromMemorySegment(F, s, p, LE).fma(FloatVector.fromArray(F, x, xOff + i), acc0);
            acc1 = FloatVector.fromMemorySegment(F, s, p + 4L * L, LE).fma(FloatVector.fromArray(F, x, xOff + i + L), acc1);
        }
        float r = Simd.sum(acc0.add(acc1));
        for (; i < n; i++, p += 4) r += s.get(FLOAT_LE, p) * x[xOff + i];
        return r;
    }

    @Override
    void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        MemorySegment.copy(seg, FLOAT_LE, rowStart(row) + 4L * from, out, off, to - from);
    }
}
