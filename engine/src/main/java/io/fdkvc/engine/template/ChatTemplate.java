package io.fdkvc.engine.template;

import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Vocabulary;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * How a chat model expects a conversation written out: the model's own Jinja template
 * ({@link JinjaChatTemplate}, from {@code tokenizer.chat_template}) or one of four built-in
 * formats ({@link BuiltinTemplate}, the fallback).
 *
 * <p>Whole conversations (what a server does on every request): {@link #render(List, boolean)}.
 *
 * <p>Incremental use (what a chat loop does; the context is never re-encoded):
 * <pre>{@code
 * context = [bos if template.addBos()] + encodeWithSpecials(template.firstTurn(system, user1))
 * generate the reply until a stopTokens() id (not put into the context) or a stopStrings() text
 * context += encodeWithSpecials(template.nextTurn(user2), false)
 * ...
 * }</pre>
 * {@code nextTurn} begins by closing the previous reply (its end marker, e.g. "&lt;|im_end|&gt;\n"),
 * because the stop token the model sampled is not fed back.
 *
 * <p>Invariant (tested for every built-in format and for the Jinja templates in the tests):
 * {@code render([system, u1, a1, u2, a2, u3], true)} equals
 * {@code firstTurn(system, u1) + assistantText(a1) + nextTurn(u2) + assistantText(a2) + nextTurn(u3)},
 * so the incremental context holds exactly the text of the full conversation. (A template that
 * rewrites earlier turns, as Qwen3's drops the reasoning of replies before the last user message,
 * keeps the invariant for replies without reasoning only.)
 */
public sealed interface ChatTemplate permits BuiltinTemplate, JinjaChatTemplate {
    ChatTemplate CHATML = BuiltinTemplate.CHATML;
    ChatTemplate LLAMA3 = BuiltinTemplate.LLAMA3;
    ChatTemplate LLAMA2 = BuiltinTemplate.LLAMA2;
    ChatTemplate PLAIN = BuiltinTemplate.PLAIN;

    /** Who speaks: the role names Hugging Face templates see ({@link #id()}). */
    enum Role {
        SYSTEM, USER, ASSISTANT, TOOL;

        /** "system", "user", "assistant", "tool". */
        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        /**
         * The role named {@code name} (any case).
         *
         * @throws InputException for another name
         */
        public static Role of(String name) {
            for (Role r : values()) {
                if (r.id().equalsIgnoreCase(name == null ? "" : name.strip())) {
                    return r;
                }
            }
            throw new InputException("unknown message role '" + name + "'; known: system, user, assistant, tool");
        }
    }

    /**
     * A call of a tool by the assistant, as templates see it
     * ({@code {"id", "type": "function", "function": {"name", "arguments"}}}).
     *
     * @param id        the call's id, or null
     * @param name      the function's name
     * @param arguments a JSON text (templates print it as is) or a {@code Map} of the arguments
     *                  (templates print it with {@code tojson}, as Hugging Face passes parsed arguments)
     */
    record ToolCall(String id, String name, Object arguments) {
        public ToolCall {
            if (name == null || name.isBlank()) {
                throw new InputException("a tool call needs a function name");
            }
            if (arguments == null) {
                arguments = Map.of();
            }
            if (!(arguments instanceof String) && !(arguments instanceof Map<?, ?>)) {
                throw new InputException("tool call '" + name + "': arguments must be a JSON text or a map, got "
                        + arguments.getClass().getSimpleName());
            }
        }
    }

    /**
     * One message of a conversation.
     *
     * @param role             who speaks
     * @param content          the text ("" for an assistant turn that only calls tools)
     * @param reasoningContent an assistant's reasoning ("thinking"), or null; templates that know it
     *                         (Qwen3) put it between &lt;think&gt; tags
     * @param toolCalls        the assistant's tool calls (empty: none)
     * @param toolCallId       for a tool result: the id of the call it answers, or null
     */
    record Message(Role role, String content, String reasoningContent, List<ToolCall> toolCalls, String toolCallId) {
        public Message {
            Objects.requireNonNull(role, "role");
            Objects.requireNonNull(content, "content");
            toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
            if (!toolCalls.isEmpty() && role != Role.ASSISTANT) {
                throw new InputException("only assistant messages carry tool calls, not " + role.id() + " messages");
            }
        }

        public Message(Role role, String content) {
            this(role, content, null, List.of(), null);
        }

        public static Message system(String content) {
            return new Message(Role.SYSTEM, content);
        }

        public static Message user(String content) {
            return new Message(Role.USER, content);
        }

        public static Message assistant(String content) {
            return new Message(Role.ASSISTANT, content);
        }

        /** An assistant reply with its reasoning (null: none) and tool calls. */
        public static Message assistant(String content, String reasoningContent, List<ToolCall> toolCalls) {
            return new Message(Role.ASSISTANT, content, reasoningContent, toolCalls, null);
        }

        /** A tool's result; {@code toolCallId} may be null. */
        public static Message tool(String content, String toolCallId) {
            return new Message(Role.TOOL, content, null, List.of(), toolCallId);
        }
    }

    /** "chatml", "llama3", "llama2", "plain", or "jinja" for a model's own template. */
    String id();

    /** {@link #render(List, boolean, Map)} without extra variables. */
    default String render(List<Message> messages, boolean addGenerationPrompt) {
        return render(messages, addGenerationPrompt, Map.of());
    }

    /**
     * The whole conversation as text; with {@code addGenerationPrompt} it ends where the
     * assistant's next reply begins. {@code variables} go to a Jinja template as they are
     * (Hugging Face's {@code apply_chat_template(..., **kwargs)}: {@code tools} as a list of maps,
     * {@code enable_thinking}, ...); the built-in formats ignore them.
     *
     * @throws InputException when the template refuses the conversation ({@code raise_exception})
     *                        or fails on it
     */
    String render(List<Message> messages, boolean addGenerationPrompt, Map<String, Object> variables);

    /** The opening of a conversation: system prompt (or null), the first user message, the generation prompt. */
    String firstTurn(String system, String user);

    /**
     * A later turn, appended to a context that ends with the previous reply (its stop token not
     * fed): closes that reply, then the user message and the generation prompt.
     */
    String nextTurn(String user);

    /** How an assistant reply reads right after the generation prompt (Llama 2 and Plain: with a leading space). */
    String assistantText(String content);

    /** The text that closes an assistant reply (its end marker and separator). */
    String endOfReply();

    /**
     * Whether the conversation starts with the tokenizer's BOS token, which is not part of the
     * rendered text. False for Jinja templates: they write {@code bos_token} themselves where the
     * model wants it.
     */
    boolean addBos();

    /** Texts that end a reply when they appear in the decoded output (for vocabularies without the marker tokens). */
    List<String> stopStrings();

    /** Ids that end a reply: the vocabulary's EOS and this format's end markers that are single tokens. */
    int[] stopTokens(Tokenizer tokenizer);

    /** See {@link BuiltinTemplate#detect}. */
    static BuiltinTemplate detect(String jinjaTemplateOrNull, Vocabulary vocabulary) {
        return BuiltinTemplate.detect(jinjaTemplateOrNull, vocabulary);
    }

    /** A built-in format by name: chatml, llama3, llama2 or plain (see {@link BuiltinTemplate#byName}). */
    static ChatTemplate byName(String name) {
        return BuiltinTemplate.byName(name);
    }

    /**
     * The template a model asks for: its own Jinja template when it has one that renders a probe
     * conversation; otherwise (no template, or one this engine cannot render: {@code warnings}
     * gets one line saying why) the built-in format {@link #detect} picks.
     */
    static ChatTemplate forModel(Vocabulary vocabulary, Consumer<String> warnings) {
        String jinja = vocabulary.chatTemplate();
        if (jinja != null && !jinja.isBlank()) {
            try {
                return JinjaChatTemplate.of(jinja, vocabulary);
            } catch (InputException e) {
                BuiltinTemplate fallback = detect(jinja, vocabulary);
                warnings.accept("warning: the model's chat template (tokenizer.chat_template) cannot be used ("
                        + e.getMessage() + "); using the built-in " + fallback.id() + " format");
                return fallback;
            }
        }
        return detect(null, vocabulary);
    }

    /**
     * What {@code --template} names: null for the model's own ({@link #forModel}); chatml,
     * llama3, llama2 or plain for a built-in format; {@code jinja:FILE} for a Jinja template read
     * from a file (rendered with the model's BOS and EOS strings).
     *
     * @throws InputException for an unknown name or an unreadable or unusable template file
     */
    static ChatTemplate select(String option, Vocabulary vocabulary, Consumer<String> warnings) {
        if (option == null) {
            return forModel(vocabulary, warnings);
        }
        if (option.startsWith("jinja:")) {
            Path file = Path.of(option.substring("jinja:".length()));
            String source;
            try {
                source = Files.readString(file, StandardCharsets.UTF_8);
            } catch (IOException | RuntimeException e) {
                throw new ParameterException("template", option + ": cannot read " + file + ": " + e.getMessage());
            }
            try {
                return JinjaChatTemplate.of(source, vocabulary);
            } catch (InputException e) {
                throw new ParameterException("template", option + ": " + e.getMessage());
            }
        }
        return byName(option);
    }
}
