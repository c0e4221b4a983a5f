package io.fdkvc.server;

import io.fdkvc.engine.chat.GenerationParams;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.template.ChatTemplate.Role;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A parsed and validated {@code POST /v1/chat/completions} body. Fields this server does not
 * use (model, presence_penalty, user, ...) are ignored; fields it cannot honour ({@code n} &gt; 1)
 * and values out of range are refused with 400 naming the field.
 *
 * @param fdkvc     the {@code "fdkvc"} extension as sent (a conversation's own policy, {@link PolicyChoice}), or null
 */
public record ChatRequest(List<Message> messages, GenerationParams params, boolean stream, boolean includeUsage, JsonNode fdkvc) {
    /** Longest reply a request may ask for. */
    public static final int MAX_TOKENS_LIMIT = 1 << 16;

    public static ChatRequest parse(JsonMapper json, byte[] body, int defaultMaxTokens, float defaultTemperature, float defaultTopP,
                                    long defaultSeed) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (RuntimeException e) {
            throw ApiError.invalid(null, "the body is not valid JSON");
        }
        if (root == null || !root.isObject()) throw ApiError.invalid(null, "the body must be a JSON object");
        JsonNode ms = root.get("messages");
        if (ms == null || ms.isNull()) throw ApiError.invalid("messages", "'messages' is required");
        if (!ms.isArray() || ms.isEmpty()) throw ApiError.invalid("messages", "'messages' must be a non-empty array");
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < ms.size(); i++) messages.add(message(ms.get(i), i));

        JsonNode n = root.get("n");
        if (n != null && !n.isNull() && !(n.isIntegralNumber() && n.asLong() == 1)) {
            throw ApiError.invalid("n", "'n' must be 1 (one choice per request)");
        }
        int maxTokens = defaultMaxTokens;
        for (String f : new String[] {"max_tokens", "max_completion_tokens"}) {
            JsonNode v = root.get(f);
            if (v == null || v.isNull()) continue;
            if (!v.isIntegralNumber() || v.asLong() < 1 || v.asLong() > MAX_TOKENS_LIMIT) {
                throw ApiError.invalid(f, "'" + f + "' must be an integer in 1.." + MAX_TOKENS_LIMIT);
            }
            maxTokens = (int) v.asLong();
        }
        float temperature = (float) number(root, "temperature", defaultTemperature, 0, 2);
        float topP = (float) number(root, "top_p", defaultTopP, Double.MIN_VALUE, 1);
        long seed = defaultSeed;
        JsonNode s = root.get("seed");
        if (s != null && !s.isNull()) {
            if (!s.isIntegralNumber() || !s.canConvertToLong()) throw ApiError.invalid("seed", "'seed' must be an integer");
            seed = s.asLong();
        }
        List<String> stop = stops(root.get("stop"));
        boolean stream = bool(root, "stream");
        boolean includeUsage = false;
        JsonNode so = root.get("stream_options");
        if (so != null && !so.isNull()) {
            if (!so.isObject()) throw ApiError.invalid("stream_options", "'stream_options' must be an object");
            includeUsage = bool(so, "include_usage");
        }
        return new ChatRequest(messages, new GenerationParams(maxTokens, temperature, topP, seed, stop), stream, includeUsage,
                root.get(PolicyChoice.FIELD));
    }

    private static Message message(JsonNode m, int i) {
        String where = "messages[" + i + "]";
        if (m == null || !m.isObject()) throw ApiError.invalid(where, "'" + where + "' must be an object");
        JsonNode r = m.get("role");
        if (r == null || !r.isString()) throw ApiError.invalid(where + ".role", "'" + where + ".role' is required");
        Role role = switch (r.asString()) {
            case "system", "developer" -> Role.SYSTEM;
            case "user" -> Role.USER;
            case "assistant" -> Role.ASSISTANT;
            default -> throw ApiError.invalid(where + ".role", "unknown role " + ApiError.excerpt(r.asString())
                    + " in " + where + " (system, user or assistant)");
        };
        JsonNode c = m.get("content");
        String content;
        if (c == null || c.isNull()) {
            throw ApiError.invalid(where + ".content", "'" + where + ".content' is required");
        } else if (c.isString()) {
            content = c.asString();
        } else if (c.isArray()) {
            // content parts: only text parts, concatenated
            StringBuilder b = new StringBuilder();
            for (JsonNode part : c) {
                JsonNode type = part.get("type"), text = part.get("text");
                if (type == null || !"text".equals(type.asString()) || text == null || !text.isString()) {
                    throw ApiError.invalid(where + ".content", "only text content parts are supported in " + where);
                }
                b.append(text.asString());
            }
            content = b.toString();
        } else {
            throw ApiError.invalid(where + ".content", "'" + where + ".content' must be a string or an array of text parts");
        }
        int lone = loneSurrogate(content);
        if (lone >= 0) {
            throw ApiError.invalid(where + ".content", "'" + where + ".content' is not valid Unicode: a lone UTF-16 surrogate at character "
                    + lone + " (it could not be stored or tokenized faithfully)");
        }
        return new Message(role, content);
    }

    /** The index of the first surrogate that is not half of a pair, or -1. */
    static int loneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!Character.isSurrogate(c)) continue;
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) i++;
            else return i;
        }
        return -1;
    }

    private static double number(JsonNode root, String f, double dflt, double min, double max) {
        JsonNode v = root.get(f);
        if (v == null || v.isNull()) return dflt;
        if (!v.isNumber() || !(v.asDouble() >= min && v.asDouble() <= max)) {
            throw ApiError.invalid(f, "'" + f + "' must be a number in [" + (min == Double.MIN_VALUE ? "0 (excluded)" : min) + ", " + max + "]");
        }
        return v.asDouble();
    }

    private static boolean bool(JsonNode root, String f) {
        JsonNode v = root.get(f);
        if (v == null || v.isNull()) return false;
        if (!v.isBoolean()) throw ApiError.invalid(f, "'" + f + "' must be true or false");
        return v.asBoolean();
    }

    private static List<String> stops(JsonNode v) {
        if (v == null || v.isNull()) return List.of();
        List<String> out = new ArrayList<>();
        if (v.isString()) {
            out.add(v.asString());
        } else if (v.isArray() && v.size() <= 4) {
            for (JsonNode s : v) {
                if (!s.isString()) throw ApiError.invalid("stop", "'stop' must be a string or up to 4 strings");
                out.add(s.asString());
            }
        } else {
            throw ApiError.invalid("stop", "'stop' must be a string or up to 4 strings");
        }
        for (String s : out) if (s.isEmpty()) throw ApiError.invalid("stop", "'stop' strings must be non-empty");
        return out;
    }
}
