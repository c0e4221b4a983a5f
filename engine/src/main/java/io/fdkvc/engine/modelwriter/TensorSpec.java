package io.fdkvc.engine.modelwriter;

/**
 * One tensor of a model file: its GGUF name, what it is, its layer (-1 for the model's own) and
 * its shape, {@code rows} of {@code cols} values (a vector has one row and is written 1-D).
 */
public record TensorSpec(String name, Role role, int layer, long rows, long cols) {
    /** What a tensor is, for the choice of its type and of its values. */
    public enum Role {
        TOKEN_EMBEDDING, OUTPUT, OUTPUT_NORM,
        ATTN_NORM, ATTN_Q, ATTN_K, ATTN_V, ATTN_QKV, ATTN_Q_BIAS, ATTN_K_BIAS, ATTN_V_BIAS, ATTN_Q_NORM, ATTN_K_NORM,
        ATTN_OUTPUT, ATTN_POST_NORM,
        FFN_NORM, FFN_GATE, FFN_UP, FFN_GATE_UP, FFN_DOWN, FFN_POST_NORM,
        ROPE_FACTORS_LONG, ROPE_FACTORS_SHORT;

        /** A 2-D weight matrix (the others are vectors). */
        public boolean matrix() {
            return switch (this) {
                case TOKEN_EMBEDDING, OUTPUT, ATTN_Q, ATTN_K, ATTN_V, ATTN_QKV, ATTN_OUTPUT, FFN_GATE, FFN_UP, FFN_GATE_UP, FFN_DOWN -> true;
                default -> false;
            };
        }

        /** An RMSNorm weight vector. */
        public boolean norm() {
            return switch (this) {
                case OUTPUT_NORM, ATTN_NORM, ATTN_Q_NORM, ATTN_K_NORM, ATTN_POST_NORM, FFN_NORM, FFN_POST_NORM -> true;
                default -> false;
            };
        }
    }

    public TensorSpec {
        if (rows < 1 || cols < 1) throw new IllegalArgumentException(name + ": shape " + rows + " x " + cols);
        if (!role.matrix() && rows != 1) throw new IllegalArgumentException(name + ": a vector has one row");
    }

    /** GGUF's ne[0], ne[1], ...: columns then rows for a matrix, the length for a vector. */
    public long[] dims() {
        return role.matrix() ? new long[] {cols, rows} : new long[] {cols};
    }

    public long elements() {
        return rows * cols;
    }
}
