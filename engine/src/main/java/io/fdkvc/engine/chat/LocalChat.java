package io.fdkvc.engine.chat;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.tensor.Parallel;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A GGUF model answering chats in-process, for the framework adapters (fdkvc-langchain4j's chat
 * models, fdkvc-spring-ai's): one loaded model and up to {@code maxConversations} conversations,
 * each with its own policy-bounded KV cache ({@link Conversation}). A request names its
 * conversation by a key (a chat framework's conversation id) or, without one, is matched by its
 * messages: the longest held transcript that the request extends is continued, feeding only the
 * new messages. A request that does not extend its conversation's transcript starts that
 * conversation afresh; the least recently used conversation is dropped when there are too many.
 * One request at a time: the forward pass is not re-entrant.
 */
public final class LocalChat implements AutoCloseable {
    private final LoadedModel model;
    private final Llama llama;
    private final ChatFormat format;
    private final Options options;
    private final PolicySpec spec;
    private final String modelName;
    /** Conversations by key (a framework's id, or the conversation itself when the request named none), least recently used first. */
    private final LinkedHashMap<Object, Conversation> conversations = new LinkedHashMap<>(16, 0.75f, true);
    private boolean closed;

    /**
     * What the engine is opened with.
     *
     * @param modelPath        the GGUF model file
     * @param policy           the KV cache policy by registry name
     * @param parameters       the cache policy's parameters
     * @param cacheBudget      entries (tokens) each KV stream keeps after a turn
     * @param maxTurnTokens    tokens a turn may add before the policy runs (longer turns run in chunks)
     * @param positions        RoPE position of a cached entry
     * @param template         the chat format by name, null to detect it from the model
     * @param threads          threads of the forward pass
     * @param batch            prompt tokens processed together
     * @param maxConversations conversations (each with its own cache) held at once
     */
    public record Options(Path modelPath, String policy, Map<String, Object> parameters, int cacheBudget, int maxTurnTokens,
                          PositionMode positions, String template, int threads, int batch, int maxConversations) {
        /**
         * @throws InputException naming the option or the file at fault
         */
        public Options {
            if (modelPath == null) throw new ParameterException("modelPath", "is required");
            if (!Files.isRegularFile(modelPath)) throw new InputException("modelPath: " + modelPath + " is not a file");
            Objects.requireNonNull(policy, "policy");
            parameters = Map.copyOf(parameters);
            Objects.requireNonNull(positions, "positions");
            if (maxTurnTokens < 1) throw new ParameterException("maxTurnTokens", "must be >= 1, got " + maxTurnTokens);
            if (threads < 1) throw new ParameterException("threads", "must be >= 1, got " + threads);
            if (batch < 1) throw new ParameterException("batch", "must be >= 1, got " + batch);
            if (maxConversations < 1) throw new ParameterException("maxConversations", "must be >= 1, got " + maxConversations);
            if (cacheBudget < 1) throw new ParameterException("cacheBudget", "must be >= 1, got " + cacheBudget);
            PolicyRegistry.spec(policy, cacheBudget, parameters);
            if (template != null && !template.startsWith("jinja:")) ChatTemplate.byName(template); // a bad name fails before loading
        }
    }

    /** A committed reply. */
    public record Answer(String content, FinishReason finishReason, int promptTokens, int completionTokens) {}

    private LocalChat(LoadedModel model, Llama llama, ChatFormat format, Options options) {
        this.model = model;
        this.llama = llama;
        this.format = format;
        this.options = options;
        this.spec = PolicyRegistry.spec(options.policy(), options.cacheBudget(), options.parameters());
        this.modelName = options.modelPath().getFileName().toString();
    }

    /**
     * Loads the model.
     *
     * @param warnings receives why the model's own chat template was not used, if it was not
     */
    public static LocalChat open(Options options, Consumer<String> warnings) {
        LoadedModel model = GgufModelLoader.load(options.modelPath());
        try {
            Parallel.setThreads(options.threads());
            Llama llama = new Llama(model.config(), model.weights(), options.batch(), options.threads());
            // the model's own Jinja template when it renders (else a built-in format, with a warning), as fdkvc chat does
            ChatTemplate tpl = ChatTemplate.select(options.template(), model.vocabulary(), warnings::accept);
            ChatFormat format = new ChatFormat(tpl, Tokenizers.from(model.vocabulary()));
            return new LocalChat(model, llama, format, options);
        } catch (RuntimeException e) {
            model.close();
            throw e;
        }
    }

    /** The model file's name. */
    public String modelName() {
        return modelName;
    }

    /** The KV cache policy of every conversation. */
    public PolicySpec policySpec() {
        return spec;
    }

    /** Conversations held now (each with its own cache). */
    public synchronized int conversations() {
        return conversations.size();
    }

    /**
     * Answers {@code messages} on the calling thread and commits the reply to the conversation;
     * {@code onText} (may be null) receives the reply's text as it is released. On failure the
     * conversation stays as it was before the request.
     *
     * @param key the conversation's key, or null to match the request by its messages
     * @throws InputException when the messages do not fit the chat format
     */
    public synchronized Answer chat(Object key, List<Message> messages, GenerationParams params, Consumer<String> onText) {
        if (closed) throw new IllegalStateException("the model is closed");
        format.validate(messages);
        Conversation c = conversationFor(key, messages);
        Reply reply = c.begin(messages, params, onText);
        try {
            reply.runToEnd();
        } catch (RuntimeException | Error e) {
            reply.rollback(); // the conversation stays as it was before the request (a handler may have thrown)
            throw e;
        }
        reply.commit();
        return new Answer(reply.content(), reply.finishReason(), reply.promptTokens(), reply.completionTokens());
    }

    private Conversation conversationFor(Object key, List<Message> messages) {
        Object k = key;
        Conversation c = key == null ? null : conversations.get(key);
        if (key == null) {
            for (Map.Entry<Object, Conversation> e : conversations.entrySet()) {
                Conversation held = e.getValue();
                if (held.continuedBy(messages) && (c == null || held.messages().size() > c.messages().size())) {
                    c = held;
                    k = e.getKey();
                }
            }
        } else if (c != null && !c.continuedBy(messages)) {
            c = null; // the conversation's prompt changed: its cache is read afresh
        }
        if (c == null) {
            conversations.remove(k);
            if (conversations.size() == options.maxConversations()) {
                conversations.remove(conversations.keySet().iterator().next()); // its cache goes with it
            }
            c = new Conversation(new Session(llama, llama.newCache(spec, options.maxTurnTokens(), options.positions())), format);
            k = key != null ? key : c;
        }
        conversations.put(k, c); // most recently used now
        return c;
    }

    /**
     * Appends {@code next} to a request's messages: a message of the same role as the last one
     * (a memory that dropped the reply between two questions) joins it, the texts separated by a
     * blank line, since chat formats alternate roles.
     */
    public static void append(List<Message> messages, Message next) {
        Message last = messages.isEmpty() ? null : messages.getLast();
        if (last != null && last.role() == next.role()) {
            messages.set(messages.size() - 1, new Message(last.role(), last.content() + "\n\n" + next.content()));
        } else {
            messages.add(next);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        conversations.clear();
        llama.close();
        model.close();
    }
}
