package io.fdkvc.cli.trace;

import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.core.Untrusted;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.replay.TraceReplay;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads and fully validates a trace before anything is replayed, so that bad input produces one
 * error naming the turn and the field, and no output at all. Unknown fields are refused too: a
 * misspelt optional field would otherwise be silently ignored.
 */
public final class TraceReader {
    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();
    private static final Set<String> TOP_FIELDS = Set.of("policy", "dim", "turns");
    private static final Set<String> TURN_FIELDS = Set.of("queries", "queryEmbedding", "entries");
    private static final Set<String> ENTRY_FIELDS = Set.of("id", "key", "embedding");

    private TraceReader() {}

    /** Parses {@code text} (named {@code source} in errors). */
    public static Trace read(String text, String source) {
        if (text.isBlank()) throw new InputException(source + ": empty (a trace is one JSON object)");
        JsonNode root;
        try {
            root = JSON.readTree(text);
        } catch (JacksonException e) {
            throw new InputException(source + ": not valid JSON: " + Untrusted.excerpt(e.getOriginalMessage()));
        }
        if (root == null || root.isMissingNode() || !root.isObject()) {
            throw new InputException(source + ": the trace must be one JSON object");
        }
        onlyKnown(root, TOP_FIELDS, "");
        int dim = (int) integer(root, "dim", "dim", 1, Limits.MAX_DIM);
        PolicySpec policy = policy(field(root, "policy", "policy"));
        JsonNode turnsNode = field(root, "turns", "turns");
        if (!turnsNode.isArray()) throw new InputException("turns: must be an array");

        List<TraceReplay.Step> turns = new ArrayList<>();
        List<Object> ids = new ArrayList<>();
        Set<Object> seen = new HashSet<>();
        for (int t = 0; t < turnsNode.size(); t++) {
            JsonNode turn = turnsNode.get(t);
            String at = "turn " + t + ": ";
            if (!turn.isObject()) throw new InputException(at + "must be an object");
            onlyKnown(turn, TURN_FIELDS, at);
            JsonNode q = field(turn, "queries", at + "queries");
            if (!q.isArray() || q.isEmpty()) throw new InputException(at + "queries: must be a non-empty array of vectors");
            // every row's length is checked before the rows are allocated: the size comes from what the input holds
            for (int r = 0; r < q.size(); r++) shape(q.get(r), dim, at + "queries[" + r + "]");
            float[] queries = new float[q.size() * dim];
            for (int r = 0; r < q.size(); r++) vector(q.get(r), dim, at + "queries[" + r + "]", queries, r * dim);
            float[] qe = null;
            if (turn.has("queryEmbedding")) {
                qe = new float[dim];
                vector(turn.get("queryEmbedding"), dim, at + "queryEmbedding", qe, 0);
            }
            JsonNode es = field(turn, "entries", at + "entries");
            if (!es.isArray()) throw new InputException(at + "entries: must be an array");
            List<TraceReplay.Entry> entries = new ArrayList<>();
            for (int j = 0; j < es.size(); j++) {
                JsonNode e = es.get(j);
                String eat = at + "entries[" + j + "]";
                if (!e.isObject()) throw new InputException(eat + ": must be an object");
                onlyKnown(e, ENTRY_FIELDS, eat + ".");
                Object id = id(field(e, "id", eat + ".id"), eat + ".id");
                if (!seen.add(id)) throw new InputException(eat + ".id: duplicate id " + excerpt(e.get("id")));
                float[] key = new float[dim];
                vector(field(e, "key", eat + ".key"), dim, eat + ".key", key, 0);
                float[] emb = key;
                if (e.has("embedding")) {
                    emb = new float[dim];
                    vector(e.get("embedding"), dim, eat + ".embedding", emb, 0);
                }
                entries.add(new TraceReplay.Entry(ids.size(), key, emb));
                ids.add(id);
            }
            turns.add(new TraceReplay.Step(queries, q.size(), qe, entries));
        }
        return new Trace(policy, dim, turns, ids);
    }

    private static PolicySpec policy(JsonNode p) {
        if (!p.isObject()) throw new InputException("policy: must be an object");
        JsonNode nameNode = field(p, "name", "policy.name");
        if (!nameNode.isString()) throw new InputException("policy.name: must be a string");
        int budget = (int) integer(p, "budget", "policy.budget", 1, Limits.MAX_BUDGET);
        Map<String, Object> params = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : p.properties()) {
            String k = e.getKey();
            if (k.equals("name") || k.equals("budget")) continue;
            JsonNode v = e.getValue();
            if (!v.isNumber()) throw new InputException("policy." + Untrusted.excerpt(k) + ": must be a number, got " + excerpt(v));
            params.put(k, v.isIntegralNumber() ? (Object) v.bigIntegerValue() : (Object) v.decimalValue());
        }
        try {
            return PolicyRegistry.spec(nameNode.stringValue(), budget, params);
        } catch (ParameterException e) {
            // the registry names an unknown policy "policy"; in a trace that is the field policy.name
            String field = e.parameter().equals("policy") ? "name" : e.parameter();
            throw new InputException("policy." + Untrusted.excerpt(field) + ": " + e.problem());
        }
    }

    private static Object id(JsonNode n, String at) {
        if (n.isString()) return n.stringValue();
        if (n.isIntegralNumber() && n.canConvertToLong()) return n.longValue();
        throw new InputException(at + ": must be a string or an integer, got " + excerpt(n));
    }

    private static void shape(JsonNode n, int dim, String at) {
        if (n == null || !n.isArray()) throw new InputException(at + ": must be an array of " + dim + " numbers");
        if (n.size() != dim) throw new InputException(at + ": must have exactly dim = " + dim + " numbers, got " + n.size());
    }

    /** A JSON value quoted in a message: escaped and cut ({@link Untrusted#excerpt}). */
    private static String excerpt(JsonNode n) {
        return Untrusted.excerpt(String.valueOf(n));
    }

    private static void vector(JsonNode n, int dim, String at, float[] out, int off) {
        shape(n, dim, at);
        for (int i = 0; i < dim; i++) {
            JsonNode x = n.get(i);
            if (!x.isNumber()) throw new InputException(at + "[" + i + "]: must be a number, got " + excerpt(x));
            double d = x.doubleValue();
            float f = (float) d;
            if (!Double.isFinite(d) || !Float.isFinite(f)) {
                throw new InputException(at + "[" + i + "]: must be a finite 32-bit number, got " + excerpt(x));
            }
            out[off + i] = f;
        }
    }

    private static long integer(JsonNode parent, String name, String at, long min, long max) {
        JsonNode n = field(parent, name, at);
        if (!n.isIntegralNumber() || !n.canConvertToLong()) throw new InputException(at + ": must be an integer, got " + excerpt(n));
        long v = n.longValue();
        if (v < min || v > max) throw new InputException(at + ": must be in [" + min + ", " + max + "], got " + v + " (docs/limits.md)");
        return v;
    }

    private static JsonNode field(JsonNode parent, String name, String at) {
        JsonNode n = parent.get(name);
        if (n == null || n.isNull()) throw new InputException(at + ": missing");
        return n;
    }

    private static void onlyKnown(JsonNode node, Set<String> known, String at) {
        for (String k : node.propertyNames()) {
            if (!known.contains(k)) {
                throw new InputException(at + Untrusted.excerpt(k) + ": unknown field (expected one of " + String.join(", ", new java.util.TreeSet<>(known)) + ")");
            }
        }
    }
}
