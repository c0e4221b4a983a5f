package io.fdkvc.eval.fidelity;

import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.template.ChatTemplate.Role;
import io.fdkvc.engine.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.List;

/**
 * A conversation as the model is fed it: its tokens, where each dialogue turn ends (the policy
 * runs there), and its probes as absolute token spans.
 *
 * @param id       the conversation's id
 * @param tokens   every token, in order
 * @param turnEnds the end (exclusive) of each dialogue turn in {@code tokens}, increasing, the last = tokens.length
 * @param probes   probe spans {@code [start, end)} in {@code tokens}, each with {@code start >= 1}
 *                 (the prediction of token p is made at position p - 1)
 */
public record TokenizedConversation(String id, int[] tokens, int[] turnEnds, List<Span> probes) {
    /** A probe: tokens {@code [start, end)} of the conversation. */
    public record Span(int start, int end, String label) {}

    public TokenizedConversation {
        probes = List.copyOf(probes);
        if (turnEnds.length == 0 || turnEnds[turnEnds.length - 1] != tokens.length) {
            throw new IllegalArgumentException("turn ends must close the conversation");
        }
        for (int i = 0; i < turnEnds.length; i++) {
            if (turnEnds[i] <= (i == 0 ? 0 : turnEnds[i - 1])) throw new IllegalArgumentException("an empty turn");
        }
    }

    public int turns() { return turnEnds.length; }

    /** Start of dialogue turn {@code t} in {@link #tokens}. */
    public int turnStart(int t) { return t == 0 ? 0 : turnEnds[t - 1]; }

    /** The longest dialogue turn, in tokens. */
    public int longestTurn() {
        int m = 0;
        for (int t = 0; t < turns(); t++) m = Math.max(m, turnEnds[t] - turnStart(t));
        return m;
    }

    /**
     * Tokenises {@code c} for a model: id turns as they are, text turns with {@code tokenizer}
     * (BOS first when the model adds one), chat messages through {@code format} exactly as
     * {@code chat} and {@code serve} render them (a dialogue turn is a user message with the reply
     * after it; a system message belongs to the first turn).
     *
     * @param where  names the conversation in errors ("FILE: conversation 'c-00'")
     * @param format the chat format, needed only for chat messages
     * @throws InputException naming the conversation and the field
     */
    public static TokenizedConversation of(ConversationScript c, Tokenizer tokenizer, ChatFormat format, int vocab, String where) {
        int n = c.turns().size();
        int[][] segments = new int[n][];
        boolean[] endsTurn = new boolean[n];
        if (c.turns().getFirst() instanceof ConversationScript.Message) {
            messages(c, format, segments, endsTurn, where);
        } else {
            for (int i = 0; i < n; i++) {
                endsTurn[i] = true;
                segments[i] = switch (c.turns().get(i)) {
                    case ConversationScript.Ids ids -> ids.ids().clone();
                    case ConversationScript.Text text -> text(tokenizer, text.text(), i == 0);
                    case ConversationScript.Message m -> throw new IllegalStateException("mixed turns");
                };
                if (segments[i].length == 0) throw new InputException(where + ": turns[" + i + "].text: encodes to no token");
            }
        }
        long total = 0;
        int[] starts = new int[n];
        List<Integer> ends = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            starts[i] = (int) Math.min(total, Integer.MAX_VALUE);
            total += segments[i].length;
            if (total > Limits.MAX_TURN_TOKENS) {
                throw new InputException(where + ": longer than " + Limits.MAX_TURN_TOKENS + " tokens (docs/limits.md)");
            }
            if (endsTurn[i]) ends.add((int) total);
        }
        int[] tokens = new int[(int) total];
        for (int i = 0; i < n; i++) {
            int[] s = segments[i];
            for (int k = 0; k < s.length; k++) {
                if (s[k] >= vocab) {
                    throw new InputException(where + ": turns[" + i + "].ids[" + k + "]: token " + s[k] + " is outside the model's vocabulary of " + vocab);
                }
            }
            System.arraycopy(s, 0, tokens, starts[i], s.length);
        }
        if (ends.size() < 2) throw new InputException(where + ": turns: at least two dialogue turns are needed (the first is never measured)");
        List<Span> spans = new ArrayList<>();
        for (int k = 0; k < c.probes().size(); k++) {
            ConversationScript.Probe p = c.probes().get(k);
            int len = segments[p.turn()].length;
            if (p.end() > len) {
                throw new InputException(where + ": probes[" + k + "].end: " + p.end() + " is past the " + len + " tokens of turn " + p.turn());
            }
            int start = starts[p.turn()] + p.start();
            if (start == 0) throw new InputException(where + ": probes[" + k + "].start: the first token of a conversation is never predicted");
            spans.add(new Span(start, starts[p.turn()] + p.end(), p.label()));
        }
        return new TokenizedConversation(c.id(), tokens, ends.stream().mapToInt(Integer::intValue).toArray(), spans);
    }

    private static int[] text(Tokenizer tokenizer, String text, boolean first) {
        int[] t = tokenizer.encodeWithSpecials(text, first);
        if (!first || !tokenizer.addBos() || tokenizer.bos() < 0) return t;
        int[] out = new int[t.length + 1];
        out[0] = tokenizer.bos();
        System.arraycopy(t, 0, out, 1, t.length);
        return out;
    }

    /**
     * Each message's tokens as {@link ChatFormat#extension} renders it after the messages before
     * it; a dialogue turn ends after each assistant message, and after the last message.
     */
    private static void messages(ConversationScript c, ChatFormat format, int[][] segments, boolean[] endsTurn, String where) {
        if (format == null) throw new IllegalArgumentException("chat messages need a chat format");
        List<Message> ms = new ArrayList<>();
        for (ConversationScript.Turn t : c.turns()) ms.add(((ConversationScript.Message) t).message());
        int first = ms.getFirst().role() == Role.SYSTEM ? 1 : 0;
        for (int k = first; k < ms.size(); k++) {
            Role want = (k - first) % 2 == 0 ? Role.USER : Role.ASSISTANT;
            if (ms.get(k).role() != want) {
                throw new InputException(where + ": turns[" + k + "].role: expected " + want.id() + ", got " + ms.get(k).role().id()
                        + " (an optional system message first, then user and assistant alternating)");
            }
        }
        if (first == ms.size()) throw new InputException(where + ": turns: a system message must be followed by a user message");
        segments[0] = new int[0];
        for (int k = first; k < ms.size(); k++) {
            segments[k] = k == first ? format.extension(ms.subList(0, k + 1), 0) : format.extension(ms.subList(0, k + 1), k);
            endsTurn[k] = ms.get(k).role() == Role.ASSISTANT || k == ms.size() - 1;
        }
    }
}
