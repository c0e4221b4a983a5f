package io.fdkvc.engine.template;

import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Vocabulary;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The four chat formats this engine writes by hand: the fallback when a model carries no Jinja
 * template ({@code tokenizer.chat_template}) or one that cannot be rendered, and what
 * {@code --template NAME} picks.
 *
 * <p>Simplifications against the models' own Jinja templates: no default system prompt (Qwen's
 * adds one), no tool calls (tool results are written as a "tool" turn where the format has
 * roles), and {@link #LLAMA2} also serves Mistral-style "[INST]" templates.
 */
public enum BuiltinTemplate implements ChatTemplate {
    /** {@code <|im_start|>role\ncontent<|im_end|>\n}; the reply follows {@code <|im_start|>assistant\n}. */
    CHATML("chatml") {
        @Override
        String system(String content) {
            return block("system", content);
        }

        @Override
        String user(String content, String system, boolean first) {
            return block("user", content);
        }

        @Override
        String tool(String content) {
            return block("tool", content);
        }

        private static String block(String role, String content) {
            return "<|im_start|>" + role + "\n" + content + "<|im_end|>\n";
        }

        @Override
        String generationPrompt() {
            return "<|im_start|>assistant\n";
        }

        @Override
        public String assistantText(String content) {
            return content;
        }

        @Override
        public String endOfReply() {
            return "<|im_end|>\n";
        }

        @Override
        public boolean addBos() {
            return false;
        }

        @Override
        public List<String> stopStrings() {
            return List.of("<|im_end|>", "<|im_start|>");
        }

        @Override
        List<String> stopTokenStrings() {
            return List.of("<|im_end|>", "<|endoftext|>");
        }
    },

    /**
     * Llama 3: after BOS "&lt;|begin_of_text|&gt;", each message is
     * {@code <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>}, contents trimmed as
     * Meta's template does.
     */
    LLAMA3("llama3") {
        @Override
        String system(String content) {
            return header("system") + content.strip() + "<|eot_id|>";
        }

        @Override
        String user(String content, String system, boolean first) {
            return header("user") + content.strip() + "<|eot_id|>";
        }

        @Override
        String tool(String content) {
            return header("ipython") + content.strip() + "<|eot_id|>";
        }

        private static String header(String role) {
            return "<|start_header_id|>" + role + "<|end_header_id|>\n\n";
        }

        @Override
        String generationPrompt() {
            return header("assistant");
        }

        @Override
        public String assistantText(String content) {
            return content.strip();
        }

        @Override
        public String endOfReply() {
            return "<|eot_id|>";
        }

        @Override
        public boolean addBos() {
            return true;
        }

        @Override
        public List<String> stopStrings() {
            return List.of("<|eot_id|>", "<|start_header_id|>");
        }

        @Override
        List<String> stopTokenStrings() {
            return List.of("<|eot_id|>", "<|end_of_text|>", "<|eom_id|>");
        }
    },

    /**
     * Llama 2: {@code [INST] user [/INST] reply </s><s>[INST] user [/INST]}, the system prompt inside
     * the first instruction as {@code <<SYS>>\n...\n<</SYS>>\n\n}; contents trimmed. The first BOS
     * comes from the caller, later ones are in the text ("&lt;s&gt;" is a control token).
     */
    LLAMA2("llama2") {
        @Override
        String system(String content) {
            return null; // folded into the next user message
        }

        @Override
        String user(String content, String system, boolean first) {
            String sys = system == null ? "" : "<<SYS>>\n" + system.strip() + "\n<</SYS>>\n\n";
            return (first ? "" : "<s>") + "[INST] " + sys + content.strip() + " [/INST]";
        }

        @Override
        String generationPrompt() {
            return "";
        }

        @Override
        public String assistantText(String content) {
            return " " + content.strip();
        }

        @Override
        public String endOfReply() {
            return " </s>";
        }

        @Override
        public boolean addBos() {
            return true;
        }

        @Override
        public List<String> stopStrings() {
            return List.of("[INST]");
        }

        @Override
        List<String> stopTokenStrings() {
            return List.of("</s>");
        }
    },

    /**
     * For models without a chat template (base models, stories260K): {@code User: ...\nAssistant:}.
     * The prompt ends with "Assistant:" and no space: SentencePiece and GPT-2 vocabularies carry a
     * word's space in the word's own token ("▁Hello", "ĠHello"), so a trailing space would have to
     * be a lone space token the model rarely saw there; {@link #assistantText} writes the reply
     * with the space. Besides EOS, BOS stops a reply (a base model starts a new document with it,
     * which is where run.c stops too).
     */
    PLAIN("plain") {
        @Override
        String system(String content) {
            return content.strip() + "\n\n";
        }

        @Override
        String user(String content, String system, boolean first) {
            return "User: " + content.strip() + "\n";
        }

        @Override
        String tool(String content) {
            return "Tool: " + content.strip() + "\n";
        }

        @Override
        String generationPrompt() {
            return "Assistant:";
        }

        @Override
        public String assistantText(String content) {
            return " " + content.strip();
        }

        @Override
        public String endOfReply() {
            return "\n";
        }

        @Override
        public boolean addBos() {
            return true;
        }

        @Override
        public List<String> stopStrings() {
            return List.of("\nUser:");
        }

        @Override
        List<String> stopTokenStrings() {
            return List.of();
        }

        @Override
        public int[] stopTokens(Tokenizer tokenizer) {
            return withBos(super.stopTokens(tokenizer), tokenizer.bos());
        }
    };

    private final String id;

    BuiltinTemplate(String id) {
        this.id = id;
    }

    /** The name {@link ChatTemplate#byName} takes: chatml, llama3, llama2, plain. */
    @Override
    public String id() {
        return id;
    }

    /** Text of a system message, or null when the format folds it into the next user message. */
    abstract String system(String content);

    /** Text of a tool result, or null when the format has none. */
    String tool(String content) {
        return null;
    }

    /** Text of a user message; {@code system}: a folded system prompt, or null. */
    abstract String user(String content, String system, boolean first);

    /** Text after which the model writes the assistant's reply. */
    abstract String generationPrompt();

    /** Marker strings that end a reply when the vocabulary has them as single tokens. */
    abstract List<String> stopTokenStrings();

    /** How an assistant reply reads right after the generation prompt (Llama 2 and Plain: with a leading space). */
    @Override
    public abstract String assistantText(String content);

    /** The text that closes an assistant reply (its end marker and separator). */
    @Override
    public abstract String endOfReply();

    /** Whether the conversation starts with the tokenizer's BOS token (not part of the rendered text). */
    @Override
    public abstract boolean addBos();

    /** Texts that end a reply when they appear in the decoded output (for vocabularies without the marker tokens). */
    @Override
    public abstract List<String> stopStrings();

    /** Ids that end a reply: the vocabulary's EOS and this format's end markers that are single tokens. */
    @Override
    public int[] stopTokens(Tokenizer tokenizer) {
        Set<Integer> ids = new LinkedHashSet<>();
        if (tokenizer.eos() >= 0) {
            ids.add(tokenizer.eos());
        }
        for (String s : stopTokenStrings()) {
            int id = tokenizer.tokenId(s);
            if (id >= 0) {
                ids.add(id);
            }
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    private static int[] withBos(int[] ids, int bos) {
        if (bos < 0 || Arrays.stream(ids).anyMatch(i -> i == bos)) {
            return ids;
        }
        int[] out = Arrays.copyOf(ids, ids.length + 1);
        out[ids.length] = bos;
        return out;
    }

    @Override
    public String firstTurn(String system, String user) {
        Objects.requireNonNull(user, "user");
        StringBuilder sb = new StringBuilder();
        String folded = null;
        if (system != null) {
            String block = system(system);
            if (block == null) {
                folded = system;
            } else {
                sb.append(block);
            }
        }
        return sb.append(user(user, folded, true)).append(generationPrompt()).toString();
    }

    @Override
    public String nextTurn(String user) {
        Objects.requireNonNull(user, "user");
        return endOfReply() + user(user, null, false) + generationPrompt();
    }

    /**
     * The whole conversation (without the leading BOS). A Llama 2 system message goes into the
     * following user message (and is dropped when none follows). Tool calls, reasoning content and
     * {@code variables} are ignored; a tool result is a turn of role "tool" (ChatML, Llama 3:
     * "ipython"), "Tool: " in plain text, and refused by Llama 2, which has no such turn.
     */
    @Override
    public String render(List<Message> messages, boolean addGenerationPrompt, Map<String, Object> variables) {
        StringBuilder sb = new StringBuilder();
        String folded = null;
        boolean first = true;
        for (Message m : messages) {
            switch (m.role()) {
                case SYSTEM -> {
                    String block = system(m.content());
                    if (block == null) {
                        folded = m.content();
                    } else {
                        sb.append(block);
                    }
                }
                case USER -> {
                    sb.append(user(m.content(), folded, first));
                    folded = null;
                    first = false;
                }
                case ASSISTANT -> {
                    sb.append(generationPrompt()).append(assistantText(m.content())).append(endOfReply());
                    first = false;
                }
                case TOOL -> {
                    String block = tool(m.content());
                    if (block == null) {
                        throw new InputException("the built-in " + id + " chat template has no tool turns;"
                                + " use the model's own template");
                    }
                    sb.append(block);
                    first = false;
                }
            }
        }
        if (addGenerationPrompt) {
            sb.append(generationPrompt());
        }
        return sb.toString();
    }

    /**
     * Picks the format from a model's Jinja chat template (GGUF {@code tokenizer.chat_template};
     * when null, the vocabulary's): "&lt;|im_start|&gt;" → ChatML, "&lt;|start_header_id|&gt;" → Llama 3,
     * "[INST]" → Llama 2. Without a recognisable template, the vocabulary's tokens decide
     * ("&lt;|im_start|&gt;", "&lt;|start_header_id|&gt;"), and otherwise {@link #PLAIN}.
     */
    public static BuiltinTemplate detect(String jinjaTemplateOrNull, Vocabulary vocabulary) {
        String jinja = jinjaTemplateOrNull != null ? jinjaTemplateOrNull
                : vocabulary != null ? vocabulary.chatTemplate() : null;
        if (jinja != null) {
            if (jinja.contains("<|im_start|>")) {
                return CHATML;
            }
            if (jinja.contains("<|start_header_id|>")) {
                return LLAMA3;
            }
            if (jinja.contains("[INST]")) {
                return LLAMA2;
            }
        }
        if (vocabulary != null && vocabulary.tokens() != null) {
            List<String> tokens = Arrays.asList(vocabulary.tokens());
            if (tokens.contains("<|im_start|>")) {
                return CHATML;
            }
            if (tokens.contains("<|start_header_id|>")) {
                return LLAMA3;
            }
        }
        return PLAIN;
    }

    /**
     * The format named chatml, llama3, llama2 or plain (any case).
     *
     * @throws ParameterException naming {@code --template} for anything else
     */
    public static BuiltinTemplate byName(String name) {
        String key = name == null ? "" : name.strip().toLowerCase(Locale.ROOT);
        for (BuiltinTemplate t : values()) {
            if (t.id.equals(key)) {
                return t;
            }
        }
        throw new ParameterException("template", "unknown chat template '" + name
                + "'; choose one of chatml, llama3, llama2, plain, or jinja:FILE");
    }
}
