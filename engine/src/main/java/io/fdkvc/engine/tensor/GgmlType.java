package io.fdkvc.engine.tensor;

/** The GGML tensor types this engine reads, with their GGUF type ids and block layouts. */
public enum GgmlType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),
    Q4_1(3, 32, 20),
    Q5_0(6, 32, 22),
    Q5_1(7, 32, 24),
    Q8_0(8, 32, 34),
    Q2_K(10, 256, 84),
    Q3_K(11, 256, 110),
    Q4_K(12, 256, 144),
    Q5_K(13, 256, 176),
    Q6_K(14, 256, 210),
    IQ4_NL(20, 32, 18),
    IQ4_XS(23, 256, 136),
    BF16(30, 1, 2);

    /** The id in a GGUF tensor-info record. */
    public final int id;
    /** Elements per block. */
    public final int blockSize;
    /** Bytes per block. */
    public final int blockBytes;

    GgmlType(int id, int blockSize, int blockBytes) {
        this.id = id;
        this.blockSize = blockSize;
        this.blockBytes = blockBytes;
    }

    /** Bytes taken by {@code elements} elements (a multiple of the block size). */
    public long bytes(long elements) {
        return elements / blockSize * blockBytes;
    }

    /** The type with this GGUF id, or null if this engine does not read it. */
    public static GgmlType byId(int id) {
        for (GgmlType t : values()) if (t.id == id) return t;
        return null;
    }
}
