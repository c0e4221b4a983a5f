package io.fdkvc.engine.gguf;

import io.fdkvc.core.Untrusted;
import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Tensors;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GGUF (version 2 or 3, little-endian) model file, memory-mapped read-only. Parsing checks
 * every length against what is left of the file before allocating anything, so a broken or
 * hostile header gives a {@link ModelFormatException} naming the file, never an
 * OutOfMemoryError. Tensor views share the mapping: they stay valid until {@link #close()}.
 *
 * <p>Metadata values map to Java types as follows: string: String; any integer scalar: Long
 * (uint32 values are zero-extended; a uint64 above Long.MAX_VALUE keeps its bits, so it reads as
 * negative); float32 and float64 scalars: Double; bool: Boolean; arrays of strings: String[];
 * of float32: float[]; of float64: double[]; of int8, uint8, int16, uint16, int32 or uint32:
 * int[] (unsigned ones zero-extended, uint32 keeping its bits); of int64 or uint64: long[]; of
 * bool: boolean[]; of arrays: Object[] holding the inner arrays by the same rules.
 */
public final class GgufFile implements AutoCloseable {
    /** "GGUF" read as a little-endian uint32. */
    public static final int MAGIC = 0x46554747;
    public static final int DEFAULT_ALIGNMENT = 32;
    /** GGML tensors have at most four dimensions. */
    public static final int MAX_DIMS = 4;
    /** Arrays of arrays deeper than this are refused (each level is a stack frame when parsing). */
    public static final int MAX_NESTING = 16;

    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Least bytes of a tensor-info record: name length, n_dims, one dim, type, offset. */
    private static final int MIN_TENSOR_INFO = 8 + 4 + 8 + 4 + 8;
    /** Least bytes of a metadata entry: key length, value type, a one-byte value. */
    private static final int MIN_KV = 8 + 4 + 1;

    private final Path path;
    private final Arena arena;
    private final MemorySegment seg;
    private final long size;
    private final int version;
    private final Map<String, Object> metadata;
    private final Map<String, GgufTensorInfo> tensors;
    private final long alignment;
    private final long dataStart;

    private long pos;   // parse cursor, used only while opening

    private GgufFile(Path path, Arena arena, MemorySegment seg) {
        this.path = path;
        this.arena = arena;
        this.seg = seg;
        this.size = seg.byteSize();
        if (size < 4) throw fail("file is " + size + " bytes long, too short for a GGUF header");
        int magic = seg.get(U32, 0);
        if (magic != MAGIC)
            throw fail(String.format("not a GGUF file: it starts with bytes %02x %02x %02x %02x, expected \"GGUF\"",
                    magic & 0xFF, (magic >>> 8) & 0xFF, (magic >>> 16) & 0xFF, magic >>> 24));
        pos = 4;
        int v = u32("the version");
        if (v != 2 && v != 3) {
            int swapped = Integer.reverseBytes(v);
            if (swapped >= 1 && swapped <= 3)
                throw fail("big-endian GGUF files are not supported (version " + swapped + " stored byte-swapped)");
            throw fail("GGUF version " + Integer.toUnsignedString(v) + " is not supported (only versions 2 and 3)");
        }
        version = v;
        long tensorCount = u64("the tensor count");
        long kvCount = u64("the metadata entry count");
        if (Long.compareUnsigned(kvCount, (size - pos) / MIN_KV) > 0)
            throw fail("metadata entry count " + Long.toUnsignedString(kvCount) + " is larger than the "
                    + (size - pos) + " remaining bytes could hold");
        if (Long.compareUnsigned(tensorCount, (size - pos) / MIN_TENSOR_INFO) > 0)
            throw fail("tensor count " + Long.toUnsignedString(tensorCount) + " is larger than the "
                    + (size - pos) + " remaining bytes could hold");

        if (tensorCount > Integer.MAX_VALUE - 8) throw fail("tensor count " + tensorCount + " is too large");
        Map<String, Object> md = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            String what = "metadata entry " + i;
            String key = string("the key of " + what);
            what = "metadata entry '" + Untrusted.excerpt(key) + "'";
            int typeId = u32("the value type of " + what);
            Object value = value(typeId, what, 0);
            if (md.putIfAbsent(key, value) != null) throw fail("metadata key '" + Untrusted.excerpt(key) + "' appears twice");
        }
        metadata = Collections.unmodifiableMap(md);

        alignment = readAlignment();
        Map<String, GgufTensorInfo> ts = new LinkedHashMap<>();
        long[][] dims = new long[(int) tensorCount][];
        String[] names = new String[(int) tensorCount];
        int[] types = new int[(int) tensorCount];
        long[] offsets = new long[(int) tensorCount];
        for (int i = 0; i < tensorCount; i++) {
            String name = string("the name of tensor " + i);
            String what = "tensor '" + Untrusted.excerpt(name) + "'";
            int nDims = u32("the dimension count of " + what);
            if (nDims < 1 || nDims > MAX_DIMS)
                throw fail(what + " has " + Integer.toUnsignedString(nDims) + " dimensions (1 to " + MAX_DIMS + " allowed)");
            long[] ne = new long[nDims];
            long elements = 1;
            for (int d = 0; d < nDims; d++) {
                ne[d] = u64("dimension " + d + " of " + what);
                if (ne[d] < 0) throw fail(what + " has dimension " + d + " = " + Long.toUnsignedString(ne[d]) + ", too large");
                try {
                    elements = Math.multiplyExact(elements, ne[d]);
                } catch (ArithmeticException e) {
                    throw fail(what + " has more elements than a 64-bit count holds");
                }
            }
            names[i] = name;
            dims[i] = ne;
            types[i] = u32("the type of " + what);
            offsets[i] = u64("the data offset of " + what);
        }
        long ds = pos % alignment == 0 ? pos : pos + (alignment - pos % alignment);
        dataStart = ds;
        for (int i = 0; i < tensorCount; i++) {
            GgufTensorInfo info = checkTensor(names[i], dims[i], types[i], offsets[i]);
            if (ts.putIfAbsent(names[i], info) != null) throw fail("tensor '" + Untrusted.excerpt(names[i]) + "' appears twice");
        }
        tensors = Collections.unmodifiableMap(ts);
    }

    /**
     * Opens and parses {@code path}, its bytes where the system property {@code fdkvc.weights}
     * says ({@link WeightMemory#configured()}: mapped unless set). The caller closes the result
     * (which unmaps or frees the bytes and invalidates every tensor view).
     */
    public static GgufFile open(Path path) {
        return open(path, WeightMemory.configured());
    }

    /** Opens and parses {@code path}, its bytes mapped or copied as {@code memory} says. */
    public static GgufFile open(Path path, WeightMemory memory) {
        if (Files.isDirectory(path)) throw new ModelFormatException("model file " + path + " is a directory");
        Arena arena = Arena.ofShared();
        try {
            MemorySegment seg;
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
                long n = ch.size();
                seg = n == 0 ? MemorySegment.ofArray(new byte[0])
                        : memory == WeightMemory.COPIED ? WeightMemory.copy(ch, n, arena)
                        : ch.map(FileChannel.MapMode.READ_ONLY, 0, n, arena);
            }
            return new GgufFile(path, arena, seg);
        } catch (NoSuchFileException e) {
            arena.close();
            throw new ModelFormatException("model file " + path + " does not exist", e);
        } catch (AccessDeniedException e) {
            arena.close();
            throw new ModelFormatException("model file " + path + " cannot be read (access denied)", e);
        } catch (IOException e) {
            arena.close();
            throw new ModelFormatException("model file " + path + " cannot be read: " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /** Every message is one escaped line of bounded length: the file's bytes may be anything. */
    private ModelFormatException fail(String problem) {
        return new ModelFormatException(Untrusted.line("GGUF file " + path + ": " + problem));
    }

    // ---- parsing ------------------------------------------------------------------------

    private void need(long n, String what) {
        if (n > size - pos) throw fail("truncated at byte " + pos + " (file has " + size + " bytes) while reading " + what);
    }

    private int u8(String what) {
        need(1, what);
        return seg.get(ValueLayout.JAVA_BYTE, pos++) & 0xFF;
    }

    private int u16(String what) {
        need(2, what);
        int v = seg.get(U16, pos) & 0xFFFF;
        pos += 2;
        return v;
    }

    private int u32(String what) {
        need(4, what);
        int v = seg.get(U32, pos);
        pos += 4;
        return v;
    }

    private long u64(String what) {
        need(8, what);
        long v = seg.get(U64, pos);
        pos += 8;
        return v;
    }

    private String string(String what) {
        return string(what, -1);
    }

    /**
     * A string; {@code index >= 0} means element {@code index} of the array {@code what}. The
     * message is only built on failure: vocabularies hold 100k+ strings.
     */
    private String string(String what, long index) {
        if (size - pos < 8) throw fail("truncated at byte " + pos + " (file has " + size + " bytes) while reading the length of " + element(what, index));
        long len = seg.get(U64, pos);
        pos += 8;
        if (len < 0 || len > size - pos)
            throw fail("string length " + Long.toUnsignedString(len) + " of " + element(what, index) + " at byte " + (pos - 8)
                    + " exceeds the " + (size - pos) + " remaining bytes");
        if (len > Integer.MAX_VALUE - 8) throw fail("string of " + len + " bytes in " + element(what, index) + " is too long");
        byte[] b = new byte[(int) len];
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, pos, b, 0, (int) len);
        pos += len;
        return new String(b, StandardCharsets.UTF_8);
    }

    private static String element(String what, long index) {
        return index < 0 ? what : "element " + index + " of " + what;
    }

    private boolean bool(String what) {
        return bool(what, -1);
    }

    private boolean bool(String what, long index) {
        if (size - pos < 1) throw fail("truncated at byte " + pos + " (file has " + size + " bytes) while reading " + element(what, index));
        int b = seg.get(ValueLayout.JAVA_BYTE, pos++) & 0xFF;
        if (b > 1) throw fail("bool value " + b + " of " + element(what, index) + " at byte " + (pos - 1) + " is neither 0 nor 1");
        return b == 1;
    }

    private GgufValueType valueType(int id, String what) {
        GgufValueType t = GgufValueType.byId(id);
        if (t == null) throw fail("unknown metadata value type " + Integer.toUnsignedString(id) + " in " + what);
        return t;
    }

    private Object value(int typeId, String what, int depth) {
        GgufValueType t = valueType(typeId, what);
        return switch (t) {
            case UINT8 -> (long) u8(what);
            case INT8 -> (long) (byte) u8(what);
            case UINT16 -> (long) u16(what);
            case INT16 -> (long) (short) u16(what);
            case UINT32 -> Integer.toUnsignedLong(u32(what));
            case INT32 -> (long) u32(what);
            case UINT64, INT64 -> u64(what);
            case FLOAT32 -> (double) Float.intBitsToFloat(u32(what));
            case FLOAT64 -> Double.longBitsToDouble(u64(what));
            case BOOL -> bool(what);
            case STRING -> string(what);
            case ARRAY -> array(what, depth + 1);
        };
    }

    private Object array(String what, int depth) {
        if (depth > MAX_NESTING) throw fail(what + " nests arrays deeper than " + MAX_NESTING + " levels");
        GgufValueType et = valueType(u32("the element type of an array in " + what), what);
        long n = u64("the length of an array in " + what);
        if (n < 0 || n > (size - pos) / et.minBytes)
            throw fail("array length " + Long.toUnsignedString(n) + " of " + what + " at byte " + (pos - 8)
                    + " is larger than the " + (size - pos) + " remaining bytes could hold");
        if (n > Integer.MAX_VALUE - 8) throw fail("array of " + n + " elements in " + what + " is too long");
        int len = (int) n;
        switch (et) {
            case STRING -> {
                String[] a = new String[len];
                for (int i = 0; i < len; i++) a[i] = string(what, i);
                return a;
            }
            case FLOAT32 -> {
                float[] a = new float[len];
                MemorySegment.copy(seg, F32, pos, a, 0, len);
                pos += 4L * len;
                return a;
            }
            case FLOAT64 -> {
                double[] a = new double[len];
                MemorySegment.copy(seg, F64, pos, a, 0, len);
                pos += 8L * len;
                return a;
            }
            case INT32, UINT32 -> {
                int[] a = new int[len];
                MemorySegment.copy(seg, U32, pos, a, 0, len);
                pos += 4L * len;
                return a;
            }
            case INT64, UINT64 -> {
                long[] a = new long[len];
                MemorySegment.copy(seg, U64, pos, a, 0, len);
                pos += 8L * len;
                return a;
            }
            case INT8, UINT8, INT16, UINT16 -> {
                int[] a = new int[len];
                for (int i = 0; i < len; i++) {
                    a[i] = switch (et) {
                        case INT8 -> seg.get(ValueLayout.JAVA_BYTE, pos + i);
                        case UINT8 -> seg.get(ValueLayout.JAVA_BYTE, pos + i) & 0xFF;
                        case INT16 -> seg.get(U16, pos + 2L * i);
                        default -> seg.get(U16, pos + 2L * i) & 0xFFFF;
                    };
                }
                pos += (long) et.minBytes * len;
                return a;
            }
            case BOOL -> {
                boolean[] a = new boolean[len];
                for (int i = 0; i < len; i++) a[i] = bool(what, i);
                return a;
            }
            case ARRAY -> {
                Object[] a = new Object[len];
                for (int i = 0; i < len; i++) a[i] = array("element " + i + " of " + what, depth + 1);
                return a;
            }
            default -> throw new AssertionError(et);
        }
    }

    private long readAlignment() {
        Object a = metadata.get("general.alignment");
        if (a == null) return DEFAULT_ALIGNMENT;
        if (!(a instanceof Long l)) throw fail("general.alignment is a " + describe(a) + ", not an integer");
        if (l <= 0 || l > (1 << 30) || Long.bitCount(l) != 1)
            throw fail("general.alignment " + l + " is not a power of two between 1 and 2^30");
        return l;
    }

    private GgufTensorInfo checkTensor(String name, long[] ne, int typeId, long offset) {
        String what = "tensor '" + Untrusted.excerpt(name) + "'";
        if (offset < 0 || offset > size - dataStart)
            throw fail(what + " has data offset " + Long.toUnsignedString(offset) + ", outside the file (data section at "
                    + dataStart + ", file " + size + " bytes)");
        if (offset % alignment != 0) throw fail(what + " has data offset " + offset + ", not a multiple of the alignment " + alignment);
        GgmlType type = GgmlType.byId(typeId);
        long bytes = -1;
        if (type != null) {
            if (ne[0] % type.blockSize != 0)
                throw fail(what + " of type " + type + " has rows of " + ne[0] + " elements, not a multiple of the block size " + type.blockSize);
            long elements = 1;
            for (long d : ne) elements *= d;   // no overflow: checked while reading
            long blocks = elements / type.blockSize;
            if (blocks > Long.MAX_VALUE / type.blockBytes) throw fail(what + " is too large");
            bytes = blocks * type.blockBytes;
            if (bytes > size - dataStart - offset)
                throw fail(what + " needs " + bytes + " bytes of data at file offset " + (dataStart + offset)
                        + ", beyond the end of the file (" + size + " bytes): truncated?");
        }
        return new GgufTensorInfo(name, ne, typeId, type, offset, dataStart + offset, bytes);
    }

    private static String describe(Object v) {
        return v == null ? "nothing" : v.getClass().getSimpleName();
    }

    // ---- accessors ---------------------------------------------------------------------

    public Path path() {
        return path;
    }

    /** 2 or 3. */
    public int version() {
        return version;
    }

    /** All metadata in file order, with the Java types listed in the class comment. */
    public Map<String, Object> metadata() {
        return metadata;
    }

    /**
     * The metadata value under {@code key} as {@code type}, or null if absent; a value of another
     * type is a {@link ModelFormatException} naming the key.
     */
    public <T> T get(String key, Class<T> type) {
        Object v = metadata.get(key);
        if (v == null) return null;
        if (!type.isInstance(v))
            throw fail("metadata '" + key + "' is a " + describe(v) + ", expected " + type.getSimpleName());
        return type.cast(v);
    }

    /** Tensor names in file order. */
    public List<String> tensorNames() {
        return List.copyOf(tensors.keySet());
    }

    public boolean hasTensor(String name) {
        return tensors.containsKey(name);
    }

    /** The tensor-info record of {@code name}; a missing tensor is a {@link ModelFormatException}. */
    public GgufTensorInfo tensorInfo(String name) {
        GgufTensorInfo t = tensors.get(name);
        if (t == null) throw fail("missing tensor '" + name + "'");
        return t;
    }

    public Map<String, GgufTensorInfo> tensorInfos() {
        return tensors;
    }

    /** general.alignment, or 32. */
    public long alignment() {
        return alignment;
    }

    /** File offset of the tensor data section. */
    public long dataStart() {
        return dataStart;
    }

    public long fileSize() {
        return size;
    }

    /** The raw bytes of a tensor (any type, also one this engine does not decode, if its size is known). */
    public MemorySegment tensorData(String name) {
        GgufTensorInfo t = supported(name);
        return seg.asSlice(t.fileOffset(), t.byteSize());
    }

    private GgufTensorInfo supported(String name) {
        GgufTensorInfo t = tensorInfo(name);
        if (t.type() == null)
            throw fail("tensor '" + name + "' has GGML type " + Integer.toUnsignedString(t.typeId()) + " ("
                    + GgufTensorInfo.typeName(t.typeId()) + "), which this engine does not read (it reads "
                    + java.util.Arrays.toString(GgmlType.values()) + ")");
        return t;
    }

    /**
     * A view of tensor {@code name} as a matrix of {@code rows = ne[1] * ne[2] * ...} by
     * {@code cols = ne[0]} (a 1-D tensor is one row). Missing tensors and unsupported types are
     * {@link ModelFormatException}s naming the tensor.
     */
    public FloatTensor tensor(String name) {
        GgufTensorInfo t = supported(name);
        long rows = t.rows(), cols = t.cols();
        if (rows > Integer.MAX_VALUE || cols > Integer.MAX_VALUE)
            throw fail("tensor '" + name + "' of " + rows + " x " + cols + " has more rows or columns than this engine indexes");
        return Tensors.view(t.type(), seg.asSlice(t.fileOffset(), t.byteSize()), (int) rows, (int) cols);
    }

    /** All elements of tensor {@code name}, dequantised (norm weights, biases). */
    public float[] floats(String name) {
        GgufTensorInfo t = supported(name);
        if (t.elements() > Integer.MAX_VALUE - 8) throw fail("tensor '" + name + "' has too many elements for a float[]");
        return Tensors.toFloats(tensor(name));
    }

    /** Unmaps the file; tensor views must not be used afterwards. Idempotent. */
    @Override
    public synchronized void close() {
        if (arena.scope().isAlive()) arena.close();
    }

    @Override
    public String toString() {
        return "GgufFile[" + path + ", v" + version + ", " + metadata.size() + " metadata, " + tensors.size() + " tensors]";
    }
}
