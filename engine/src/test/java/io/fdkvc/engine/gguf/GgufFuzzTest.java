package io.fdkvc.engine.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama2cLoader;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.model.Stories260K;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seeded mutation fuzzer over the real stories260K model files: every mutant either loads or is
 * refused with an {@link InputException} whose message is one line (no control character) of at
 * most {@link #MAX_MESSAGE_BYTES} bytes; no other exception and no Error (OutOfMemoryError,
 * InternalError, ...) may escape. {@code ./scripts/test} runs {@link #DEFAULT_MUTANTS} mutants per
 * format; {@code -Dfdkvc.fuzz.mutants=N} runs N (e.g. 20000 for a long run), {@code
 * -Dfdkvc.fuzz.seed=S} another sequence. A failure names the seed and the mutant, which is
 * reproducible from them.
 */
class GgufFuzzTest {
    static final int DEFAULT_MUTANTS = 300;
    static final int MAX_MESSAGE_BYTES = 4096;
    static final long[] EXTREMES = {0, 1, 2, 0x7F, 0xFF, 0x7FFF, 0xFFFF, 0x7FFF_FFFFL, 0xFFFF_FFFFL, 1L << 32, 1L << 40,
            Long.MAX_VALUE, -1, Long.MIN_VALUE, 1_000_000};

    @TempDir
    Path dir;

    static int mutants() {
        return Integer.getInteger("fdkvc.fuzz.mutants", DEFAULT_MUTANTS);
    }

    static long seed() {
        return Long.getLong("fdkvc.fuzz.seed", 20261130L);
    }

    @Test
    void everyGgufMutantLoadsOrIsRefusedWithOneShortLine() throws Exception {
        byte[] original = Files.readAllBytes(Stories260K.gguf());
        long dataStart;
        try (GgufFile f = GgufFile.open(Stories260K.gguf())) {
            dataStart = f.dataStart();
        }
        Path file = dir.resolve("mutant.gguf");
        SplittableRandom r = new SplittableRandom(seed());
        int refused = 0, loaded = 0;
        for (int m = 0; m < mutants(); m++) {
            Mutant mutant = mutate(original, (int) dataStart, r);
            Files.write(file, mutant.bytes());
            Outcome o = load(() -> GgufModelLoader.load(file), mutant.how() + " (mutant " + m + ", seed " + seed() + ")");
            if (o == Outcome.LOADED) loaded++; else refused++;
        }
        System.out.printf("GGUF fuzz: %d mutants of seed %d: %d loaded, %d refused with one line%n", mutants(), seed(), loaded, refused);
        assertThat(refused).as("mutants refused").isPositive();
        assertThat(loaded + refused).isEqualTo(mutants());
    }

    @Test
    void everyLlama2cMutantLoadsOrIsRefusedWithOneShortLine() throws Exception {
        byte[] original = Files.readAllBytes(Stories260K.bin());
        Path file = dir.resolve("mutant.bin");
        SplittableRandom r = new SplittableRandom(seed() + 1);
        int n = Math.max(1, mutants() / 3);
        for (int m = 0; m < n; m++) {
            Mutant mutant = mutate(original, 28, r);
            Files.write(file, mutant.bytes());
            load(() -> Llama2cLoader.load(file, Stories260K.tokenizer()), mutant.how() + " (llama2.c mutant " + m + ", seed " + seed() + ")");
        }
    }

    @Test
    void aHugeKeyIsQuotedShortAndEscaped() throws Exception {
        // a key of 1 MB of binary (NUL, newlines, escape sequences), then an unknown value type
        ByteBuffer b = ByteBuffer.allocate(4 + 4 + 8 + 8 + 8 + (1 << 20) + 4).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(GgufFile.MAGIC).putInt(3).putLong(0).putLong(1).putLong(1 << 20);
        byte[] key = new byte[1 << 20];
        for (int i = 0; i < key.length; i++) key[i] = (byte) "\0\n\u001b[31m\r\t x".charAt(i % 10);
        b.put(key).putInt(99);
        Path file = Files.write(dir.resolve("key.gguf"), b.array());
        try {
            GgufModelLoader.load(file).close();
            fail("loaded");
        } catch (InputException e) {
            checkMessage(e.getMessage(), "huge key");
            assertThat(e.getMessage()).contains("unknown metadata value type 99").contains("\\u0000").contains("\\n").contains("more characters");
        }
    }

    @Test
    void nanWeightsAreRefusedNamingTheTensor() throws Exception {
        byte[] bytes = Files.readAllBytes(Stories260K.gguf());
        String name;
        long at;
        try (GgufFile f = GgufFile.open(Stories260K.gguf())) {
            GgufTensorInfo t = f.tensorInfo("output_norm.weight");
            name = t.name();
            at = t.fileOffset() + (t.type() == io.fdkvc.engine.tensor.GgmlType.F32 ? 4 : 0);
            assertThat(t.type()).isEqualTo(io.fdkvc.engine.tensor.GgmlType.F32);
        }
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt((int) at, 0x7FC00000); // NaN
        Path file = Files.write(dir.resolve("nan.gguf"), bytes);
        try {
            GgufModelLoader.load(file).close();
            fail("a NaN weight was accepted");
        } catch (InputException e) {
            assertThat(e.getMessage()).contains("tensor '" + name + "' holds a NaN or infinite value (element 1");
        }
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt((int) at, 0x7F800000); // +Inf
        Files.write(file, bytes);
        try {
            GgufModelLoader.load(file).close();
            fail("an infinite weight was accepted");
        } catch (InputException e) {
            assertThat(e.getMessage()).contains("tensor '" + name + "' holds a NaN or infinite value");
        }
    }

    @Test
    void anAllZeroLlama2cFileIsRefusedFromItsHeaderWithoutReadingTheRest() throws Exception {
        // 64 MB of zeros as a sparse file: the header says dim 0, refused before any bulk read
        Path file = dir.resolve("zeros.bin");
        try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(1), (64L << 20) - 1);
        }
        try {
            Llama2cLoader.load(file, Stories260K.tokenizer());
            fail("loaded");
        } catch (InputException e) {
            assertThat(e.getMessage()).endsWith("header field dim is 0, must be positive");
        }
        // a valid header whose implied size disagrees with the file's
        byte[] head = Arrays.copyOf(Files.readAllBytes(Stories260K.bin()), 28);
        Path cut = Files.write(dir.resolve("head.bin"), head);
        try {
            Llama2cLoader.load(cut, Stories260K.tokenizer());
            fail("loaded");
        } catch (InputException e) {
            assertThat(e.getMessage()).contains("the llama2.c header implies " + Files.size(Stories260K.bin()) + " bytes, the file has 28");
        }
    }

    private enum Outcome { LOADED, REFUSED }

    @FunctionalInterface
    private interface Load {
        LoadedModel run() throws Exception;
    }

    private static Outcome load(Load load, String what) {
        try {
            LoadedModel m = load.run();
            m.close();
            return Outcome.LOADED;
        } catch (InputException e) {
            checkMessage(e.getMessage(), what);
            return Outcome.REFUSED;
        } catch (Throwable t) { // an Error included: this is what must never happen
            throw new AssertionError(what + ": escaped as " + t, t);
        }
    }

    static void checkMessage(String message, String what) {
        assertThat(message).as(what).isNotBlank();
        assertThat(message.getBytes(StandardCharsets.UTF_8).length).as(what + ": message bytes").isLessThanOrEqualTo(MAX_MESSAGE_BYTES);
        for (int i = 0; i < message.length(); i++) {
            char c = message.charAt(i);
            if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) fail(what + ": control character " + (int) c + " in the message: " + message);
        }
    }

    record Mutant(byte[] bytes, String how) {}

    /** One random mutation, mostly within the first {@code header} bytes where the structure is. */
    static Mutant mutate(byte[] original, int header, SplittableRandom r) {
        byte[] b = original.clone();
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        int kind = r.nextInt(8);
        int at = r.nextInt(4) == 0 ? r.nextInt(b.length) : r.nextInt(Math.min(header, b.length));
        switch (kind) {
            case 0, 1 -> {
                int n = 1 + r.nextInt(4);
                for (int i = 0; i < n; i++) {
                    int p = r.nextInt(4) == 0 ? r.nextInt(b.length) : r.nextInt(Math.min(header, b.length));
                    b[p] ^= (byte) (1 << r.nextInt(8));
                }
                return new Mutant(b, "flipped " + n + " bits");
            }
            case 2 -> {
                long v = EXTREMES[r.nextInt(EXTREMES.length)];
                int p = Math.min(at, b.length - 8);
                bb.putLong(p, v);
                return new Mutant(b, "u64 " + v + " at " + p);
            }
            case 3 -> {
                long v = EXTREMES[r.nextInt(EXTREMES.length)];
                int p = Math.min(at, b.length - 4);
                bb.putInt(p, (int) v);
                return new Mutant(b, "u32 " + (int) v + " at " + p);
            }
            case 4 -> {
                int len = r.nextInt(b.length);
                return new Mutant(Arrays.copyOf(b, len), "truncated to " + len);
            }
            case 5 -> {
                int p = Math.max(header, Math.min(b.length - 4, header + r.nextInt(Math.max(1, b.length - header))));
                p -= p % 4;
                bb.putInt(p, r.nextBoolean() ? 0x7FC00000 : 0xFF800000);
                return new Mutant(b, "NaN/-Inf bits at " + p);
            }
            case 6 -> {
                int n = 1 + r.nextInt(64);
                byte[] out = new byte[b.length + n];
                System.arraycopy(b, 0, out, 0, at);
                for (int i = 0; i < n; i++) out[at + i] = (byte) r.nextInt(256);
                System.arraycopy(b, at, out, at + n, b.length - at);
                return new Mutant(out, "inserted " + n + " bytes at " + at);
            }
            default -> {
                int n = 1 + r.nextInt(Math.min(64, b.length - at));
                byte[] out = new byte[b.length - n];
                System.arraycopy(b, 0, out, 0, at);
                System.arraycopy(b, at + n, out, at, b.length - at - n);
                return new Mutant(out, "deleted " + n + " bytes at " + at);
            }
        }
    }
}
