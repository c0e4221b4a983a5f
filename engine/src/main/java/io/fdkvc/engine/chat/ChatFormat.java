package io.fdkvc.engine.chat;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.template.ChatTemplate.Role;
import io.fdkvc.engine.tokenizer.TokenDecoder;
import io.fdkvc.engine.tokenizer.Tokenizer;
import java.util.List;

/**
 * How a list of chat messages becomes token ids for one model: the only place the engine's chat
 * code touches {@link ChatTemplate}, so that a whole-list renderer can replace the incremental one
 * here without touching {@link Conversation}.
 *
 * <p>Tokens are produced segment by segment exactly as {@code fdkvc chat} feeds them: the first
 * turn ({@code [BOS] + firstTurn(system, user)}), then per later message either an assistant text
 * ({@code assistantText}) or a user turn ({@code nextTurn}, which closes the previous reply). A
 * conversation continued one request at a time therefore holds the same tokens as one typed into
 * {@code fdkvc chat}, and its greedy replies are the same.
 *
 * <p>Accepted shape (what the incremental templates can write): an optional system message first,
 * then user and assistant messages alternating, starting and ending with a user message.
 */
public final class ChatFormat {
    private final ChatTemplate template;
    private final Tokenizer tokenizer;
    private final int[] stopTokens;

    public ChatFormat(ChatTemplate template, Tokenizer tokenizer) {
        this.template = template;
        this.tokenizer = tokenizer;
        this.stopTokens = template.stopTokens(tokenizer);
    }

    public ChatTemplate template() { return template; }
    public Tokenizer tokenizer() { return tokenizer; }

    /** Ids that end a reply without being fed (EOS, the format's end markers). */
    public int[] stopTokens() { return stopTokens.clone(); }

    boolean isStopToken(int id) {
        for (int s : stopTokens) if (s == id) return true;
        return false;
    }

    /** Texts that end a reply when they appear in its decoded text. */
    public List<String> stopStrings() { return template.stopStrings(); }

    /** A streaming decoder for a reply (continuing after a prompt). */
    public TokenDecoder replyDecoder() { return tokenizer.decoder(false); }

    /**
     * Checks the shape of a request's messages (see the class comment).
     *
     * @throws InputException naming the first offending message
     */
    public void validate(List<Message> messages) {
        if (messages == null || messages.isEmpty()) throw new InputException("messages: must be a non-empty list");
        int i = 0;
        if (messages.get(0).role() == Role.SYSTEM) i = 1;
        if (i == messages.size()) throw new InputException("messages: a system message must be followed by a user message");
        for (int k = i; k < messages.size(); k++) {
            Role expected = (k - i) % 2 == 0 ? Role.USER : Role.ASSISTANT;
            Role got = messages.get(k).role();
            if (got != expected) {
                throw new InputException("messages[" + k + "].role: expected " + name(expected) + ", got " + name(got)
                        + " (an optional system message first, then user and assistant alternating, ending with user)");
            }
        }
        if (messages.getLast().role() != Role.USER) {
            throw new InputException("messages: the last message must be from the user");
        }
    }

    private static String name(Role r) {
        return r.name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * The tokens that extend a transcript holding {@code messages[0, from)} (fed, and its last
     * reply's stop token not fed) by {@code messages[from, size)}, ending with the generation
     * prompt. {@code from} is 0 for a new conversation, else the index of a user message.
     */
    public int[] extension(List<Message> messages, int from) {
        IntList out = new IntList(64);
        int k = from;
        if (from == 0) {
            String system = null;
            if (messages.get(0).role() == Role.SYSTEM) {
                system = messages.get(0).content();
                k = 1;
            }
            if (template.addBos() && tokenizer.bos() >= 0) out.add(tokenizer.bos());
            out.addAll(tokenizer.encodeWithSpecials(template.firstTurn(system, messages.get(k).content()), true));
            k++;
        }
        for (; k < messages.size(); k++) {
            Message m = messages.get(k);
            String text = switch (m.role()) {
                case USER -> template.nextTurn(m.content());
                case ASSISTANT -> template.assistantText(m.content());
                case SYSTEM -> throw new InputException("messages[" + k + "].role: a system message is only allowed first");
                case TOOL -> throw new InputException("messages[" + k + "].role: tool messages are not supported here");
            };
            out.addAll(tokenizer.encodeWithSpecials(text, false));
        }
        return out.toArray();
    }
}
