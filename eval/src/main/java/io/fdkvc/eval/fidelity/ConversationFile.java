package io.fdkvc.eval.fidelity;

import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.core.Untrusted;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.eval.fidelity.ConversationScript.Probe;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The fidelity conversation format, JSON Lines, one conversation a line:
 * <pre>{"id": "c-00", "turns": [{"ids": [1, 403, ...]}, {"text": "..."}, ...],
 *  "probes": [{"turn": 3, "start": 2, "end": 4, "label": "Dan"}]}</pre>
 * A turn is {@code {"ids": [...]}}, {@code {"text": "..."}} or {@code {"role": ..., "content": ...}};
 * chat messages are not mixed with the other two in one conversation. {@code probes} is optional.
 * Every problem is one {@link InputException} of the form {@code FILE:LINE: field: what is wrong}.
 * Checks that need the model (ids inside the vocabulary, probes inside their turn's tokens) are
 * {@link TokenizedConversation#of}'s.
 */
public final class ConversationFile {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Set<String> TOP = Set.of("id", "turns", "probes");
    private static final Set<String> PROBE = Set.of("turn", "start", "end", "label");

    private ConversationFile() {}

    /**
     * Every conversation of {@code file}, in file order.
     *
     * @throws InputException naming the file, the line and the field
     */
    public static List<ConversationScript> read(Path file) {
        if (!Files.isRegularFile(file)) throw new InputException(file + ": no such file");
        try {
            if (Files.size(file) > Limits.MAX_CORPUS_BYTES) {
                throw new InputException(file + ": larger than " + Limits.MAX_CORPUS_BYTES + " bytes (docs/limits.md)");
            }
        } catch (IOException e) {
            throw new InputException(file + ": cannot read: " + e.getMessage(), e);
        }
        List<ConversationScript> out = new ArrayList<>();
        Map<String, Integer> lineOfId = new HashMap<>();
        var decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try (BufferedReader in = new BufferedReader(new java.io.InputStreamReader(Files.newInputStream(file), decoder), 1 << 16)) {
            String line;
            int lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) continue;
                String at = file + ":" + lineNo + ": ";
                JsonNode root;
                try {
                    root = JSON.readTree(line);
                } catch (JacksonException e) {
                    throw new InputException(at + "malformed JSON: " + Untrusted.excerpt(e.getOriginalMessage()));
                }
                ConversationScript c = conversation(root, at);
                Integer first = lineOfId.putIfAbsent(c.id(), lineNo);
                if (first != null) throw new InputException(at + "id: '" + Untrusted.excerpt(c.id()) + "' repeats the one on line " + first);
                out.add(c);
            }
        } catch (CharacterCodingException e) {
            throw new InputException(file + ": not UTF-8 text", e);
        } catch (IOException e) {
            throw new InputException(file + ": cannot read: " + e.getMessage(), e);
        }
        if (out.isEmpty()) throw new InputException(file + ": holds no conversation (expected JSON Lines, one conversation a line)");
        return out;
    }

    private static ConversationScript conversation(JsonNode root, String at) {
        if (root == null || !root.isObject()) throw new InputException(at + "expected a JSON object (one conversation a line)");
        onlyFields(root, TOP, "", at);
        JsonNode id = root.get("id");
        if (id == null || !id.isString() || id.asString().isEmpty()) throw new InputException(at + "id: must be a non-empty string");
        JsonNode turns = root.get("turns");
        if (turns == null || !turns.isArray() || turns.isEmpty()) throw new InputException(at + "turns: must be a non-empty array");
        List<ConversationScript.Turn> ts = new ArrayList<>();
        for (int i = 0; i < turns.size(); i++) ts.add(turn(turns.get(i), "turns[" + i + "]", at));
        boolean messages = ts.getFirst() instanceof ConversationScript.Message;
        for (int i = 0; i < ts.size(); i++) {
            if ((ts.get(i) instanceof ConversationScript.Message) != messages) {
                throw new InputException(at + "turns[" + i + "]: chat messages ({\"role\", \"content\"}) and ids or text turns "
                        + "are not mixed in one conversation");
            }
        }
        List<Probe> probes = new ArrayList<>();
        JsonNode ps = root.get("probes");
        if (ps != null && !ps.isNull()) {
            if (!ps.isArray()) throw new InputException(at + "probes: must be an array");
            for (int i = 0; i < ps.size(); i++) probes.add(probe(ps.get(i), "probes[" + i + "]", at, ts.size()));
        }
        return new ConversationScript(id.asString(), ts, probes);
    }

    private static ConversationScript.Turn turn(JsonNode t, String where, String at) {
        if (t == null || !t.isObject()) throw new InputException(at + where + ": must be an object ({\"ids\"}, {\"text\"} or {\"role\", \"content\"})");
        if (t.has("ids")) {
            onlyFields(t, Set.of("ids"), where + ".", at);
            JsonNode ids = t.get("ids");
            if (!ids.isArray() || ids.isEmpty()) throw new InputException(at + where + ".ids: must be a non-empty array of token ids");
            if (ids.size() > Limits.MAX_TURN_TOKENS) {
                throw new InputException(at + where + ".ids: more than " + Limits.MAX_TURN_TOKENS + " ids (docs/limits.md)");
            }
            int[] a = new int[ids.size()];
            for (int k = 0; k < a.length; k++) {
                JsonNode v = ids.get(k);
                if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < 0) {
                    throw new InputException(at + where + ".ids[" + k + "]: must be a token id (an integer >= 0), got " + Untrusted.excerpt(v.toString()));
                }
                a[k] = v.asInt();
            }
            return new ConversationScript.Ids(a);
        }
        if (t.has("text")) {
            onlyFields(t, Set.of("text"), where + ".", at);
            JsonNode text = t.get("text");
            if (!text.isString() || text.asString().isEmpty()) throw new InputException(at + where + ".text: must be a non-empty string");
            return new ConversationScript.Text(text.asString());
        }
        if (t.has("role") || t.has("content")) {
            onlyFields(t, Set.of("role", "content"), where + ".", at);
            JsonNode role = t.get("role"), content = t.get("content");
            if (role == null || !role.isString()) throw new InputException(at + where + ".role: must be system, user or assistant");
            ChatTemplate.Role r;
            try {
                r = ChatTemplate.Role.of(role.asString());
            } catch (InputException e) {
                throw new InputException(at + where + ".role: must be system, user or assistant, got '" + Untrusted.excerpt(role.asString()) + "'");
            }
            if (r == ChatTemplate.Role.TOOL) throw new InputException(at + where + ".role: tool messages are not supported here");
            if (content == null || !content.isString()) throw new InputException(at + where + ".content: must be a string");
            return new ConversationScript.Message(new ChatTemplate.Message(r, content.asString()));
        }
        throw new InputException(at + where + ": needs \"ids\", \"text\" or \"role\" and \"content\"");
    }

    private static Probe probe(JsonNode p, String where, String at, int turns) {
        if (p == null || !p.isObject()) throw new InputException(at + where + ": must be an object {\"turn\", \"start\", \"end\", \"label\"}");
        onlyFields(p, PROBE, where + ".", at);
        int turn = intField(p, "turn", where, at), start = intField(p, "start", where, at), end = intField(p, "end", where, at);
        if (turn >= turns) throw new InputException(at + where + ".turn: " + turn + " is past the conversation's " + turns + " turns");
        if (end <= start) throw new InputException(at + where + ".end: must be greater than start (" + start + "), got " + end);
        JsonNode label = p.get("label");
        if (label != null && !label.isNull() && !label.isString()) throw new InputException(at + where + ".label: must be a string");
        return new Probe(turn, start, end, label == null || label.isNull() ? "" : label.asString());
    }

    private static int intField(JsonNode o, String name, String where, String at) {
        JsonNode v = o.get(name);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < 0) {
            throw new InputException(at + where + "." + name + ": must be an integer >= 0");
        }
        return v.asInt();
    }

    private static void onlyFields(JsonNode o, Set<String> known, String prefix, String at) {
        Iterator<String> names = o.propertyNames().iterator();
        while (names.hasNext()) {
            String n = names.next();
            if (!known.contains(n)) {
                throw new InputException(at + prefix + Untrusted.excerpt(n) + ": unknown field (known: " + String.join(", ", new java.util.TreeSet<>(known)) + ")");
            }
        }
    }

    /** Writes conversations of token-id turns as JSON Lines (what the generator makes). */
    public static void write(Path file, List<ConversationScript> conversations) throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (ConversationScript c : conversations) {
                ObjectNode o = JSON.createObjectNode();
                o.put("id", c.id());
                ArrayNode turns = o.putArray("turns");
                for (ConversationScript.Turn t : c.turns()) {
                    ObjectNode to = turns.addObject();
                    switch (t) {
                        case ConversationScript.Ids ids -> {
                            ArrayNode a = to.putArray("ids");
                            for (int id : ids.ids()) a.add(id);
                        }
                        case ConversationScript.Text text -> to.put("text", text.text());
                        case ConversationScript.Message m -> {
                            to.put("role", m.message().role().id());
                            to.put("content", m.message().content());
                        }
                    }
                }
                ArrayNode probes = o.putArray("probes");
                for (Probe p : c.probes()) {
                    ObjectNode po = probes.addObject();
                    po.put("turn", p.turn());
                    po.put("start", p.start());
                    po.put("end", p.end());
                    po.put("label", p.label());
                }
                w.write(JSON.writeValueAsString(o));
                w.newLine();
            }
        }
    }
}
