package io.fdkvc.engine.tensor;

import java.lang.foreign.MemorySegment;

/**
 * Run in a fresh JVM by {@link ClassInitialisationTest}: makes a tensor of the type named by
 * its argument before any other class of the engine is used, and multiplies it once, so that
 * this type's classes are the first to initialise. Prints the product's first element.
 */
public final class FirstTensorMain {
    private FirstTensorMain() {}

    public static void main(String[] args) {
        GgmlType type = GgmlType.valueOf(args[0]);
        int rows = 32, cols = 256;
        byte[] zeros = new byte[rows * (cols / type.blockSize) * type.blockBytes];
        FloatTensor t = Tensors.view(type, MemorySegment.ofArray(zeros), rows, cols);
        float[] x = new float[cols], out = new float[rows];
        t.matmul(0, rows, x, 0, cols, 1, out, 0, rows);
        System.out.println(out[0]);
    }
}
