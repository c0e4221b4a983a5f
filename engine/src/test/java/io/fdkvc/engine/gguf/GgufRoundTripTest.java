package io.fdkvc.engine.gguf;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Quantizer;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** GgufWriter output read back by GgufFile: every value type, every tensor type, layout facts. */
class GgufRoundTripTest {
    @TempDir
    Path dir;

    @Test
    void everyMetadataTypeReadsBackAsTheDocumentedJavaType() throws IOException {
        Path f = dir.resolve("meta.gguf");
        new GgufWriter()
                .putUInt8("u8", 255).putInt8("i8", -128).putUInt16("u16", 65535).putInt16("i16", -32768)
                .putUInt32("u32", 0xFFFF_FFFFL).putInt32("i32", Integer.MIN_VALUE)
                .putUInt64("u64", -1L).putInt64("i64", Long.MIN_VALUE)
                .putFloat32("f32", 1e-5f).putFloat64("f64", Math.PI).putBool("yes", true).putBool("no", false)
                .putString("s", "grüße, 世界").putString("empty", "")
                .putArray("strings", GgufValueType.STRING, new String[] {"a", "", "ß"})
                .putArray("floats", GgufValueType.FLOAT32, new float[] {1.5f, -0f, Float.MAX_VALUE})
                .putArray("doubles", GgufValueType.FLOAT64, new double[] {2.5, -1e300})
                .putArray("a_u8", GgufValueType.UINT8, new int[] {0, 200, 255})
                .putArray("a_i8", GgufValueType.INT8, new int[] {-128, 127})
                .putArray("a_u16", GgufValueType.UINT16, new int[] {65535})
                .putArray("a_i16", GgufValueType.INT16, new int[] {-2, 300})
                .putArray("a_i32", GgufValueType.INT32, new int[] {-7, 1 << 30})
                .putArray("a_u32", GgufValueType.UINT32, new int[] {-1})
                .putArray("a_i64", GgufValueType.INT64, new long[] {Long.MAX_VALUE, -3})
                .putArray("a_u64", GgufValueType.UINT64, new long[] {-1})
                .putArray("a_bool", GgufValueType.BOOL, new boolean[] {true, false, true})
                .putArray("a_empty", GgufValueType.INT32, new int[0])
                .putArray("nested", GgufValueType.ARRAY, new Object[] {
                        new GgufWriter.Array(GgufValueType.INT32, new int[] {1, 2}),
                        new GgufWriter.Array(GgufValueType.STRING, new String[] {"x"}),
                        new GgufWriter.Array(GgufValueType.ARRAY, new Object[] {new GgufWriter.Array(GgufValueType.BOOL, new boolean[] {true})})})
                .write(f);
        try (GgufFile g = GgufFile.open(f)) {
            Map<String, Object> m = g.metadata();
            assertThat(g.version()).isEqualTo(3);
            assertThat(m.get("u8")).isEqualTo(255L);
            assertThat(m.get("i8")).isEqualTo(-128L);
            assertThat(m.get("u16")).isEqualTo(65535L);
            assertThat(m.get("i16")).isEqualTo(-32768L);
            assertThat(m.get("u32")).isEqualTo(4294967295L);
            assertThat(m.get("i32")).isEqualTo((long) Integer.MIN_VALUE);
            assertThat(m.get("u64")).isEqualTo(-1L);   // bits kept
            assertThat(m.get("i64")).isEqualTo(Long.MIN_VALUE);
            assertThat(m.get("f32")).isEqualTo((double) 1e-5f);
            assertThat(m.get("f64")).isEqualTo(Math.PI);
            assertThat(m.get("yes")).isEqualTo(true);
            assertThat(m.get("no")).isEqualTo(false);
            assertThat(m.get("s")).isEqualTo("grüße, 世界");
            assertThat(m.get("empty")).isEqualTo("");
            assertThat((String[]) m.get("strings")).containsExactly("a", "", "ß");
            assertThat((float[]) m.get("floats")).containsExactly(1.5f, -0f, Float.MAX_VALUE);
            assertThat((double[]) m.get("doubles")).containsExactly(2.5, -1e300);
            assertThat((int[]) m.get("a_u8")).containsExactly(0, 200, 255);
            assertThat((int[]) m.get("a_i8")).containsExactly(-128, 127);
            assertThat((int[]) m.get("a_u16")).containsExactly(65535);
            assertThat((int[]) m.get("a_i16")).containsExactly(-2, 300);
            assertThat((int[]) m.get("a_i32")).containsExactly(-7, 1 << 30);
            assertThat((int[]) m.get("a_u32")).containsExactly(-1);
            assertThat((long[]) m.get("a_i64")).containsExactly(Long.MAX_VALUE, -3);
            assertThat((long[]) m.get("a_u64")).containsExactly(-1);
            assertThat((boolean[]) m.get("a_bool")).containsExactly(true, false, true);
            assertThat((int[]) m.get("a_empty")).isEmpty();
            Object[] nested = (Object[]) m.get("nested");
            assertThat((int[]) nested[0]).containsExactly(1, 2);
            assertThat((String[]) nested[1]).containsExactly("x");
            assertThat((boolean[]) ((Object[]) nested[2])[0]).containsExactly(true);
            assertThat(m.keySet()).startsWith("u8", "i8", "u16");   // file order
            assertThat(g.get("u32", Long.class)).isEqualTo(4294967295L);
            assertThat(g.get("absent", Long.class)).isNull();
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> g.get("s", Long.class))
                    .isInstanceOf(io.fdkvc.engine.ModelFormatException.class).hasMessageContaining("'s'").hasMessageContaining(f.toString());
        }
    }

    /** The header bytes as the GGUF description lays them out, checked byte by byte. */
    @Test
    void headerLayoutIsTheSpecifiedOne() {
        byte[] b = new GgufWriter().putUInt32("k", 7).addTensor("t", GgmlType.F32, new float[] {1, 2}, 2).toBytes();
        MemorySegment s = MemorySegment.ofArray(b);
        var le = java.nio.ByteOrder.LITTLE_ENDIAN;
        assertThat(new String(b, 0, 4, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("GGUF");
        assertThat(s.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(le), 4)).isEqualTo(3);          // version
        assertThat(s.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(le), 8)).isEqualTo(1L);        // tensors
        assertThat(s.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(le), 16)).isEqualTo(1L);       // kv pairs
        assertThat(s.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(le), 24)).isEqualTo(1L);       // key length
        assertThat((char) b[32]).isEqualTo('k');
        assertThat(s.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(le), 33)).isEqualTo(4);         // UINT32
        assertThat(s.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(le), 37)).isEqualTo(7);
        // tensor info at 41: name length 1, 't', n_dims 1, ne0 2, type 0, offset 0 -> ends at 41+8+1+4+8+4+8 = 74
        assertThat((char) b[49]).isEqualTo('t');
        assertThat(s.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(le), 54)).isEqualTo(2L);
        // data section starts at 74 rounded up to 32 = 96
        assertThat(s.get(ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(le), 96)).isEqualTo(1f);
        assertThat(s.get(ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(le), 100)).isEqualTo(2f);
    }

    @ParameterizedTest
    @EnumSource(GgmlType.class)
    void everyTensorTypeRoundTrips(GgmlType type) throws IOException {
        Random r = new Random(type.ordinal());
        int cols = 512, rows = 3;
        float[] data = new float[rows * cols];
        for (int i = 0; i < data.length; i++) data[i] = (float) r.nextGaussian();
        float[] bias = {0.5f, -1, 2};
        Path f = dir.resolve(type + ".gguf");
        new GgufWriter().putString("general.architecture", "test")
                .addTensor("bias", GgmlType.F32, bias, 3)
                .addTensor("w", type, data, cols, rows)
                .addTensor("cube", type, java.util.Arrays.copyOf(data, 2 * 2 * 256), 256, 2, 2)
                .write(f);
        byte[] expectBytes = Quantizer.quantize(type, data);
        try (GgufFile g = GgufFile.open(f)) {
            assertThat(g.tensorNames()).containsExactly("bias", "w", "cube");
            GgufTensorInfo info = g.tensorInfo("w");
            assertThat(info.dims()).containsExactly(cols, rows);
            assertThat(info.type()).isEqualTo(type);
            assertThat(info.typeId()).isEqualTo(type.id);
            assertThat(info.fileOffset() % 32).isZero();
            assertThat(g.tensorData("w").toArray(ValueLayout.JAVA_BYTE)).containsExactly(expectBytes);
            FloatTensor w = g.tensor("w");
            assertThat(w.rows()).isEqualTo(rows);
            assertThat(w.cols()).isEqualTo(cols);
            assertThat(w.type()).isEqualTo(type);
            float[] got = g.floats("w");
            float[] ref = io.fdkvc.engine.tensor.Tensors.toFloats(
                    io.fdkvc.engine.tensor.Tensors.view(type, MemorySegment.ofArray(expectBytes), rows, cols));
            assertThat(got).containsExactly(ref);
            double tol = switch (type) { case F32 -> 0; case F16 -> 2e-3; case BF16 -> 2e-2; case Q8_0 -> 0.03; case Q6_K -> 0.15; case Q5_0, Q5_1, Q5_K -> 0.3; case Q3_K -> 1.0; case Q2_K -> 1.5; default -> 0.6; };
            for (int i = 0; i < data.length; i++) assertThat((double) got[i]).isCloseTo(data[i], org.assertj.core.api.Assertions.within(tol));
            assertThat(g.floats("bias")).containsExactly(bias);
            FloatTensor cube = g.tensor("cube");
            assertThat(cube.rows()).isEqualTo(4);
            assertThat(cube.cols()).isEqualTo(256);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 8, 64, 4096})
    void customAlignmentIsHonoured(int alignment) throws IOException {
        Path f = dir.resolve("a" + alignment + ".gguf");
        new GgufWriter().alignment(alignment)
                .addTensor("a", GgmlType.F32, new float[] {1, 2, 3}, 3)
                .addTensor("b", GgmlType.Q8_0, new float[32], 32)
                .write(f);
        try (GgufFile g = GgufFile.open(f)) {
            assertThat(g.alignment()).isEqualTo(alignment);
            assertThat(g.metadata().get("general.alignment")).isEqualTo((long) alignment);
            assertThat(g.dataStart() % alignment).isZero();
            assertThat(g.tensorInfo("b").offset() % alignment).isZero();
            assertThat(g.floats("a")).containsExactly(1, 2, 3);
        }
    }

    @Test
    void version2ReadsLikeVersion3() throws IOException {
        byte[] b = new GgufWriter().putString("x", "y").addTensor("t", GgmlType.F32, new float[] {4, 5}, 2).toBytes();
        b[4] = 2;   // v2 and v3 share the little-endian layout
        Path f = dir.resolve("v2.gguf");
        Files.write(f, b);
        try (GgufFile g = GgufFile.open(f)) {
            assertThat(g.version()).isEqualTo(2);
            assertThat(g.metadata()).containsEntry("x", "y");
            assertThat(g.floats("t")).containsExactly(4, 5);
        }
    }

    /** A tensor beyond 2 GiB into the file: offsets are longs everywhere (sparse file, no 2 GiB written). */
    @Test
    void tensorsBeyondTwoGibibytes() throws IOException {
        long gap = 3L << 30;
        float[] w = new float[64];
        for (int i = 0; i < 64; i++) w[i] = i - 20.5f;
        byte[] small = new GgufWriter().addTensor("pad", GgmlType.F32, new float[] {0}, 1)
                .addTensor("far", GgmlType.Q8_0, w, 32, 2).toBytes();
        // rebuild by hand: same header, but "far" placed at data offset gap
        Path f = dir.resolve("big.gguf");
        GgufTensorInfo farInfo;
        Path tmp = dir.resolve("small.gguf");
        Files.write(tmp, small);
        long dataStart;
        long farOffsetPos;
        try (GgufFile g = GgufFile.open(tmp)) {
            farInfo = g.tensorInfo("far");
            dataStart = g.dataStart();
            farOffsetPos = locateLong(small, farInfo.offset(), "far");
        }
        java.nio.ByteBuffer.wrap(small).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong((int) farOffsetPos, gap);
        try (var ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE, java.nio.file.StandardOpenOption.SPARSE)) {
            ch.write(java.nio.ByteBuffer.wrap(small, 0, (int) dataStart + 32));
            ch.write(java.nio.ByteBuffer.wrap(small, (int) farInfo.fileOffset(), 68), dataStart + gap);
        }
        try (GgufFile g = GgufFile.open(f)) {
            assertThat(g.tensorInfo("far").fileOffset()).isEqualTo(dataStart + gap);
            assertThat(g.fileSize()).isGreaterThan(gap);
            float[] got = g.floats("far");
            for (int i = 0; i < 64; i++) assertThat(got[i]).isCloseTo(w[i], org.assertj.core.api.Assertions.within(0.2f));
            float[] x = new float[32];
            x[3] = 1;
            assertThat(g.tensor("far").dot(1, x, 0)).isEqualTo(got[35]);
        }
    }

    /** Byte position of the offset field of tensor {@code name} (the 8 bytes right after its type). */
    private static long locateLong(byte[] b, long value, String name) {
        byte[] n = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        outer:
        for (int i = 0; i + n.length < b.length; i++) {
            for (int j = 0; j < n.length; j++) if (b[i + j] != n[j]) continue outer;
            int p = i + n.length;
            int nd = java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(p);
            long at = p + 4 + 8L * nd + 4;
            assertThat(java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong((int) at)).isEqualTo(value);
            return at;
        }
        throw new AssertionError(name + " not found");
    }

    @Test
    void writerRefusesValuesOutsideTheirType() {
        var w = new GgufWriter();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> w.putUInt8("x", 256)).isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> w.putUInt32("x", -1)).isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> w.putArray("x", GgufValueType.INT8, new int[] {200}))
                .isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> w.putArray("x", GgufValueType.FLOAT32, new double[] {1}))
                .isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> w.addTensor("t", GgmlType.F32, new float[3], 2, 2))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
