package io.fdkvc.engine.tokenizer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Vocabularies for the tests: the two real files of stories260K read by small test-only readers
 * (independent of the engine's own loaders), and hand-made byte-level BPE vocabularies.
 */
public final class TestVocabularies {
    private TestVocabularies() {}

    public static Path shared() {
        String dir = System.getProperty("fdkvc.shared");
        if (dir == null) {
            throw new IllegalStateException("system property fdkvc.shared is not set (surefire sets it to ../shared)");
        }
        return Path.of(dir);
    }

    public static Path stories260K(String file) {
        Path p = shared().resolve("models/stories260K").resolve(file);
        if (!Files.isRegularFile(p)) {
            throw new IllegalStateException("missing test model file " + p);
        }
        return p;
    }

    /**
     * llama2.c's tokenizer file: int32 max_token_length, then per token float32 score, int32
     * length, that many bytes (little-endian). 512 tokens; BOS 1, EOS 2; no token types.
     */
    public static Vocabulary tok512() {
        try {
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(stories260K("tok512.bin"))).order(ByteOrder.LITTLE_ENDIAN);
            b.getInt(); // max token length
            List<String> tokens = new ArrayList<>();
            List<Float> scores = new ArrayList<>();
            while (b.hasRemaining()) {
                scores.add(b.getFloat());
                byte[] bytes = new byte[b.getInt()];
                b.get(bytes);
                tokens.add(new String(bytes, StandardCharsets.UTF_8));
            }
            float[] s = new float[scores.size()];
            for (int i = 0; i < s.length; i++) {
                s[i] = scores.get(i);
            }
            return new Vocabulary("llama", null, tokens.toArray(String[]::new), s, null, null, 1, 2, null);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The tokenizer metadata of stories260K.gguf, read by a minimal GGUF v3 metadata reader. */
    public static Vocabulary stories260KGguf() {
        Map<String, Object> kv = readGgufMetadata(stories260K("stories260K.gguf"));
        Object[] tokens = (Object[]) kv.get("tokenizer.ggml.tokens");
        Object[] scores = (Object[]) kv.get("tokenizer.ggml.scores");
        Object[] types = (Object[]) kv.get("tokenizer.ggml.token_type");
        String[] t = new String[tokens.length];
        float[] s = new float[scores.length];
        int[] ty = new int[types.length];
        for (int i = 0; i < t.length; i++) {
            t[i] = (String) tokens[i];
            s[i] = (Float) scores[i];
            ty[i] = ((Number) types[i]).intValue();
        }
        return new Vocabulary((String) kv.get("tokenizer.ggml.model"), (String) kv.get("tokenizer.ggml.pre"), t, s, ty,
                null, ((Number) kv.get("tokenizer.ggml.bos_token_id")).intValue(),
                ((Number) kv.get("tokenizer.ggml.eos_token_id")).intValue(), (String) kv.get("tokenizer.chat_template"));
    }

    public static Map<String, Object> readGgufMetadata(Path file) {
        try {
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
            if (b.getInt() != 0x46554747) { // "GGUF"
                throw new IllegalStateException("not a GGUF file: " + file);
            }
            b.getInt(); // version
            b.getLong(); // tensor count
            long count = b.getLong();
            Map<String, Object> kv = new HashMap<>();
            for (long i = 0; i < count; i++) {
                String key = ggufString(b);
                kv.put(key, ggufValue(b, b.getInt()));
            }
            return kv;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String ggufString(ByteBuffer b) {
        byte[] bytes = new byte[(int) b.getLong()];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static Object ggufValue(ByteBuffer b, int type) {
        return switch (type) {
            case 0 -> b.get() & 0xFF;
            case 1 -> (int) b.get();
            case 2 -> b.getShort() & 0xFFFF;
            case 3 -> (int) b.getShort();
            case 4 -> b.getInt() & 0xFFFFFFFFL;
            case 5 -> b.getInt();
            case 6 -> b.getFloat();
            case 7 -> b.get() != 0;
            case 8 -> ggufString(b);
            case 9 -> {
                int elementType = b.getInt();
                Object[] values = new Object[(int) b.getLong()];
                for (int i = 0; i < values.length; i++) {
                    values[i] = ggufValue(b, elementType);
                }
                yield values;
            }
            case 10, 11 -> b.getLong();
            case 12 -> b.getDouble();
            default -> throw new IllegalStateException("unknown GGUF value type " + type);
        };
    }

    /**
     * A byte-level vocabulary: ids 0..255 are the 256 byte tokens in byte order (id == byte
     * value, token string = GPT-2's character for the byte), then {@code extra} tokens from 256
     * on, with the given types (null: normal).
     */
    public static Vocabulary byteLevel(String pre, List<String> extra, int[] extraTypes, List<String> merges, int bos, int eos) {
        String[] tokens = new String[256 + extra.size()];
        int[] types = new int[tokens.length];
        for (int b = 0; b < 256; b++) {
            tokens[b] = String.valueOf(ByteLevelBpeTokenizer.byteChar(b));
            types[b] = Tokenizer.NORMAL;
        }
        for (int i = 0; i < extra.size(); i++) {
            tokens[256 + i] = extra.get(i);
            types[256 + i] = extraTypes == null ? Tokenizer.NORMAL : extraTypes[i];
        }
        return new Vocabulary("gpt2", pre, tokens, null, types, merges.toArray(String[]::new), bos, eos, null);
    }
}
