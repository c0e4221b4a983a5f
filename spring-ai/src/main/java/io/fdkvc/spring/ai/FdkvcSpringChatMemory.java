package io.fdkvc.spring.ai;

import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.memory.ChatSelection;
import io.fdkvc.memory.MemoryBuilder;
import io.fdkvc.memory.MemoryConfig;
import io.fdkvc.memory.MemoryState;
import io.fdkvc.memory.MessageInfo;
import io.fdkvc.memory.MiniLm;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.tokenizer.TokenCountEstimator;

/**
 * A Spring AI {@link ChatMemory} whose prompt is chosen by an fdkvc cache policy: per conversation
 * id, the whole transcript stays in the {@link ChatMemoryRepository}, and {@link #get(String)}
 * returns the system message and the messages the policy keeps, in their original order, within
 * {@code maxTokens}.
 *
 * <p>The selection is fdkvc-memory's {@link ChatSelection}, the one fdkvc-langchain4j's
 * {@code FdkvcChatMemory} runs, with the same conventions: the system message is kept, a tool call
 * and its responses are kept or dropped together, the shown messages never begin with an orphaned
 * reply, and the current exchange (the last user message and what follows it) is always shown.
 * The same conversation selects the same messages in both; the defaults are the same too
 * (policy {@value MemoryConfig#DEFAULT_POLICY}, packing on, temperature
 * {@value MemoryConfig#DEFAULT_TEMPERATURE}, the in-process all-MiniLM-L6-v2 embeddings and its
 * WordPiece token count).
 *
 * <p><b>With {@code MessageChatMemoryAdvisor}.</b> The advisor reads the memory before it adds
 * the user's new message, so a prompt is the selection within {@code maxTokens} plus that message.
 *
 * <p><b>Persistence.</b> The repository holds, per conversation, the system message, every
 * message and, last, one {@link SystemMessage} whose text is this memory's state as JSON (every
 * message's token count, every entry's embedding, the selection): text and message type are all
 * that Spring AI's repositories keep (the JDBC one among them). A memory built on the same
 * repository after a restart replays the transcript through a fresh policy from those numbers,
 * which reproduces the selection exactly (checked against the stored one). A conversation the
 * repository holds without a state (written by another memory, or one whose tool messages the
 * repository dropped, as the JDBC repository does) is adopted: counted, embedded and replayed.
 * A conversation is read once, on first use, then written through; at most
 * {@value #MAX_LOADED_CONVERSATIONS} are held in memory (the least recently used is read again
 * when it returns). Two memories must not share a repository's conversation at the same time.
 *
 * <p>Thread-safe (every method synchronizes on the memory).
 */
public final class FdkvcSpringChatMemory implements ChatMemory {
    /** Conversations held in memory at once. */
    public static final int MAX_LOADED_CONVERSATIONS = 256;
    /** How the state message's text begins: the JSON object's first key. */
    static final String STATE_PREFIX = "{\"" + MemoryState.MARKER + "\":";

    private final MemoryConfig config;
    private final TokenCountEstimator estimator; // null: the shared WordPiece default
    private final EmbeddingModel embeddingModel; // null: the shared all-MiniLM-L6-v2, loaded on first use
    private final ChatMemoryRepository repository;
    /** Loaded conversations, least recently used first. */
    private final LinkedHashMap<String, Conversation> loaded = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Conversation> eldest) {
            return size() > MAX_LOADED_CONVERSATIONS;
        }
    };

    /** One conversation: its system message, its transcript and the selection over it. */
    private final class Conversation {
        final String id;
        final ChatSelection selection;
        SystemMessage system;
        final List<Message> transcript = new ArrayList<>();

        Conversation(String id) {
            this.id = id;
            this.selection = new ChatSelection(config, FdkvcSpringChatMemory.this::embed);
        }
    }

    private FdkvcSpringChatMemory(Builder b, MemoryConfig config) {
        this.config = config;
        this.estimator = b.estimator;
        this.embeddingModel = b.embeddingModel;
        this.repository = b.repository;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The configuration every conversation's selection runs with. */
    public MemoryConfig config() {
        return config;
    }

    /** The policy configuration in force for a conversation (its budget is {@code maxTokens} minus the system message), or null before its first message. */
    public synchronized PolicySpec policySpec(String conversationId) {
        return conversation(conversationId).selection.policySpec();
    }

    /** A conversation as stored: the system message (if any) first, then every message in order. */
    public synchronized List<Message> transcript(String conversationId) {
        return all(conversation(conversationId));
    }

    @Override
    public synchronized void add(String conversationId, List<Message> messages) {
        Objects.requireNonNull(messages, "messages");
        Conversation c = conversation(conversationId);
        boolean changed = false;
        for (Message m : messages) {
            Objects.requireNonNull(m, "messages: a null message");
            if (m instanceof SystemMessage s) {
                if (s.equals(c.system)) continue;
                c.selection.system(cost(s));
                c.system = s;
            } else {
                int cost = cost(m);
                c.selection.add(info(m), cost);
                c.transcript.add(m);
            }
            changed = true;
        }
        if (changed) persist(c);
    }

    @Override
    public synchronized List<Message> get(String conversationId) {
        Conversation c = conversation(conversationId);
        List<Message> out = new ArrayList<>();
        if (c.system != null) out.add(c.system);
        for (int i : c.selection.selection()) out.add(c.transcript.get(i));
        return out;
    }

    @Override
    public synchronized void clear(String conversationId) {
        checkId(conversationId);
        repository.deleteByConversationId(conversationId);
        loaded.remove(conversationId);
    }

    // ------------------------------------------------------------------ messages as the selection sees them

    private int cost(Message m) {
        TokenCountEstimator e = estimator;
        int n = 0;
        if (m instanceof ToolResponseMessage t) {
            for (ToolResponseMessage.ToolResponse r : t.getResponses()) n += count(e, r.responseData());
        } else {
            n = count(e, m.getText());
        }
        return Math.max(1, n);
    }

    private static int count(TokenCountEstimator e, String text) {
        if (text == null) return 0;
        return e != null ? e.estimate(text) : MiniLm.tokenCounter().applyAsInt(text);
    }

    private float[] embed(String text) {
        return embeddingModel != null ? embeddingModel.embed(text) : MiniLm.embedder().embed(text);
    }

    /** How the selection sees a Spring AI message. */
    static MessageInfo info(Message m) {
        String type = m.getMessageType().name();
        return switch (m) {
            case UserMessage u -> MessageInfo.of(MessageInfo.Role.USER, text(u), type);
            case AssistantMessage a when a.hasToolCalls() -> {
                List<String> ids = new ArrayList<>();
                for (AssistantMessage.ToolCall call : a.getToolCalls()) ids.add(call.id());
                yield new MessageInfo(MessageInfo.Role.TOOL_REQUEST, text(a), type, ids);
            }
            case ToolResponseMessage t -> {
                List<String> ids = new ArrayList<>();
                for (ToolResponseMessage.ToolResponse r : t.getResponses()) ids.add(r.id());
                yield new MessageInfo(MessageInfo.Role.TOOL_RESULT, text(t), type, ids);
            }
            default -> MessageInfo.of(MessageInfo.Role.ASSISTANT, text(m), type);
        };
    }

    /** The words of a message that its embedding is computed from (as fdkvc-langchain4j's memory reads the same message). */
    static String text(Message m) {
        StringBuilder sb = new StringBuilder(m.getText() == null ? "" : m.getText());
        if (m instanceof AssistantMessage a && a.hasToolCalls()) {
            for (AssistantMessage.ToolCall call : a.getToolCalls()) {
                sb.append(sb.isEmpty() ? "" : "\n").append(call.name()).append(' ').append(call.arguments() == null ? "" : call.arguments());
            }
        } else if (m instanceof ToolResponseMessage t) {
            sb.setLength(0);
            for (ToolResponseMessage.ToolResponse r : t.getResponses()) {
                sb.append(sb.isEmpty() ? "" : "\n").append(r.name() == null ? "" : r.name() + ": ")
                        .append(r.responseData() == null ? "" : r.responseData());
            }
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ the repository

    private static void checkId(String conversationId) {
        if (conversationId == null || conversationId.isBlank()) {
            throw new IllegalArgumentException("conversationId: must not be null or blank");
        }
    }

    private static List<Message> all(Conversation c) {
        List<Message> all = new ArrayList<>(c.transcript.size() + 2);
        if (c.system != null) all.add(c.system);
        all.addAll(c.transcript);
        return all;
    }

    private void persist(Conversation c) {
        List<Message> all = all(c);
        all.add(new SystemMessage(StateJson.write(c.selection.state().attributes())));
        repository.saveAll(c.id, all);
    }

    /** The conversation, read from the repository on first use: replays what it holds. */
    private Conversation conversation(String id) {
        checkId(id);
        Conversation c = loaded.get(id);
        if (c != null) return c;
        c = new Conversation(id);
        List<Message> stored = repository.findByConversationId(id);
        if (stored != null && !stored.isEmpty()) {
            MemoryState state = stored.getLast() instanceof SystemMessage s && s.getText() != null && s.getText().startsWith(STATE_PREFIX)
                    ? MemoryState.fromAttributes(StateJson.read(s.getText(), id), id) : null;
            List<Message> messages = state == null ? stored : stored.subList(0, stored.size() - 1);
            SystemMessage sys = null;
            List<Message> rest = new ArrayList<>();
            for (Message m : messages) {
                if (m instanceof SystemMessage s) sys = s; // the last one is in force (others' conversations may hold several)
                else rest.add(m);
            }
            List<MessageInfo> infos = new ArrayList<>(rest.size());
            for (Message m : rest) infos.add(info(m));
            SystemMessage s = sys;
            c.selection.restore(infos, s == null ? null : () -> cost(s), i -> cost(rest.get(i)), state, id);
            c.system = sys;
            c.transcript.addAll(rest);
        }
        loaded.put(id, c);
        return c;
    }

    /** Builds a {@link FdkvcSpringChatMemory}; only {@code maxTokens} is required. */
    public static final class Builder extends MemoryBuilder<Builder> {
        private TokenCountEstimator estimator;
        private EmbeddingModel embeddingModel;
        private ChatMemoryRepository repository = new InMemoryChatMemoryRepository();

        private Builder() {}

        /**
         * Counts a message's tokens (default: the bert-base-uncased WordPiece tokenizer of
         * all-MiniLM-L6-v2, the evaluation's count; pass the chat model's own when it has one).
         */
        public Builder tokenCountEstimator(TokenCountEstimator estimator) {
            this.estimator = Objects.requireNonNull(estimator, "tokenCountEstimator");
            return this;
        }

        /** Embeds messages (default: in-process all-MiniLM-L6-v2, the evaluation's model). */
        public Builder embeddingModel(EmbeddingModel embeddingModel) {
            this.embeddingModel = Objects.requireNonNull(embeddingModel, "embeddingModel");
            return this;
        }

        /** Where the transcripts and the states live (default: a new {@link InMemoryChatMemoryRepository}). */
        public Builder chatMemoryRepository(ChatMemoryRepository repository) {
            this.repository = Objects.requireNonNull(repository, "chatMemoryRepository");
            return this;
        }

        /**
         * @throws InputException naming {@code maxTokens}, {@code temperature}, the policy or the
         *                        parameter that is invalid
         */
        public FdkvcSpringChatMemory build() {
            return new FdkvcSpringChatMemory(this, config());
        }
    }
}
