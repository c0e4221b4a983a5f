package io.fdkvc.engine.gguf;

import io.fdkvc.engine.tensor.GgmlType;

/**
 * One tensor-info record of a GGUF file.
 *
 * @param dims       ne[0], ne[1], ...: ne[0] is the row length (columns)
 * @param typeId     the GGML type id as stored
 * @param type       the type, or null when this engine does not read {@code typeId}
 * @param offset     offset of the data relative to the start of the data section
 * @param fileOffset absolute offset of the data in the file
 * @param byteSize   bytes of data, or -1 for an unsupported type
 */
public record GgufTensorInfo(String name, long[] dims, int typeId, GgmlType type, long offset, long fileOffset,
                             long byteSize) {
    public long elements() {
        long n = 1;
        for (long d : dims) n *= d;
        return n;
    }

    /** ne[0]. */
    public long cols() {
        return dims[0];
    }

    /** The product of ne[1..]: a matrix's rows, 1 for a vector. */
    public long rows() {
        long n = 1;
        for (int i = 1; i < dims.length; i++) n *= dims[i];
        return n;
    }

    /** GGML's name for a type id (also for types this engine does not read), for messages. */
    public static String typeName(int id) {
        return switch (id) {
            case 0 -> "F32"; case 1 -> "F16"; case 2 -> "Q4_0"; case 3 -> "Q4_1";
            case 6 -> "Q5_0"; case 7 -> "Q5_1"; case 8 -> "Q8_0"; case 9 -> "Q8_1";
            case 10 -> "Q2_K"; case 11 -> "Q3_K"; case 12 -> "Q4_K"; case 13 -> "Q5_K";
            case 14 -> "Q6_K"; case 15 -> "Q8_K"; case 16 -> "IQ2_XXS"; case 17 -> "IQ2_XS";
            case 18 -> "IQ3_XXS"; case 19 -> "IQ1_S"; case 20 -> "IQ4_NL"; case 21 -> "IQ3_S";
            case 22 -> "IQ2_S"; case 23 -> "IQ4_XS"; case 24 -> "I8"; case 25 -> "I16";
            case 26 -> "I32"; case 27 -> "I64"; case 28 -> "F64"; case 29 -> "IQ1_M";
            case 30 -> "BF16"; case 34 -> "TQ1_0"; case 35 -> "TQ2_0"; case 39 -> "MXFP4";
            default -> "unknown";
        };
    }
}
