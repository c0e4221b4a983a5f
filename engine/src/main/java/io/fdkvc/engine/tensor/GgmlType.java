package io.fdkvc.engine.tensor;

/** The GGML tensor types this engine reads, with their GGUF type ids and block layouts. */
public enum GgmlType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),
    Q8_0(8, 32, 34),
    Q4_K(12, 256, 144),
    Q6_K(14, 256, 210),
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
