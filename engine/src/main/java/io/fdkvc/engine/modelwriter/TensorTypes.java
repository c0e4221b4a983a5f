package io.fdkvc.engine.modelwriter;

import io.fdkvc.engine.tensor.GgmlType;

/** The GGML type each tensor of a model file is written in. */
@FunctionalInterface
public interface TensorTypes {
    GgmlType typeOf(TensorSpec tensor);

    /**
     * Every matrix in {@code type}, vectors in F32 (as llama.cpp's converters and llama-quantize
     * keep them); a matrix whose rows are not whole blocks of {@code type} in F16.
     */
    static TensorTypes uniform(GgmlType type) {
        return t -> !t.role().matrix() ? GgmlType.F32 : t.cols() % type.blockSize == 0 ? type : GgmlType.F16;
    }
}
