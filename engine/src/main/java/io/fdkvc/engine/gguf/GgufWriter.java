package io.fdkvc.engine.gguf;

import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Quantizer;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Writes GGUF version 3 files (little-endian): metadata of every GGUF value type and tensors of
 * every {@link GgmlType}, quantising float data with {@link Quantizer}. Used by tests and by the
 * benchmarks to synthesise models. Tensor data is padded to the alignment after every tensor.
 *
 * <p>Unless the caller sets it ({@link #fileType}), {@code general.file_type} (llama.cpp's
 * {@code llama_ftype}, which its tools print and some loaders read) is written, after the other
 * metadata, as the type of most matrices ({@link #fileTypeOf}), as llama.cpp's converters and
 * llama-quantize write it; a file without matrices (no model) gets none.
 *
 * <pre>{@code
 * new GgufWriter()
 *     .putString("general.architecture", "llama")
 *     .putUInt32("llama.block_count", 2)
 *     .addTensor("token_embd.weight", GgmlType.Q8_0, data, 64, 512)   // ne[0] = 64 columns, 512 rows
 *     .write(path);
 * }</pre>
 */
public final class GgufWriter {
    /** An array value: its element type and a Java array (see {@link #putArray}). */
    public record Array(GgufValueType elementType, Object values) {
        public Array {
            Objects.requireNonNull(elementType, "elementType");
            Objects.requireNonNull(values, "values");
            if (!values.getClass().isArray()) throw new IllegalArgumentException("values must be a Java array");
        }
    }

    private record Value(GgufValueType type, Object value) {}

    /**
     * Float data of a tensor produced while the file is written, a few rows at a time, so that a
     * model larger than the heap can be written: fills {@code into[0 .. count*cols)} with rows
     * {@code firstRow .. firstRow+count) (ne[0] = cols values each). Rows are asked for in order.
     */
    @FunctionalInterface
    public interface Rows {
        void fill(long firstRow, int count, float[] into);
    }

    /** A tensor's bytes: given ({@code data}), or quantised from {@code rows} while writing ({@code type}). */
    private record Tensor(String name, long[] dims, int typeId, byte[] data, GgmlType type, Rows rows) {
        long byteCount() {
            return data != null ? data.length : type.bytes(elements(dims));
        }
    }

    /** Floats quantised per chunk of rows while streaming a {@link Rows} tensor. */
    private static final int CHUNK_FLOATS = 1 << 20;

    private final Map<String, Value> metadata = new LinkedHashMap<>();
    private final List<Tensor> tensors = new ArrayList<>();
    private int alignment = GgufFile.DEFAULT_ALIGNMENT;

    /**
     * Sets the data alignment (a power of two) and records it as {@code general.alignment}
     * (uint32) as GGUF requires for a non-default alignment.
     */
    public GgufWriter alignment(int alignment) {
        if (alignment <= 0 || Integer.bitCount(alignment) != 1) throw new IllegalArgumentException("alignment must be a power of two");
        this.alignment = alignment;
        return putUInt32("general.alignment", alignment);
    }

    /** The metadata key llama.cpp reads the file's quantisation preset from. */
    public static final String FILE_TYPE = "general.file_type";

    /**
     * Sets {@code general.file_type} (uint32) to llama.cpp's {@code llama_ftype} id, e.g. 15 for
     * Q4_K_M, whose mix of tensor types no single {@link GgmlType} names.
     */
    public GgufWriter fileType(int llamaFtype) {
        if (llamaFtype < 0) throw new IllegalArgumentException("file type must be >= 0, not " + llamaFtype);
        return putUInt32(FILE_TYPE, llamaFtype);
    }

    /**
     * llama.cpp's {@code llama_ftype} for a file whose matrices are mostly {@code type}: the
     * "MOSTLY_" preset of that type, with the medium ("_M") preset for Q3_K, Q4_K and Q5_K.
     */
    public static int fileTypeOf(GgmlType type) {
        return switch (type) {
            case F32 -> 0;
            case F16 -> 1;
            case Q4_0 -> 2;
            case Q4_1 -> 3;
            case Q8_0 -> 7;
            case Q5_0 -> 8;
            case Q5_1 -> 9;
            case Q2_K -> 10;
            case Q3_K -> 12;
            case Q4_K -> 15;
            case Q5_K -> 17;
            case Q6_K -> 18;
            case IQ4_NL -> 25;
            case IQ4_XS -> 30;
            case BF16 -> 32;
        };
    }

    /**
     * Adds a metadata entry (replacing one with the same key). Scalars: a Number for the integer
     * and float types (range-checked), a Boolean for BOOL, a String for STRING; ARRAY takes an
     * {@link Array}.
     */
    public GgufWriter put(String key, GgufValueType type, Object value) {
        Objects.requireNonNull(key, "key");
        checkValue(type, value);
        metadata.put(key, new Value(type, value));
        return this;
    }

    public GgufWriter putString(String key, String v) { return put(key, GgufValueType.STRING, v); }
    public GgufWriter putBool(String key, boolean v) { return put(key, GgufValueType.BOOL, v); }
    public GgufWriter putUInt8(String key, int v) { return put(key, GgufValueType.UINT8, v); }
    public GgufWriter putInt8(String key, int v) { return put(key, GgufValueType.INT8, v); }
    public GgufWriter putUInt16(String key, int v) { return put(key, GgufValueType.UINT16, v); }
    public GgufWriter putInt16(String key, int v) { return put(key, GgufValueType.INT16, v); }
    public GgufWriter putUInt32(String key, long v) { return put(key, GgufValueType.UINT32, v); }
    public GgufWriter putInt32(String key, int v) { return put(key, GgufValueType.INT32, v); }
    /** uint64 with the bits of {@code v} (values above Long.MAX_VALUE are negative longs). */
    public GgufWriter putUInt64(String key, long v) { return put(key, GgufValueType.UINT64, v); }
    public GgufWriter putInt64(String key, long v) { return put(key, GgufValueType.INT64, v); }
    public GgufWriter putFloat32(String key, float v) { return put(key, GgufValueType.FLOAT32, v); }
    public GgufWriter putFloat64(String key, double v) { return put(key, GgufValueType.FLOAT64, v); }

    /**
     * An array entry. {@code values}: String[] for STRING; float[] for FLOAT32; double[] for
     * FLOAT64; int[] for INT8, UINT8, INT16, UINT16, INT32 and UINT32 (range-checked; UINT32
     * takes the int's bits); long[] for INT64 and UINT64; boolean[] for BOOL; Array[] (or an
     * Object[] of Arrays) for ARRAY, each inner array with its own element type.
     */
    public GgufWriter putArray(String key, GgufValueType elementType, Object values) {
        return put(key, GgufValueType.ARRAY, new Array(elementType, values));
    }

    /**
     * Adds a tensor quantised to {@code type} from {@code data} (row-major, ne[0] fastest).
     * {@code dims} are GGUF's ne[0], ne[1], ...: for a matrix, columns then rows.
     */
    public GgufWriter addTensor(String name, GgmlType type, float[] data, long... dims) {
        long n = elements(dims);
        if (n != data.length) throw new IllegalArgumentException(name + ": dims hold " + n + " elements, data has " + data.length);
        if (dims[0] % type.blockSize != 0) throw new IllegalArgumentException(name + ": ne[0] = " + dims[0] + " is not a multiple of " + type.blockSize);
        return addRawTensor(name, type.id, Quantizer.quantize(type, data), dims);
    }

    /**
     * Adds a tensor of {@code type} whose floats {@code rows} produces during {@link #write}, rows
     * of ne[0] values at a time, quantised as they come: only a chunk of rows is held in memory.
     */
    public GgufWriter addTensor(String name, GgmlType type, Rows rows, long... dims) {
        Objects.requireNonNull(rows, "rows");
        Objects.requireNonNull(type, "type");
        elements(dims);
        if (dims[0] % type.blockSize != 0) throw new IllegalArgumentException(name + ": ne[0] = " + dims[0] + " is not a multiple of " + type.blockSize);
        if (dims[0] > CHUNK_FLOATS) throw new IllegalArgumentException(name + ": rows of " + dims[0] + " values are too long to stream");
        checkNew(name);
        tensors.add(new Tensor(name, dims.clone(), type.id, null, type, rows));
        return this;
    }

    /** Removes the tensor named {@code name}; false when there is none. */
    public boolean removeTensor(String name) {
        return tensors.removeIf(t -> t.name.equals(name));
    }

    private void checkNew(String name) {
        for (Tensor t : tensors) if (t.name.equals(name)) throw new IllegalArgumentException("tensor " + name + " added twice");
    }

    /** Adds a tensor with already encoded bytes and any type id (also ones no reader supports). */
    public GgufWriter addRawTensor(String name, int typeId, byte[] data, long... dims) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(data, "data");
        elements(dims);
        checkNew(name);
        tensors.add(new Tensor(name, dims.clone(), typeId, data, null, null));
        return this;
    }

    private static long elements(long[] dims) {
        if (dims.length < 1 || dims.length > GgufFile.MAX_DIMS) throw new IllegalArgumentException("1 to 4 dims, not " + dims.length);
        long n = 1;
        for (long d : dims) {
            if (d < 0) throw new IllegalArgumentException("negative dimension " + d);
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    public void write(Path path) {
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(path), 1 << 16)) {
            write(out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + path, e);
        }
    }

    public byte[] toBytes() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /**
     * The file type written when none was set: that of the type most matrices (tensors of two or
     * more dimensions, of a type this engine knows) have, ties to the type that came first; null
     * when there are no such matrices.
     */
    private Value inferredFileType() {
        Map<Integer, Integer> count = new LinkedHashMap<>();
        for (Tensor t : tensors)
            if (t.dims.length >= 2 && GgmlType.byId(t.typeId) != null) count.merge(t.typeId, 1, Integer::sum);
        int best = -1, n = 0;
        for (Map.Entry<Integer, Integer> e : count.entrySet()) {
            if (e.getValue() > n) {
                best = e.getKey();
                n = e.getValue();
            }
        }
        return best < 0 ? null : new Value(GgufValueType.UINT32, (long) fileTypeOf(GgmlType.byId(best)));
    }

    public void write(OutputStream os) throws IOException {
        Le out = new Le(os);
        Map<String, Value> meta = metadata;
        Value inferred = meta.containsKey(FILE_TYPE) ? null : inferredFileType();
        if (inferred != null) {
            meta = new LinkedHashMap<>(metadata);
            meta.put(FILE_TYPE, inferred);
        }
        out.i32(GgufFile.MAGIC);
        out.i32(3);
        out.i64(tensors.size());
        out.i64(meta.size());
        for (Map.Entry<String, Value> e : meta.entrySet()) {
            out.str(e.getKey());
            out.i32(e.getValue().type.id);
            writeValue(out, e.getValue().type, e.getValue().value);
        }
        long offset = 0;
        for (Tensor t : tensors) {
            out.str(t.name);
            out.i32(t.dims.length);
            for (long d : t.dims) out.i64(d);
            out.i32(t.typeId);
            out.i64(offset);
            offset = align(offset + t.byteCount());
        }
        if (!tensors.isEmpty()) out.pad(align(out.count) - out.count);   // no data section without tensors
        for (Tensor t : tensors) {
            if (t.data != null) out.bytes(t.data);
            else stream(out, t);
            out.pad(align(t.byteCount()) - t.byteCount());
        }
        out.flush();
    }

    /** Writes a {@link Rows} tensor chunk by chunk of whole rows. */
    private static void stream(Le out, Tensor t) throws IOException {
        int cols = (int) t.dims[0];
        long rows = elements(t.dims) / Math.max(cols, 1);
        int perChunk = (int) Math.max(1, Math.min(rows, CHUNK_FLOATS / Math.max(cols, 1)));
        float[] buf = new float[perChunk * cols];
        for (long r = 0; r < rows; r += perChunk) {
            int n = (int) Math.min(perChunk, rows - r);
            t.rows.fill(r, n, buf);
            out.bytes(Quantizer.quantize(t.type, buf, 0, n * cols));
        }
    }

    private long align(long n) {
        return (n + alignment - 1) / alignment * alignment;
    }

    // ---- values ------------------------------------------------------------------------

    private static void checkValue(GgufValueType type, Object v) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(v, "value");
        switch (type) {
            case UINT8 -> range(v, 0, 0xFF);
            case INT8 -> range(v, Byte.MIN_VALUE, Byte.MAX_VALUE);
            case UINT16 -> range(v, 0, 0xFFFF);
            case INT16 -> range(v, Short.MIN_VALUE, Short.MAX_VALUE);
            case UINT32 -> range(v, 0, 0xFFFF_FFFFL);
            case INT32 -> range(v, Integer.MIN_VALUE, Integer.MAX_VALUE);
            case UINT64, INT64 -> range(v, Long.MIN_VALUE, Long.MAX_VALUE);
            case FLOAT32, FLOAT64 -> {
                if (!(v instanceof Float || v instanceof Double)) throw new IllegalArgumentException(type + " needs a Float or Double, not " + v.getClass().getSimpleName());
            }
            case BOOL -> {
                if (!(v instanceof Boolean)) throw new IllegalArgumentException("BOOL needs a Boolean");
            }
            case STRING -> {
                if (!(v instanceof String)) throw new IllegalArgumentException("STRING needs a String");
            }
            case ARRAY -> {
                if (!(v instanceof Array a)) throw new IllegalArgumentException("ARRAY needs a GgufWriter.Array");
                checkArray(a);
            }
        }
    }

    private static void range(Object v, long lo, long hi) {
        if (!(v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte))
            throw new IllegalArgumentException("an integer value is needed, not " + v.getClass().getSimpleName());
        long x = ((Number) v).longValue();
        if (x < lo || x > hi) throw new IllegalArgumentException(x + " is outside [" + lo + ", " + hi + "]");
    }

    private static void checkArray(Array a) {
        Object vs = a.values;
        boolean ok = switch (a.elementType) {
            case STRING -> vs instanceof String[];
            case FLOAT32 -> vs instanceof float[];
            case FLOAT64 -> vs instanceof double[];
            case INT8, UINT8, INT16, UINT16, INT32, UINT32 -> vs instanceof int[];
            case INT64, UINT64 -> vs instanceof long[];
            case BOOL -> vs instanceof boolean[];
            case ARRAY -> vs instanceof Object[];
        };
        if (!ok) throw new IllegalArgumentException("an array of " + a.elementType + " cannot hold a " + vs.getClass().getSimpleName());
        switch (a.elementType) {
            case INT8 -> { for (int x : (int[]) vs) range(x, Byte.MIN_VALUE, Byte.MAX_VALUE); }
            case UINT8 -> { for (int x : (int[]) vs) range(x, 0, 0xFF); }
            case INT16 -> { for (int x : (int[]) vs) range(x, Short.MIN_VALUE, Short.MAX_VALUE); }
            case UINT16 -> { for (int x : (int[]) vs) range(x, 0, 0xFFFF); }
            case STRING -> { for (String x : (String[]) vs) Objects.requireNonNull(x, "null string in array"); }
            case ARRAY -> {
                for (Object x : (Object[]) vs) {
                    if (!(x instanceof Array inner)) throw new IllegalArgumentException("an array of arrays holds GgufWriter.Array elements");
                    checkArray(inner);
                }
            }
            default -> { }
        }
    }

    private static void writeValue(Le out, GgufValueType type, Object v) throws IOException {
        switch (type) {
            case UINT8, INT8, BOOL -> out.u8(v instanceof Boolean b ? (b ? 1 : 0) : ((Number) v).intValue());
            case UINT16, INT16 -> out.i16(((Number) v).intValue());
            case UINT32, INT32 -> out.i32(((Number) v).intValue());
            case UINT64, INT64 -> out.i64(((Number) v).longValue());
            case FLOAT32 -> out.i32(Float.floatToRawIntBits(((Number) v).floatValue()));
            case FLOAT64 -> out.i64(Double.doubleToRawLongBits(((Number) v).doubleValue()));
            case STRING -> out.str((String) v);
            case ARRAY -> writeArray(out, (Array) v);
        }
    }

    private static void writeArray(Le out, Array a) throws IOException {
        out.i32(a.elementType.id);
        out.i64(java.lang.reflect.Array.getLength(a.values));
        switch (a.elementType) {
            case STRING -> { for (String s : (String[]) a.values) out.str(s); }
            case FLOAT32 -> { for (float f : (float[]) a.values) out.i32(Float.floatToRawIntBits(f)); }
            case FLOAT64 -> { for (double d : (double[]) a.values) out.i64(Double.doubleToRawLongBits(d)); }
            case INT8, UINT8 -> { for (int x : (int[]) a.values) out.u8(x); }
            case INT16, UINT16 -> { for (int x : (int[]) a.values) out.i16(x); }
            case INT32, UINT32 -> { for (int x : (int[]) a.values) out.i32(x); }
            case INT64, UINT64 -> { for (long x : (long[]) a.values) out.i64(x); }
            case BOOL -> { for (boolean b : (boolean[]) a.values) out.u8(b ? 1 : 0); }
            case ARRAY -> { for (Object x : (Object[]) a.values) writeArray(out, (Array) x); }
        }
    }

    /** Little-endian primitive output that counts bytes. */
    private static final class Le {
        private final OutputStream out;
        private final byte[] buf = new byte[8];
        long count;

        Le(OutputStream out) {
            this.out = out;
        }

        void u8(int v) throws IOException {
            out.write(v);
            count++;
        }

        void i16(int v) throws IOException {
            buf[0] = (byte) v;
            buf[1] = (byte) (v >> 8);
            out.write(buf, 0, 2);
            count += 2;
        }

        void i32(int v) throws IOException {
            for (int i = 0; i < 4; i++) buf[i] = (byte) (v >> 8 * i);
            out.write(buf, 0, 4);
            count += 4;
        }

        void i64(long v) throws IOException {
            for (int i = 0; i < 8; i++) buf[i] = (byte) (v >> 8 * i);
            out.write(buf, 0, 8);
            count += 8;
        }

        void str(String s) throws IOException {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            i64(b.length);
            bytes(b);
        }

        void bytes(byte[] b) throws IOException {
            out.write(b);
            count += b.length;
        }

        void pad(long n) throws IOException {
            for (long i = 0; i < n; i++) out.write(0);
            count += n;
        }

        void flush() throws IOException {
            out.flush();
        }
    }
}
