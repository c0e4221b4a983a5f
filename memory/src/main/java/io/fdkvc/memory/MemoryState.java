package io.fdkvc.memory;

import io.fdkvc.core.InputException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a policy-chosen chat memory stores beside the transcript so that a memory rebuilt from the
 * store selects exactly what it selected before: as {@link #attributes() attributes} holding only
 * JSON-friendly values (numbers, strings, lists, maps), which each adapter keeps in one message at
 * the end of the stored list in its framework's form (LangChain4j: a custom message; Spring AI: a
 * system message with the attributes as JSON text). Embeddings are little-endian float32 in base64
 * (exact, unlike decimal text).
 *
 * @param costs      token count of every non-system transcript message, in order
 * @param embeddings unit embedding of every closed entry, in order
 * @param selection  transcript indices shown by {@code messages()} when it was written (a check)
 */
public record MemoryState(Config config, int systemCost, List<Integer> costs, List<float[]> embeddings, List<Integer> selection) {
    /** The attribute that marks a state (its value is the format's version). */
    public static final String MARKER = "fdkvcChatMemory";
    static final int VERSION = 1;

    /** The configuration that the selection depends on. */
    public record Config(String policy, Map<String, String> parameters, int maxTokens, double temperature, boolean packing) {}

    /** The state as JSON-friendly attributes, {@link #MARKER} first. */
    public Map<String, Object> attributes() {
        MemoryState s = this;
        Map<String, Object> a = new LinkedHashMap<>();
        a.put(MARKER, VERSION);
        a.put("policy", s.config().policy());
        a.put("parameters", new LinkedHashMap<>(s.config().parameters()));
        a.put("maxTokens", s.config().maxTokens());
        a.put("temperature", s.config().temperature());
        a.put("packing", s.config().packing());
        a.put("systemCost", s.systemCost());
        a.put("costs", new ArrayList<>(s.costs()));
        List<String> e = new ArrayList<>(s.embeddings().size());
        for (float[] v : s.embeddings()) e.add(encode(v));
        a.put("embeddings", e);
        a.put("selection", new ArrayList<>(s.selection()));
        return a;
    }

    /** Whether {@code attributes} are a state's (they hold {@link #MARKER}). */
    public static boolean isState(Map<String, ?> attributes) {
        return attributes.containsKey(MARKER);
    }

    /**
     * The state in {@code a} (attributes for which {@link #isState} holds).
     *
     * @throws InputException naming the memory id and the attribute that is missing or malformed
     */
    public static MemoryState fromAttributes(Map<String, Object> a, Object id) {
        String where = "chat memory store, id '" + id + "', state message: ";
        int version = integer(a, MARKER, where);
        if (version != VERSION) throw new InputException(where + MARKER + " version " + version + " is not " + VERSION);
        Map<String, String> params = new LinkedHashMap<>();
        if (!(a.get("parameters") instanceof Map<?, ?> p)) throw new InputException(where + "'parameters' is missing");
        p.forEach((k, v) -> params.put(String.valueOf(k), String.valueOf(v)));
        if (!(a.get("policy") instanceof String policy)) throw new InputException(where + "'policy' is missing");
        if (!(a.get("packing") instanceof Boolean packing)) throw new InputException(where + "'packing' is missing or not a boolean");
        Config config = new Config(policy, params, integer(a, "maxTokens", where), number(a.get("temperature"), "temperature", where).doubleValue(),
                packing);
        List<float[]> embeddings = new ArrayList<>();
        for (Object o : list(a, "embeddings", where)) {
            if (!(o instanceof String s)) throw new InputException(where + "'embeddings' holds a non-string");
            embeddings.add(decode(s, where));
        }
        return new MemoryState(config, integer(a, "systemCost", where), integers(a, "costs", where), embeddings,
                integers(a, "selection", where));
    }

    private static List<?> list(Map<String, Object> a, String key, String where) {
        if (!(a.get(key) instanceof List<?> l)) throw new InputException(where + "'" + key + "' is missing or not a list");
        return l;
    }

    private static List<Integer> integers(Map<String, Object> a, String key, String where) {
        List<Integer> out = new ArrayList<>();
        for (Object o : list(a, key, where)) out.add(exactInt(number(o, key, where), key, where));
        return out;
    }

    private static int integer(Map<String, Object> a, String key, String where) {
        return exactInt(number(a.get(key), key, where), key, where);
    }

    private static Number number(Object o, String key, String where) {
        if (o instanceof Number n) return n;
        if (o instanceof String s) {
            try {
                return Double.valueOf(s);
            } catch (NumberFormatException e) {
                // fall through to the error below
            }
        }
        throw new InputException(where + "'" + key + "' must be a number, got " + o);
    }

    private static int exactInt(Number n, String key, String where) {
        double d = n.doubleValue();
        if (d != Math.rint(d) || d < Integer.MIN_VALUE || d > Integer.MAX_VALUE) {
            throw new InputException(where + "'" + key + "' must be an integer, got " + n);
        }
        return (int) d;
    }

    static String encode(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        return Base64.getEncoder().encodeToString(b.array());
    }

    static float[] decode(String s, String where) {
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            throw new InputException(where + "an embedding is not base64: " + e.getMessage());
        }
        if (bytes.length == 0 || bytes.length % 4 != 0) throw new InputException(where + "an embedding has " + bytes.length + " bytes");
        float[] v = new float[bytes.length / 4];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(v);
        return v;
    }
}
