package io.fdkvc.eval.dialogue;

import io.fdkvc.core.InputException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads the gzipped JSON Lines corpora described in {@code shared/data/dialogues/README.md}, one
 * dialogue per line, and validates every field the evaluation relies on. Any problem raises an
 * {@link InputException} of the form {@code FILE:LINE: what is wrong}, so a bad record is found
 * at once rather than surfacing later as a strange number.
 */
public final class DialogueReader {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private DialogueReader() {}

    /**
     * All dialogues of {@code file}, in file order.
     *
     * @throws InputException for a missing or unreadable file, a file that is not gzip, a
     *                        malformed line, a missing or ill-typed field, a duplicate dialogue id,
     *                        or a file without any dialogue
     */
    public static List<Dialogue> read(Dataset dataset, Path file) {
        if (!Files.isRegularFile(file)) throw new InputException("--data: no such file: " + file);
        List<Dialogue> out = new ArrayList<>();
        Map<String, Integer> lineOfId = new HashMap<>();
        try (InputStream raw = Files.newInputStream(file);
             BufferedReader in = new BufferedReader(new InputStreamReader(new GZIPInputStream(raw, 1 << 16), StandardCharsets.UTF_8))) {
            String line;
            int lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) continue; // a trailing newline or an empty line carries no record
                Located at = new Located(file, lineNo);
                JsonNode root;
                try {
                    root = JSON.readTree(line);
                } catch (JacksonException e) {
                    throw at.error("malformed JSON: " + e.getOriginalMessage());
                }
                if (root == null || !root.isObject()) throw at.error("expected a JSON object (one dialogue per line)");
                Dialogue d = switch (dataset) {
                    case SGD -> dialogue(root, at, DialogueReader::sgdTurn);
                    case TIAGE -> dialogue(root, at, DialogueReader::tiageTurn);
                    case MULTIWOZ -> dialogue(root, at, DialogueReader::multiwozTurn);
                };
                Integer first = lineOfId.putIfAbsent(d.id(), lineNo);
                if (first != null) throw at.error("dialogue_id '" + d.id() + "' repeats the one on line " + first);
                out.add(d);
            }
        } catch (ZipException e) {
            throw new InputException(file + ": not a gzip file (" + e.getMessage() + ")", e);
        } catch (IOException e) {
            throw new InputException(file + ": cannot read: " + e.getMessage(), e);
        }
        if (out.isEmpty()) throw new InputException(file + ": holds no dialogue");
        return out;
    }

    /** A file and line, to name in errors. */
    private record Located(Path file, int line) {
        InputException error(String message) {
            return new InputException(file + ":" + line + ": " + message);
        }
    }

    /** Reads one turn object {@code t}, the {@code i}-th, whose fields are named {@code where + field}. */
    @FunctionalInterface
    private interface TurnReader {
        Utterance read(JsonNode t, int i, String where, Located at);
    }

    /** The dialogue id and turns common to every corpus, each turn read by {@code turn}. */
    private static Dialogue dialogue(JsonNode root, Located at, TurnReader turn) {
        String id = requiredString(root, "dialogue_id", "", at);
        JsonNode turns = turns(root, at);
        List<Utterance> out = new ArrayList<>(turns.size());
        for (int i = 0; i < turns.size(); i++) {
            JsonNode t = turnObject(turns, i, at);
            out.add(turn.read(t, i, "turns[" + i + "].", at));
        }
        return new Dialogue(id, out);
    }

    private static Utterance sgdTurn(JsonNode t, int i, String where, Located at) {
        String speaker = speaker(t, where, at);
        String text = utterance(t, where, at);
        String service = requiredString(t, "service", where, at);
        if (service.isBlank()) throw at.error(where + "service is blank");
        JsonNode refs = t.get("refs");
        if (refs == null || !refs.isArray()) throw at.error(where + "refs: expected an array");
        int[] r = new int[refs.size()];
        for (int k = 0; k < refs.size(); k++) {
            JsonNode ref = refs.get(k);
            String rw = where + "refs[" + k + "].";
            if (!ref.isObject()) throw at.error(rw.substring(0, rw.length() - 1) + ": expected an object");
            int jt = requiredInt(ref, "turn", rw, "expected an integer", at);
            if (jt < 0 || jt >= i) throw at.error(rw + "turn = " + jt + " is not an earlier turn of turn " + i);
            if (k > 0 && jt <= r[k - 1]) throw at.error(rw + "turn = " + jt + " is not after the previous reference " + r[k - 1]);
            r[k] = jt;
        }
        return new Utterance(speaker, text, service, r, 0, needs(t, i, where, at));
    }

    /**
     * SGD {@code needs}: {@code [{"value", "turns": [j, ...]}]}, every earlier turn that said the
     * value, most recent first. Optional (files made before it existed lack it: no values then).
     */
    private static int[][] needs(JsonNode t, int i, String where, Located at) {
        JsonNode needs = t.get("needs");
        if (needs == null) return null;
        if (!needs.isArray()) throw at.error(where + "needs: expected an array");
        int[][] out = new int[needs.size()][];
        for (int k = 0; k < needs.size(); k++) {
            JsonNode need = needs.get(k);
            String nw = where + "needs[" + k + "].";
            if (!need.isObject()) throw at.error(nw.substring(0, nw.length() - 1) + ": expected an object");
            requiredString(need, "value", nw, at);
            JsonNode turns = need.get("turns");
            if (turns == null || !turns.isArray() || turns.isEmpty()) throw at.error(nw + "turns: expected a non-empty array");
            int[] js = new int[turns.size()];
            for (int m = 0; m < js.length; m++) {
                JsonNode v = turns.get(m);
                if (!v.isIntegralNumber() || !v.canConvertToInt()) throw at.error(nw + "turns[" + m + "]: expected an integer");
                int j = v.intValue();
                if (j < 0 || j >= i) throw at.error(nw + "turns[" + m + "] = " + j + " is not an earlier turn of turn " + i);
                if (m > 0 && j >= js[m - 1]) throw at.error(nw + "turns[" + m + "] = " + j + " is not before the previous one " + js[m - 1] + " (most recent first)");
                js[m] = j;
            }
            out[k] = js;
        }
        return out;
    }

    private static Utterance tiageTurn(JsonNode t, int i, String where, Located at) {
        String text = utterance(t, where, at);
        int shift = requiredInt(t, "shift", where, "expected -1, 0 or 1", at);
        boolean valid = i == 0 ? shift == -1 : shift == 0 || shift == 1;
        if (!valid) {
            throw at.error(where + "shift = " + shift + ": -1 marks the first turn and only it, then 0 or 1");
        }
        return new Utterance(null, text, null, null, shift);
    }

    private static Utterance multiwozTurn(JsonNode t, int i, String where, Located at) {
        String speaker = speaker(t, where, at);
        String text = utterance(t, where, at);
        JsonNode dom = t.get("domain");
        if (dom == null) throw at.error(where + "domain: missing (null for a turn on no domain)");
        if (!dom.isNull() && !(dom.isString() && !dom.stringValue().isBlank())) {
            throw at.error(where + "domain: expected a non-blank string or null");
        }
        return Utterance.of(speaker, text, dom.isNull() ? null : dom.stringValue());
    }

    private static JsonNode turns(JsonNode root, Located at) {
        JsonNode turns = root.get("turns");
        if (turns == null || !turns.isArray()) throw at.error("turns: expected an array");
        if (turns.isEmpty()) throw at.error("turns: a dialogue needs at least one turn");
        return turns;
    }

    private static JsonNode turnObject(JsonNode turns, int i, Located at) {
        JsonNode t = turns.get(i);
        if (!t.isObject()) throw at.error("turns[" + i + "]: expected an object");
        return t;
    }

    private static String speaker(JsonNode t, String where, Located at) {
        String s = requiredString(t, "speaker", where, at);
        if (!s.equals("USER") && !s.equals("SYSTEM")) throw at.error(where + "speaker = '" + s + "': expected USER or SYSTEM");
        return s;
    }

    private static String utterance(JsonNode t, String where, Located at) {
        String s = requiredString(t, "utterance", where, at);
        // A blank utterance has no tokens, and an entry must cost at least one budget unit.
        if (s.isBlank()) throw at.error(where + "utterance is blank");
        return s;
    }

    /** An integer that fits an int; otherwise the error {@code where + field + ": " + expected}. */
    private static int requiredInt(JsonNode node, String field, String where, String expected, Located at) {
        JsonNode v = node.get(field);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToInt()) throw at.error(where + field + ": " + expected);
        return v.intValue();
    }

    private static String requiredString(JsonNode node, String field, String where, Located at) {
        JsonNode v = node.get(field);
        if (v == null || !v.isString()) throw at.error(where + field + ": expected a string");
        return v.stringValue();
    }
}
