package io.fdkvc.engine.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.tensor.GgmlType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Broken, truncated and hostile files: each gives a ModelFormatException whose message names the
 * file and the problem; none allocates what a header merely claims.
 */
class GgufBrokenFileTest {
    @TempDir
    Path dir;

    /** A small but complete file: metadata of several kinds and three tensors. */
    static byte[] sample() {
        return new GgufWriter()
                .putString("general.architecture", "llama")
                .putUInt32("llama.block_count", 1)
                .putArray("tokenizer.ggml.tokens", GgufValueType.STRING, new String[] {"a", "bb", "ccc"})
                .putArray("tokenizer.ggml.scores", GgufValueType.FLOAT32, new float[] {0, -1, -2})
                .putArray("nested", GgufValueType.ARRAY, new Object[] {new GgufWriter.Array(GgufValueType.INT32, new int[] {1, 2})})
                .addTensor("norm", GgmlType.F32, new float[] {1, 2, 3, 4}, 4)
                .addTensor("w", GgmlType.Q8_0, new float[64], 32, 2)
                .addTensor("k", GgmlType.Q4_K, new float[256], 256)
                .toBytes();
    }

    private Path write(String name, byte[] b) throws IOException {
        Path f = dir.resolve(name);
        Files.write(f, b);
        return f;
    }

    /** Opens and reads every tensor fully; any problem must surface as ModelFormatException. */
    private static void openAndReadAll(Path f) {
        try (GgufFile g = GgufFile.open(f)) {
            for (String n : g.tensorNames()) {
                GgufTensorInfo t = g.tensorInfo(n);
                if (t.type() != null) g.floats(n);
            }
        }
    }

    private static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** End of the last tensor's data: every shorter prefix is broken. */
    private static long requiredLength(Path f) {
        try (GgufFile g = GgufFile.open(f)) {
            long end = g.dataStart();
            for (GgufTensorInfo t : g.tensorInfos().values()) end = Math.max(end, t.fileOffset() + t.byteSize());
            return end;
        }
    }

    @Test
    void everyTruncationIsReported() throws IOException {
        byte[] full = sample();
        Path whole = write("whole.gguf", full);
        openAndReadAll(whole);
        long need = requiredLength(whole);
        assertThat(need).isLessThanOrEqualTo(full.length);
        for (int len = 0; len < need; len++) {
            Path f = write("cut" + len + ".gguf", Arrays.copyOf(full, len));
            int at = len;
            assertThatThrownBy(() -> openAndReadAll(f)).as("cut at %d", at)
                    .isInstanceOf(ModelFormatException.class)
                    .hasMessageContaining(f.toString());
            Files.delete(f);
        }
    }

    @Test
    void truncatedMessagesSayWhereAndWhat() throws IOException {
        byte[] full = sample();
        // cut in the middle of ne[0] of tensor 'w' (its name is the only "w" with length prefix 1)
        int cut = indexOf(full, new byte[] {1, 0, 0, 0, 0, 0, 0, 0, 'w'}) + 9 + 4 + 3;
        Path f = write("cut.gguf", Arrays.copyOf(full, cut));
        assertThatThrownBy(() -> GgufFile.open(f)).hasMessageContaining(f.toString())
                .hasMessageContaining("truncated at byte " + (cut - 3)).hasMessageContaining("dimension 0 of tensor 'w'")
                .hasMessageContaining("file has " + cut + " bytes");
        Path g = write("nodata.gguf", Arrays.copyOf(full, (int) requiredLength(write("w.gguf", full)) - 1));
        assertThatThrownBy(() -> GgufFile.open(g)).hasMessageContaining("tensor 'k'").hasMessageContaining("beyond the end of the file");
    }

    @Test
    void wrongMagic() throws IOException {
        byte[] b = sample();
        b[0] = 'L';
        Path f = write("magic.gguf", b);
        assertThatThrownBy(() -> GgufFile.open(f)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining(f.toString()).hasMessageContaining("not a GGUF file").hasMessageContaining("4c 47 55 46");
        Path empty = write("empty.gguf", new byte[0]);
        assertThatThrownBy(() -> GgufFile.open(empty)).hasMessageContaining(empty.toString()).hasMessageContaining("0 bytes");
    }

    @Test
    void unsupportedVersions() throws IOException {
        for (int v : new int[] {0, 1, 4, 0x7FFF_FFFF}) {
            byte[] b = sample();
            le(b).putInt(4, v);
            Path f = write("v" + v + ".gguf", b);
            assertThatThrownBy(() -> GgufFile.open(f)).isInstanceOf(ModelFormatException.class)
                    .hasMessageContaining(f.toString()).hasMessageContaining("version " + v).hasMessageContaining("not supported");
        }
        byte[] b = sample();
        le(b).putInt(4, Integer.reverseBytes(3));
        Path f = write("be.gguf", b);
        assertThatThrownBy(() -> GgufFile.open(f)).hasMessageContaining("big-endian");
    }

    @Test
    void absurdCountsAreRefusedBeforeAllocating() throws IOException {
        for (long n : new long[] {1L << 40, Long.MAX_VALUE, -1L, 1000}) {
            byte[] b = sample();
            le(b).putLong(8, n);   // tensor count
            Path f = write("tc.gguf", b);
            assertThatThrownBy(() -> GgufFile.open(f)).isInstanceOf(ModelFormatException.class)
                    .hasMessageContaining("tensor count " + Long.toUnsignedString(n)).hasMessageContaining("remaining bytes");
            b = sample();
            le(b).putLong(16, n);  // metadata count
            Path g = write("kc.gguf", b);
            assertThatThrownBy(() -> GgufFile.open(g)).isInstanceOf(ModelFormatException.class)
                    .hasMessageContaining("metadata entry count " + Long.toUnsignedString(n));
        }
    }

    @Test
    void absurdStringAndArrayLengths() throws IOException {
        byte[] b = sample();
        le(b).putLong(24, 1L << 50);   // length of the first key
        Path f = write("str.gguf", b);
        assertThatThrownBy(() -> GgufFile.open(f)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("string length 1125899906842624").hasMessageContaining("remaining bytes");

        // the token array: key "tokenizer.ggml.tokens" then type ARRAY, element type STRING, count
        byte[] c = sample();
        int at = indexOf(c, "tokenizer.ggml.tokens".getBytes()) + "tokenizer.ggml.tokens".length() + 4 + 4;
        assertThat(le(c).getLong(at)).isEqualTo(3);
        le(c).putLong(at, 1L << 40);
        Path g = write("arr.gguf", c);
        assertThatThrownBy(() -> GgufFile.open(g)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("array length 1099511627776").hasMessageContaining("tokenizer.ggml.tokens");
        le(c).putLong(at, 0x7FFF_FFF0L);  // fits no file this small either
        Path h = write("arr2.gguf", c);
        assertThatThrownBy(() -> GgufFile.open(h)).isInstanceOf(ModelFormatException.class).hasMessageContaining("array length");
    }

    @Test
    void deeplyNestedArraysAreRefused() throws IOException {
        // a metadata value of 10,000 nested arrays, each holding the next: 12 bytes per level
        int depth = 10_000;
        ByteBuffer bb = ByteBuffer.allocate(24 + 8 + 1 + 4 + depth * 12 + 16).order(ByteOrder.LITTLE_ENDIAN);
        bb.putInt(GgufFile.MAGIC).putInt(3).putLong(0).putLong(1);
        bb.putLong(1).put((byte) 'n').putInt(GgufValueType.ARRAY.id);
        for (int i = 0; i < depth; i++) bb.putInt(GgufValueType.ARRAY.id).putLong(1);
        Path f = write("deep.gguf", bb.array());
        assertThatThrownBy(() -> GgufFile.open(f)).isInstanceOf(ModelFormatException.class).hasMessageContaining("nests arrays deeper");
    }

    @Test
    void badTensorRecords() throws IOException {
        Path ok = write("ok.gguf", sample());
        long dataStart, kOffsetPos;
        try (GgufFile g = GgufFile.open(ok)) {
            dataStart = g.dataStart();
        }
        byte[] base = sample();
        int name = indexOf(base, new byte[] {1, 0, 0, 0, 0, 0, 0, 0, 'k'});   // "k" with its length prefix
        int nDims = name + 9, dim0 = nDims + 4, type = dim0 + 8, offset = type + 4;
        kOffsetPos = offset;
        assertThat(le(base).getInt(nDims)).isEqualTo(1);
        assertThat(le(base).getInt(type)).isEqualTo(GgmlType.Q4_K.id);

        byte[] b = base.clone();
        le(b).putInt(nDims, 5);
        expect(b, "dims5", "tensor 'k' has 5 dimensions");

        b = base.clone();
        le(b).putLong(dim0, 100);   // not a multiple of 256
        expect(b, "block", "not a multiple of the block size 256");

        b = base.clone();
        le(b).putLong(dim0, 256L << 20);   // 2^28 elements of Q4_K: far more data than the file has
        expect(b, "big", "beyond the end of the file");

        b = base.clone();
        le(b).putLong(dim0, -256);
        expect(b, "neg", "too large");

        b = base.clone();
        le(b).putLong((int) kOffsetPos, 1L << 40);
        expect(b, "far", "outside the file");

        b = base.clone();
        le(b).putLong((int) kOffsetPos, le(b).getLong((int) kOffsetPos) + 4);
        expect(b, "misaligned", "not a multiple of the alignment 32");

        // an unsupported type opens (other tensors stay usable) but reading it names type and tensor
        b = base.clone();
        le(b).putInt(type, 16);   // IQ2_XXS
        Path f = write("iq2xxs.gguf", b);
        try (GgufFile g = GgufFile.open(f)) {
            assertThat(g.floats("norm")).containsExactly(1, 2, 3, 4);
            assertThat(g.tensorInfo("k").type()).isNull();
            assertThatThrownBy(() -> g.tensor("k")).isInstanceOf(ModelFormatException.class)
                    .hasMessageContaining(f.toString()).hasMessageContaining("tensor 'k'").hasMessageContaining("type 16 (IQ2_XXS)");
            assertThatThrownBy(() -> g.tensor("missing.weight")).isInstanceOf(ModelFormatException.class)
                    .hasMessageContaining(f.toString()).hasMessageContaining("missing tensor 'missing.weight'");
        }
        assertThat(dataStart).isPositive();
    }

    @Test
    void duplicateKeysAndBadValues() throws IOException {
        byte[] b = new GgufWriter().putUInt32("aa", 1).putUInt32("ab", 2).toBytes();
        b[indexOf(b, "ab".getBytes()) + 1] = 'a';
        expect(b, "dup", "metadata key 'aa' appears twice");

        byte[] c = new GgufWriter().putBool("flag", true).toBytes();
        c[c.length - 1] = 7;
        expect(c, "bool", "bool value 7");

        byte[] d = new GgufWriter().putUInt32("t", 1).toBytes();
        le(d).putInt(indexOf(d, "t".getBytes()) + 1, 99);
        expect(d, "vtype", "unknown metadata value type 99");

        byte[] e = new GgufWriter().putString("general.alignment", "32").toBytes();
        expect(e, "align", "general.alignment is a String");
        byte[] g = new GgufWriter().putUInt32("general.alignment", 24).toBytes();
        expect(g, "align24", "not a power of two");
    }

    @Test
    void missingFileAndDirectory() {
        Path f = dir.resolve("nope.gguf");
        assertThatThrownBy(() -> GgufFile.open(f)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining(f.toString()).hasMessageContaining("does not exist");
        assertThatThrownBy(() -> GgufFile.open(dir)).isInstanceOf(ModelFormatException.class).hasMessageContaining("is a directory");
    }

    /** Random byte corruption of the header region: a clean error or a consistent file, nothing else. */
    @Property(tries = 400)
    void corruptedHeadersFailCleanly(@ForAll @IntRange(min = 0, max = 100_000) int seed, @ForAll @IntRange(min = 1, max = 8) int flips)
            throws IOException {
        byte[] b = sample();
        java.util.Random r = new java.util.Random(seed);
        long header;
        // jqwik does not inject JUnit's @TempDir: files of its own, deleted below
        Path ok = Files.createTempFile("fdkvc-ok", ".gguf");
        Files.write(ok, b);
        try (GgufFile g = GgufFile.open(ok)) {
            header = g.dataStart();
        }
        for (int i = 0; i < flips; i++) b[r.nextInt((int) header)] = (byte) r.nextInt();
        Path f = Files.createTempFile("fdkvc-bad", ".gguf");
        Files.write(f, b);
        try {
            openAndReadAll(f);
        } catch (ModelFormatException e) {
            assertThat(e.getMessage()).contains(f.toString());
        } finally {
            Files.delete(f);
            Files.delete(ok);
        }
    }

    private void expect(byte[] b, String name, String message) throws IOException {
        Path f = write(name + ".gguf", b);
        assertThatThrownBy(() -> openAndReadAll(f)).as(name).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining(f.toString()).hasMessageContaining(message);
    }

    private static int indexOf(byte[] b, byte[] pat) {
        outer:
        for (int i = 0; i + pat.length <= b.length; i++) {
            for (int j = 0; j < pat.length; j++) if (b[i + j] != pat[j]) continue outer;
            return i;
        }
        throw new AssertionError("pattern not found");
    }
}
