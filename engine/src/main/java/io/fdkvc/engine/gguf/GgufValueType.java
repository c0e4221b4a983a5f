package io.fdkvc.engine.gguf;

/** GGUF metadata value types with their ids and the least number of bytes a value occupies. */
public enum GgufValueType {
    UINT8(0, 1), INT8(1, 1), UINT16(2, 2), INT16(3, 2), UINT32(4, 4), INT32(5, 4), FLOAT32(6, 4),
    BOOL(7, 1), STRING(8, 8), ARRAY(9, 12), UINT64(10, 8), INT64(11, 8), FLOAT64(12, 8);

    public final int id;
    /** Bytes of a scalar; for STRING and ARRAY the size of an empty one (length fields only). */
    public final int minBytes;

    GgufValueType(int id, int minBytes) {
        this.id = id;
        this.minBytes = minBytes;
    }

    /** The type with this id, or null. */
    public static GgufValueType byId(int id) {
        for (GgufValueType t : values()) if (t.id == id) return t;
        return null;
    }
}
