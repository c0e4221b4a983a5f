package io.fdkvc.engine.template;

import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Vocabulary;

import io.fdkvc.core.InputException;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A model's own chat template (GGUF {@code tokenizer.chat_template}, or a file), rendered as
 * Hugging Face's {@code apply_chat_template} renders it ({@link JinjaEnvironment}): the template
 * sees {@code messages} (maps with {@code role}, {@code content}, and where present
 * {@code reasoning_content}, {@code tool_calls}, {@code tool_call_id}), {@code add_generation_prompt},
 * {@code bos_token}, {@code eos_token} and the caller's variables ({@code tools}, {@code enable_thinking}, ...).
 *
 * <p>The incremental pieces come from full renderings, so that they agree with them: with probe
 * messages U1, R (a reply) and any user text u,
 * <ul>
 *   <li>{@code firstTurn(system, u)} = render([system, u], true);</li>
 *   <li>{@code nextTurn(u)} = what render([U1, R, u], true) has after R: the reply's closing, u's
 *       turn and the generation prompt;</li>
 *   <li>{@code assistantText(a)} = what render([U1, a, U2], true) has between render([U1], true)
 *       and nextTurn(U2);</li>
 *   <li>{@code endOfReply()} = what render([U1, R], false) has after R.</li>
 * </ul>
 * Some templates open a block in the generation prompt that earlier replies do not show (QwQ's
 * "&lt;think&gt;\n"): then {@code nextTurn} still closes the reply as the template does, but the
 * incremental context keeps the prompt and the reply as generated where a full rendering would
 * rewrite that reply; {@link #render} is the template's own text either way.
 */
public final class JinjaChatTemplate implements ChatTemplate {
    private static final String PROBE_USER = "FDKVC_PROBE_USER_7F3A";
    private static final String PROBE_USER_2 = "FDKVC_PROBE_NEXT_7F3A";
    private static final String PROBE_REPLY = "FDKVC_PROBE_REPLY_7F3A";

    private final JinjaRenderer renderer;
    private final String generationStart;  // render([U1], true)
    private final String replyPrefix;      // text before a reply's content after the generation prompt
    private final String endOfReply;

    private JinjaChatTemplate(String source, String bosToken, String eosToken, Clock clock) {
        this.renderer = JinjaRenderer.of(source, bosToken, eosToken, clock);
        generationStart = render(List.of(Message.user(PROBE_USER)), true);
        String withReply = render(List.of(Message.user(PROBE_USER), Message.assistant(PROBE_REPLY),
                Message.user(PROBE_USER_2)), true);
        int at = withReply.indexOf(PROBE_REPLY);
        if (at < 0) {
            throw new InputException("the template drops an assistant reply followed by a user message"
                    + " (rendering [user, assistant, user] does not contain the reply)");
        }
        // null: the generation prompt is not how a reply starts once another turn follows (templates
        // that open a think block in the prompt and strip it from earlier replies)
        replyPrefix = withReply.startsWith(generationStart) && at >= generationStart.length()
                ? withReply.substring(generationStart.length(), at) : null;
        String closed = render(List.of(Message.user(PROBE_USER), Message.assistant(PROBE_REPLY)), false);
        int end = closed.indexOf(PROBE_REPLY);
        endOfReply = end < 0 ? "" : closed.substring(end + PROBE_REPLY.length());
    }

    /**
     * A template rendered with {@code vocabulary}'s BOS and EOS strings; checked by rendering a
     * probe conversation.
     *
     * @throws InputException when the template cannot be parsed or rendered
     */
    public static JinjaChatTemplate of(String source, Vocabulary vocabulary) {
        String bos = vocabulary != null && vocabulary.bos() >= 0 ? vocabulary.tokens()[vocabulary.bos()] : "";
        String eos = vocabulary != null && vocabulary.eos() >= 0 ? vocabulary.tokens()[vocabulary.eos()] : "";
        return of(source, bos, eos);
    }

    /** A template with the given {@code bos_token} and {@code eos_token} strings, on the system clock. */
    public static JinjaChatTemplate of(String source, String bosToken, String eosToken) {
        return of(source, bosToken, eosToken, Clock.systemDefaultZone());
    }

    /**
     * A template whose {@code strftime_now} reads {@code clock} (its zone is the "local time"
     * Python's {@code datetime.now()} would give): a fixed clock makes renderings reproducible.
     */
    public static JinjaChatTemplate of(String source, String bosToken, String eosToken, Clock clock) {
        return new JinjaChatTemplate(source, bosToken, eosToken, clock);
    }

    /** The template text as given. */
    public String source() {
        return renderer.source();
    }

    @Override
    public String id() {
        return "jinja";
    }

    @Override
    public String render(List<Message> messages, boolean addGenerationPrompt, Map<String, Object> variables) {
        List<Map<String, Object>> list = new ArrayList<>(messages.size());
        for (Message m : messages) {
            list.add(messageMap(m));
        }
        return renderer.render(list, addGenerationPrompt, variables);
    }

    /** A message as HF templates see it: keys present only when set, so {@code is defined} means set. */
    static Map<String, Object> messageMap(Message m) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("role", m.role().id());
        map.put("content", m.content());
        if (m.reasoningContent() != null) {
            map.put("reasoning_content", m.reasoningContent());
        }
        if (!m.toolCalls().isEmpty()) {
            List<Map<String, Object>> calls = new ArrayList<>();
            for (ToolCall c : m.toolCalls()) {
                Map<String, Object> call = new LinkedHashMap<>();
                if (c.id() != null) {
                    call.put("id", c.id());
                }
                call.put("type", "function");
                Map<String, Object> function = new LinkedHashMap<>();
                function.put("name", c.name());
                function.put("arguments", c.arguments());
                call.put("function", function);
                calls.add(call);
            }
            map.put("tool_calls", calls);
        }
        if (m.toolCallId() != null) {
            map.put("tool_call_id", m.toolCallId());
        }
        return map;
    }

    @Override
    public String firstTurn(String system, String user) {
        Objects.requireNonNull(user, "user");
        List<Message> messages = new ArrayList<>();
        if (system != null) {
            messages.add(Message.system(system));
        }
        messages.add(Message.user(user));
        return render(messages, true);
    }

    @Override
    public String nextTurn(String user) {
        Objects.requireNonNull(user, "user");
        String full = render(List.of(Message.user(PROBE_USER), Message.assistant(PROBE_REPLY), Message.user(user)), true);
        int at = full.indexOf(PROBE_REPLY);
        if (at < 0) {
            throw new InputException("the chat template drops the previous reply once this user message follows,"
                    + " so the turn cannot be appended incrementally");
        }
        return full.substring(at + PROBE_REPLY.length());
    }

    /**
     * As the text of the full rendering has it; for a template whose generation prompt is not how
     * an earlier reply starts (see the class comment), the content as the model writes it after
     * the prompt.
     */
    @Override
    public String assistantText(String content) {
        if (replyPrefix == null) {
            return content;
        }
        String next = nextTurn(PROBE_USER_2);
        String full = render(List.of(Message.user(PROBE_USER), Message.assistant(content), Message.user(PROBE_USER_2)), true);
        if (full.startsWith(generationStart) && full.endsWith(next)
                && full.length() >= generationStart.length() + next.length()) {
            return full.substring(generationStart.length(), full.length() - next.length());
        }
        return replyPrefix + content;
    }

    @Override
    public String endOfReply() {
        return endOfReply;
    }

    @Override
    public boolean addBos() {
        return false;
    }

    /** The reply's end marker without surrounding whitespace ("&lt;|im_end|&gt;", "&lt;|eot_id|&gt;"), when there is one. */
    @Override
    public List<String> stopStrings() {
        String marker = endOfReply.strip();
        return marker.isEmpty() ? List.of() : List.of(marker);
    }

    /** EOS, and the reply's end marker when it begins with a control token of the vocabulary. */
    @Override
    public int[] stopTokens(Tokenizer tokenizer) {
        Set<Integer> ids = new LinkedHashSet<>();
        if (tokenizer.eos() >= 0) {
            ids.add(tokenizer.eos());
        }
        String marker = endOfReply.strip();
        if (!marker.isEmpty()) {
            int[] t = tokenizer.encodeWithSpecials(marker, false);
            if (t.length > 0 && tokenizer.isControl(t[0])) {
                ids.add(t[0]);
            }
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    @Override
    public String toString() {
        return "jinja chat template (" + renderer.source().length() + " chars)";
    }
}
