package io.fdkvc.langchain4j;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.CustomMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.memory.ChatMemory;
import dev.langchain4j.model.TokenCountEstimator;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.memory.ChatSelection;
import io.fdkvc.memory.MemoryBuilder;
import io.fdkvc.memory.MemoryConfig;
import io.fdkvc.memory.MemoryState;
import io.fdkvc.memory.MessageInfo;
import io.fdkvc.memory.MiniLm;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A LangChain4j {@link ChatMemory} whose prompt is chosen by an fdkvc cache policy: the whole
 * transcript stays in the {@link ChatMemoryStore}, and {@link #messages()} returns the messages
 * the policy keeps, in their original order, within {@code maxTokens}.
 *
 * <p><b>What the policy sees.</b> Each message is one cache entry (a tool-execution request and
 * its results together are one entry): key = its unit-length sentence embedding, cost = its token
 * count, position = its index. Each entry is one policy turn whose single query is the entry's own
 * embedding scaled so that attention logits are cosine / {@code temperature}; for the default
 * {@code fdkvc-dialogue} the policy also reads each entry's hashed content words and speaker
 * (user, or assistant for AI messages and tool groups). That is how the evaluation plays real
 * dialogues through a policy (eval {@code PolicyMemory}), so its numbers for a policy describe
 * this memory. The policy's budget is {@code maxTokens} minus the system message's tokens, and
 * packing is on (evicted messages that still fit are readmitted).
 *
 * <p><b>Conventions</b> (as LangChain4j's own memories):
 * <ul>
 * <li>The system message is always kept and comes first; a different one replaces it (the policy
 * state is then replayed under the new budget).</li>
 * <li>A tool-execution request and its results are one entry: kept or dropped together. While the
 * results are still arriving the group is the open end of the conversation and always shown.</li>
 * <li>The current exchange — the last user message and everything after it — is always shown
 * (a model must see the question it answers), even when the policy evicted it.</li>
 * <li>If the shown messages exceed {@code maxTokens}, the oldest are dropped until they fit,
 * first outside the current exchange, then inside it.</li>
 * <li>The shown messages never begin with an orphaned reply: an AI message or a tool result whose
 * user message was dropped is dropped too.</li>
 * <li>With packing on (the default), the budget that these rules freed is refilled with the most
 * recent transcript messages not shown that still fit (never an orphan, never a new orphaned
 * first reply): the transcript keeps what the policy evicted, so the prompt need not waste it.</li>
 * </ul>
 *
 * <p><b>Persistence.</b> The store holds the system message, the whole transcript and, last, one
 * {@link CustomMessage} with this memory's state: every message's token count, every entry's
 * embedding and the selection. A memory built on the same store after a restart replays the
 * transcript through a fresh policy from those stored numbers (no embedding model call, no
 * re-counting), which reproduces the selection exactly; the stored selection is checked against
 * the replay. A store written by another memory (no state message) is adopted: its messages are
 * counted, embedded and replayed. The memory reads the store once, on first use, and then writes
 * through; two memory objects must not share one id at the same time.
 *
 * <p>The selection itself is fdkvc-memory's {@link ChatSelection}, which fdkvc's Spring AI memory
 * shares: the same conversation selects the same messages in both.
 *
 * <p>Thread-safe (every method synchronizes on the memory).
 */
public final class FdkvcChatMemory implements ChatMemory {
    /** The policy used when the builder names none. */
    public static final String DEFAULT_POLICY = MemoryConfig.DEFAULT_POLICY;
    /**
     * Attention temperature (logits = cosine / temperature) when the builder sets none: the
     * evaluation's default ({@code DialogueOptions.DEFAULT_TEMPERATURE}).
     */
    public static final double DEFAULT_TEMPERATURE = MemoryConfig.DEFAULT_TEMPERATURE;

    private final Object id;
    private final TokenCountEstimator estimator;
    private final ChatMemoryStore store;
    private final ChatSelection selection;

    // ---- state (rebuilt from the store on first use) ----
    private boolean loaded;
    private SystemMessage system;
    /** Every non-system message, in order (the selection's indices). */
    private final List<ChatMessage> transcript = new ArrayList<>();

    private FdkvcChatMemory(Builder b, MemoryConfig config) {
        this.id = b.id;
        this.estimator = b.estimator != null ? b.estimator : MiniLm.tokenCountEstimator();
        EmbeddingModel model = b.embeddingModel; // null: the shared default, loaded on first use
        this.selection = new ChatSelection(config, text -> (model != null ? model : MiniLm.embeddingModel())
                .embed(TextSegment.from(text)).content().vector());
        this.store = b.store;
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Object id() {
        return id;
    }

    /** The policy configuration in force (its budget is {@code maxTokens} minus the system message). */
    public synchronized PolicySpec policySpec() {
        load();
        return selection.policySpec();
    }

    public int maxTokens() {
        return selection.config().maxTokens();
    }

    /** The whole conversation as stored: the system message (if any) first, then every message in order. */
    public synchronized List<ChatMessage> transcript() {
        load();
        List<ChatMessage> all = new ArrayList<>(transcript.size() + 1);
        if (system != null) all.add(system);
        all.addAll(transcript);
        return all;
    }

    @Override
    public synchronized void add(ChatMessage message) {
        Objects.requireNonNull(message, "message");
        load();
        if (message instanceof SystemMessage s) {
            if (s.equals(system)) return;
            selection.system(cost(s));
            system = s;
        } else {
            int cost = cost(message);
            selection.add(info(message), cost);
            transcript.add(message);
        }
        persist();
    }

    @Override
    public synchronized List<ChatMessage> messages() {
        load();
        List<ChatMessage> out = new ArrayList<>();
        if (system != null) out.add(system);
        for (int i : selection.selection()) out.add(transcript.get(i));
        return out;
    }

    @Override
    public synchronized void clear() {
        store.deleteMessages(id);
        system = null;
        transcript.clear();
        selection.reset();
        loaded = true;
    }

    private int cost(ChatMessage m) {
        return Math.max(1, estimator.estimateTokenCountInMessage(m));
    }

    /** How the selection sees a LangChain4j message. */
    private static MessageInfo info(ChatMessage m) {
        String type = m.type().name();
        return switch (m) {
            case UserMessage u -> MessageInfo.of(MessageInfo.Role.USER, text(u), type);
            case AiMessage a when a.hasToolExecutionRequests() -> {
                List<String> ids = new ArrayList<>();
                a.toolExecutionRequests().forEach(r -> ids.add(r.id()));
                yield new MessageInfo(MessageInfo.Role.TOOL_REQUEST, text(a), type, ids);
            }
            case ToolExecutionResultMessage t -> new MessageInfo(MessageInfo.Role.TOOL_RESULT, text(t), type,
                    java.util.Collections.singletonList(t.id()));
            default -> MessageInfo.of(MessageInfo.Role.ASSISTANT, text(m), type);
        };
    }

    /** The words of a message that its embedding is computed from. */
    static String text(ChatMessage m) {
        return switch (m) {
            case UserMessage u -> {
                StringBuilder sb = new StringBuilder();
                for (Content c : u.contents()) {
                    if (c instanceof TextContent t) sb.append(sb.isEmpty() ? "" : "\n").append(t.text());
                }
                yield sb.toString();
            }
            case AiMessage a -> {
                StringBuilder sb = new StringBuilder(a.text() == null ? "" : a.text());
                if (a.hasToolExecutionRequests()) {
                    a.toolExecutionRequests().forEach(r -> sb.append(sb.isEmpty() ? "" : "\n")
                            .append(r.name()).append(' ').append(r.arguments() == null ? "" : r.arguments()));
                }
                yield sb.toString();
            }
            case ToolExecutionResultMessage t -> (t.toolName() == null ? "" : t.toolName() + ": ") + (t.text() == null ? "" : t.text());
            case SystemMessage s -> s.text();
            case CustomMessage c -> c.attributes().toString();
            default -> m.toString();
        };
    }

    // ------------------------------------------------------------------ the store

    private void persist() {
        List<ChatMessage> all = transcript();
        all.add(CustomMessage.from(selection.state().attributes()));
        store.updateMessages(id, all);
    }

    /** Reads the store once: replays what it holds. */
    private void load() {
        if (loaded) return;
        loaded = true;
        List<ChatMessage> stored = store.getMessages(id);
        if (stored == null || stored.isEmpty()) return;
        MemoryState state = stored.getLast() instanceof CustomMessage c && MemoryState.isState(c.attributes())
                ? MemoryState.fromAttributes(c.attributes(), id) : null;
        List<ChatMessage> messages = state == null ? stored : stored.subList(0, stored.size() - 1);
        SystemMessage sys = null;
        List<ChatMessage> rest = new ArrayList<>();
        for (ChatMessage m : messages) {
            if (m instanceof SystemMessage s) sys = s; // the last one is in force (others' stores may hold several)
            else rest.add(m);
        }
        List<MessageInfo> infos = new ArrayList<>(rest.size());
        for (ChatMessage m : rest) infos.add(info(m));
        SystemMessage s = sys;
        try {
            selection.restore(infos, s == null ? null : () -> cost(s), i -> cost(rest.get(i)), state, id);
        } catch (RuntimeException e) {
            selection.reset();
            throw e;
        }
        system = sys;
        transcript.addAll(rest);
    }

    /** Builds a {@link FdkvcChatMemory}; only {@code maxTokens} is required. */
    public static final class Builder extends MemoryBuilder<Builder> {
        private Object id = "default";
        private TokenCountEstimator estimator;
        private EmbeddingModel embeddingModel;
        private ChatMemoryStore store = new InMemoryChatMemoryStore();

        private Builder() {}

        /** The memory's id in the store (default {@code "default"}). */
        public Builder id(Object id) {
            this.id = Objects.requireNonNull(id, "id");
            return this;
        }

        /**
         * Counts a message's tokens (default: the bert-base-uncased WordPiece tokenizer of
         * all-MiniLM-L6-v2, the evaluation's count; pass the chat model's own estimator when it
         * has one).
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

        /** Where the transcript and the state live (default: a new {@link InMemoryChatMemoryStore}). */
        public Builder chatMemoryStore(ChatMemoryStore store) {
            this.store = Objects.requireNonNull(store, "chatMemoryStore");
            return this;
        }

        /**
         * @throws InputException naming {@code maxTokens}, {@code temperature}, the policy or the
         *                        parameter that is invalid
         */
        public FdkvcChatMemory build() {
            return new FdkvcChatMemory(this, config());
        }
    }
}
