package io.fdkvc.eval.dialogue;

import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.core.Untrusted;
import io.fdkvc.core.param.ParameterException;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
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
 * Reads the JSON Lines corpora (gzipped or plain) described in {@code shared/data/dialogues/README.md}, one
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
        if (!Files.isRegularFile(file)) throw new ParameterException("data", "no such file: " + file);
        List<Dialogue> out = new ArrayList<>();
        Map<String, Integer> lineOfId = new HashMap<>();
        try (InputStream raw = Files.newInputStream(file);
             LineReader in = new LineReader(open(file, new BufferedInputStream(raw, 1 << 16)), file)) {
            String line;
            while ((line = in.next()) != null) {
                int lineNo = in.lineNumber();
                if (line.isBlank()) continue; // a trailing newline or an empty line carries no record
                Located at = new Located(file, lineNo);
                JsonNode root;
                try {
                    root = JSON.readTree(line);
                } catch (JacksonException e) {
                    throw at.error("malformed JSON: " + Untrusted.excerpt(e.getOriginalMessage()));
                }
                if (root == null || !root.isObject()) throw at.error("expected a JSON object (one dialogue per line)");
                Dialogue d = switch (dataset) {
                    case SGD -> dialogue(root, at, DialogueReader::sgdTurn);
                    case TIAGE -> dialogue(root, at, DialogueReader::tiageTurn);
                    case MULTIWOZ -> dialogue(root, at, DialogueReader::multiwozTurn);
                };
                Integer first = lineOfId.putIfAbsent(d.id(), lineNo);
                if (first != null) throw at.error("dialogue_id '" + Untrusted.excerpt(d.id()) + "' repeats the one on line " + first);
                out.add(d);
            }
        } catch (ZipException e) {
            throw new InputException(file + ": not a valid gzip file (" + e.getMessage() + ")", e);
        } catch (java.io.EOFException e) {
            throw new InputException(file + ": the gzip data ends early (truncated file?)", e);
        } catch (IOException e) {
            throw new InputException(file + ": cannot read: " + e.getMessage(), e);
        }
        if (out.isEmpty()) throw new InputException(file + ": holds no dialogue (expected JSON Lines, one dialogue per line, optionally gzipped)");
        return out;
    }

    /** The file's bytes: gunzipped when it starts with the gzip magic, as they are otherwise (plain .jsonl). */
    private static InputStream open(Path file, BufferedInputStream in) throws IOException {
        in.mark(2);
        int b0 = in.read(), b1 = in.read();
        in.reset();
        if (b0 < 0) throw new InputException(file + ": empty file (expected JSON Lines, one dialogue per line, optionally gzipped)");
        return b0 == 0x1f && b1 == 0x8b ? new GZIPInputStream(in, 1 << 16) : in;
    }

    /**
     * Lines of UTF-8 text with the limits of docs/limits.md: at most {@link Limits#MAX_LINE_BYTES}
     * per line and {@link Limits#MAX_CORPUS_BYTES} in all, so a gzip bomb is refused with an error
     * instead of filling the memory.
     */
    private static final class LineReader implements AutoCloseable {
        private final InputStream in;
        private final Path file;
        private final byte[] buf = new byte[1 << 16];
        private int pos, end;
        private long total;
        private int lineNumber;
        private byte[] line = new byte[256];

        LineReader(InputStream in, Path file) {
            this.in = in;
            this.file = file;
        }

        int lineNumber() {
            return lineNumber;
        }

        /** The next line without its terminator, or null at the end. */
        String next() throws IOException {
            int len = 0;
            boolean any = false;
            while (true) {
                if (pos == end) {
                    end = in.read(buf, 0, buf.length);
                    pos = 0;
                    if (end <= 0) {
                        end = 0;
                        if (!any) return null;
                        break;
                    }
                    total += end;
                    if (total > Limits.MAX_CORPUS_BYTES) {
                        throw new InputException(file + ": decompresses to more than " + Limits.MAX_CORPUS_BYTES
                                + " bytes, the limit of a corpus (docs/limits.md)");
                    }
                }
                any = true;
                byte b = buf[pos++];
                if (b == '\n') break;
                if (len == line.length) {
                    if (len >= Limits.MAX_LINE_BYTES) {
                        throw new InputException(file + ":" + (lineNumber + 1) + ": a line of more than " + Limits.MAX_LINE_BYTES
                                + " bytes, the limit of one dialogue (docs/limits.md)");
                    }
                    line = java.util.Arrays.copyOf(line, (int) Math.min((long) len * 2, Limits.MAX_LINE_BYTES));
                }
                line[len++] = b;
            }
            lineNumber++;
            if (len > 0 && line[len - 1] == '\r') len--;
            try {
                return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(line, 0, len)).toString();
            } catch (CharacterCodingException e) {
                throw new InputException(file + ":" + lineNumber + ": not UTF-8 text");
            }
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
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

    /**
     * The dialogue id and turns common to every corpus, each turn read by {@code turn}.
     *
     * <p>Blank utterances (empty or whitespace only, e.g. two final system goodbyes of the SGD test
     * split) are real data and are accepted, and skipped: a turn that says nothing is no cache entry
     * (it has no tokens to cost and no meaning to embed). The turns after it are renumbered, a
     * reference to it is dropped (there is nothing to recall), and a TIAGE shift label it carried
     * moves to the next turn that is kept. A dialogue whose every utterance is blank is refused.
     */
    private static Dialogue dialogue(JsonNode root, Located at, TurnReader turn) {
        String id = requiredString(root, "dialogue_id", "", at);
        JsonNode turns = turns(root, at);
        List<Utterance> read = new ArrayList<>(turns.size());
        for (int i = 0; i < turns.size(); i++) {
            JsonNode t = turnObject(turns, i, at);
            read.add(turn.read(t, i, "turns[" + i + "].", at));
        }
        int[] index = new int[read.size()];
        int kept = 0;
        for (int i = 0; i < read.size(); i++) index[i] = read.get(i).text().isBlank() ? -1 : kept++;
        if (kept == read.size()) return new Dialogue(id, read);
        if (kept == 0) throw at.error("turns: every utterance is blank");
        List<Utterance> out = new ArrayList<>(kept);
        boolean shiftCarried = false; // a skipped turn was labelled as a topic shift (TIAGE)
        for (int i = 0; i < read.size(); i++) {
            Utterance u = read.get(i);
            if (index[i] < 0) {
                shiftCarried |= u.shift() == 1;
                continue;
            }
            int[] refs = new int[u.refCount()];
            int n = 0;
            for (int k = 0; k < u.refCount(); k++) if (index[u.ref(k)] >= 0) refs[n++] = index[u.ref(k)];
            int shift = u.shift();
            if (read.getFirst().shift() == -1) { // TIAGE: -1 marks the first kept turn, a carried shift the next
                shift = out.isEmpty() ? -1 : shiftCarried ? 1 : shift;
            }
            shiftCarried = false;
            out.add(new Utterance(u.speaker(), u.text(), u.topic(), java.util.Arrays.copyOf(refs, n), shift));
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
        // may be blank: see dialogue(), which skips such turns
        return requiredString(t, "utterance", where, at);
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
