package io.fdkvc.langchain4j;

import dev.langchain4j.data.embedding.Embedding;
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
import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;
import io.fdkvc.core.policy.dialogue.DialogueFeatures;
import io.fdkvc.core.policy.dialogue.DialoguePolicy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

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
 * <p>Thread-safe (every method synchronizes on the memory).
 */
public final class FdkvcChatMemory implements ChatMemory {
    /** The policy used when the builder names none. */
    public static final String DEFAULT_POLICY = "fdkvc-dialogue";
    /**
     * Attention temperature (logits = cosine / temperature) when the builder sets none: the
     * evaluation's default ({@code DialogueOptions.DEFAULT_TEMPERATURE}).
     */
    public static final double DEFAULT_TEMPERATURE = 0.05;

    private final Object id;
    private final int maxTokens;
    private final TokenCountEstimator estimator;
    private final EmbeddingModel embeddingModel; // null: the shared default, loaded on first use
    private final String policyName;
    private final Map<String, Object> policyParameters;
    private final double temperature;
    private final boolean packing;
    private final ChatMemoryStore store;

    // ---- state (rebuilt from the store on first use) ----
    private boolean loaded;
    private SystemMessage system;
    private int systemCost;
    /** Every non-system message, in order, and its token count. */
    private final List<ChatMessage> transcript = new ArrayList<>();
    private final List<Integer> costs = new ArrayList<>();
    /** Closed entries in order; entry k has stream position k. */
    private final List<Unit> units = new ArrayList<>();
    /** A tool-execution request whose results may still arrive; not yet given to the policy. */
    private OpenGroup open;
    /** Embeddings read from the store, used instead of the model while replaying. */
    private List<float[]> storedEmbeddings = List.of();

    private PolicySpec spec;
    private Policy policy;
    private KvStream stream;
    private Turn turn;
    private float[] query;
    /** Whether the policy reads the lexical {@link DialogueFeatures} as its embedding channel ({@code fdkvc-dialogue}). */
    private boolean lexical;
    private float[] features;
    private float[] queryFeatures;

    /**
     * One cache entry: transcript messages {@code [first, first + count)}.
     *
     * @param user whether it is a user message (the start of an exchange)
     */
    record Unit(int first, int count, int cost, float[] embedding, boolean user) {}

    private static final class OpenGroup {
        final int first;
        int count = 1;
        int cost;
        final Set<String> ids = new HashSet<>();

        OpenGroup(int first, int cost, AiMessage request) {
            this.first = first;
            this.cost = cost;
            request.toolExecutionRequests().forEach(r -> ids.add(r.id()));
        }

        boolean accepts(ToolExecutionResultMessage result) {
            // providers without request ids send null on both sides
            return result.id() == null || ids.contains(result.id()) || ids.contains(null);
        }
    }

    private FdkvcChatMemory(Builder b) {
        this.id = b.id;
        this.maxTokens = b.maxTokens;
        this.estimator = b.estimator != null ? b.estimator : DefaultModels.tokenCountEstimator();
        this.embeddingModel = b.embeddingModel;
        this.policyName = b.policy;
        this.policyParameters = Map.copyOf(b.parameters);
        this.temperature = b.temperature;
        this.packing = b.packing;
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
        return spec;
    }

    public int maxTokens() {
        return maxTokens;
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
            setSystem(s, cost(s));
        } else {
            transcript.add(message);
            costs.add(cost(message));
            accept(transcript.size() - 1);
        }
        persist();
    }

    @Override
    public synchronized List<ChatMessage> messages() {
        load();
        List<ChatMessage> out = new ArrayList<>();
        if (system != null) out.add(system);
        for (int i : selection()) out.add(transcript.get(i));
        return out;
    }

    @Override
    public synchronized void clear() {
        store.deleteMessages(id);
        reset();
        loaded = true;
    }

    private void reset() {
        system = null;
        systemCost = 0;
        transcript.clear();
        costs.clear();
        units.clear();
        open = null;
        storedEmbeddings = List.of();
        spec = null;
        policy = null;
        stream = null;
    }

    private int cost(ChatMessage m) {
        return Math.max(1, estimator.estimateTokenCountInMessage(m));
    }

    // ------------------------------------------------------------------ entries and the policy

    private void setSystem(SystemMessage s, int cost) {
        if (cost >= maxTokens) {
            throw new InputException("maxTokens: the system message alone has " + cost + " tokens, maxTokens is " + maxTokens);
        }
        system = s;
        boolean budgetChanged = cost != systemCost;
        systemCost = cost;
        if (budgetChanged && spec != null) replayPolicy(); // a new budget: the state is what it would have been under it
    }

    /** Files transcript message {@code i} into an entry (or the open tool group). */
    private void accept(int i) {
        ChatMessage m = transcript.get(i);
        int cost = costs.get(i);
        if (open != null && m instanceof ToolExecutionResultMessage r && open.accepts(r)) {
            open.count++;
            open.cost += cost;
            return;
        }
        closeOpenGroup();
        if (m instanceof AiMessage ai && ai.hasToolExecutionRequests()) {
            open = new OpenGroup(i, cost, ai);
            return;
        }
        closeUnit(i, 1, cost);
    }

    private void closeOpenGroup() {
        if (open == null) return;
        OpenGroup g = open;
        open = null;
        closeUnit(g.first, g.count, g.cost);
    }

    private void closeUnit(int first, int count, int cost) {
        int k = units.size();
        float[] e = k < storedEmbeddings.size() ? storedEmbeddings.get(k) : embed(text(first, count));
        units.add(new Unit(first, count, cost, e, transcript.get(first) instanceof UserMessage));
        applyPolicy(k);
    }

    /**
     * The per-entry policy step: entry {@code k} enters the stream and the policy ends its turn
     * with the entry's own embedding as the query (the evaluation's protocol, eval
     * {@code PolicyMemory}): key = the unit sentence embedding, query row = the same scaled by
     * sqrt(d) / temperature so that attention logits are cosine / temperature. For
     * {@code fdkvc-dialogue} the embedding channel is the entry's {@link DialogueFeatures} (hashed
     * content words, speaker) and the query embedding is the same words tagged with the speaker who
     * writes next. Packing (readmitting evicted entries that still fit) is the policy's own. The
     * one place where the policy runs.
     */
    private void applyPolicy(int k) {
        Unit u = units.get(k);
        int dim = u.embedding().length;
        if (spec == null) createPolicy(dim);
        if (dim != stream.keyDim()) {
            throw new InputException("embeddingModel: embeddings changed dimension from " + stream.keyDim() + " to " + dim);
        }
        if (lexical) {
            DialogueFeatures.Speaker speaker = u.user() ? DialogueFeatures.Speaker.USER : DialogueFeatures.Speaker.ASSISTANT;
            String text = text(u.first(), u.count());
            DialogueFeatures.write(text, speaker, features, 0);
            DialogueFeatures.write(text, DialogueFeatures.next(speaker), queryFeatures, 0);
            stream.append(k, u.embedding(), 0, null, 0, features, 0, u.cost());
        } else {
            stream.append(k, u.embedding(), 0, null, 0, null, 0, u.cost());
        }
        float scale = (float) (Math.sqrt(dim) / temperature);
        for (int j = 0; j < dim; j++) query[j] = u.embedding()[j] * scale;
        turn.set(query, 1, lexical ? queryFeatures : u.embedding());
        policy.endTurn(stream, turn);
    }

    private void createPolicy(int dim) {
        spec = PolicyRegistry.spec(policyName, maxTokens - systemCost, policyParameters);
        policy = spec.newPolicy();
        policy.setPacking(packing);
        lexical = policy instanceof DialoguePolicy;
        int embeddingDim = lexical ? DialogueFeatures.DIMENSION : 0;
        // Growable storage: entries are whole messages, few; a budget of many tokens must not
        // pre-allocate as many embedding rows.
        stream = new KvStream(dim, 0, embeddingDim, 16, true);
        turn = new Turn(dim, lexical ? DialogueFeatures.DIMENSION : dim);
        query = new float[dim];
        features = lexical ? new float[DialogueFeatures.DIMENSION] : null;
        queryFeatures = lexical ? new float[DialogueFeatures.DIMENSION] : null;
    }

    private void replayPolicy() {
        int dim = stream.keyDim();
        spec = null;
        createPolicy(dim);
        for (int k = 0; k < units.size(); k++) applyPolicy(k);
    }

    // ------------------------------------------------------------------ the view

    /** Transcript indices of the messages shown, in order (the system message aside). */
    private List<Integer> selection() {
        int n = units.size() + (open != null ? 1 : 0);
        boolean[] keep = new boolean[n];
        if (stream != null) {
            long[] pos = stream.positions();
            for (int i = 0; i < stream.size(); i++) keep[(int) pos[i]] = true;
        }
        // the current exchange: from the last user entry on (or just the newest entry)
        int exchange = n - 1;
        for (int k = n - 1; k >= 0; k--) {
            if (isUser(k)) {
                exchange = k;
                break;
            }
        }
        for (int k = Math.max(0, exchange); k < n; k++) keep[k] = true;
        long total = systemCost;
        for (int k = 0; k < n; k++) if (keep[k]) total += unitCost(k);
        for (int k = 0; k < exchange && total > maxTokens; k++) {
            if (keep[k]) {
                keep[k] = false;
                total -= unitCost(k);
            }
        }
        for (int k = 0; k < n && total > maxTokens; k++) {
            if (keep[k]) {
                keep[k] = false;
                total -= unitCost(k);
            }
        }
        // no orphaned reply first: drop leading entries answering a user message that is not shown
        boolean[] orphan = new boolean[n];
        boolean userBefore = false;
        for (int k = 0; k < n; k++) {
            if (keep[k]) {
                if (isUser(k) || !userBefore && !isToolResult(k)) break;
                keep[k] = false;
                orphan[k] = true;
                total -= unitCost(k);
            }
            userBefore |= isUser(k);
        }
        if (packing) refill(keep, orphan, total);
        List<Integer> out = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            if (!keep[k]) continue;
            int first = k < units.size() ? units.get(k).first() : open.first;
            int count = k < units.size() ? units.get(k).count() : open.count;
            for (int i = first; i < first + count; i++) out.add(i);
        }
        return out;
    }

    /**
     * With packing on: the conventions removed messages outside the policy's ranking, and the
     * budget they freed takes the most recent messages not shown that still fit, as core's packing
     * readmits evicted entries after an eviction (by recency here: the policy has no score for the
     * messages it evicted earlier). A refill is never a dropped orphan and never becomes a new
     * orphaned first reply: it is a user message or comes after a shown user message.
     */
    private void refill(boolean[] keep, boolean[] orphan, long total) {
        int n = keep.length;
        int firstUser = n;
        for (int k = 0; k < n; k++) {
            if (keep[k] && isUser(k)) {
                firstUser = k;
                break;
            }
        }
        for (int k = n - 1; k >= 0; k--) {
            if (keep[k] || orphan[k] || total + unitCost(k) > maxTokens) continue;
            if (!isUser(k) && k < firstUser) continue;
            keep[k] = true;
            total += unitCost(k);
            if (isUser(k) && k < firstUser) firstUser = k;
        }
    }

    private boolean isUser(int k) {
        return k < units.size() && units.get(k).user();
    }

    private boolean isToolResult(int k) {
        return k < units.size() && transcript.get(units.get(k).first()) instanceof ToolExecutionResultMessage;
    }

    private int unitCost(int k) {
        return k < units.size() ? units.get(k).cost() : open.cost;
    }

    // ------------------------------------------------------------------ embeddings

    private float[] embed(String text) {
        EmbeddingModel model = embeddingModel != null ? embeddingModel : DefaultModels.embeddingModel();
        Embedding e = model.embed(TextSegment.from(text)).content();
        float[] v = e.vector().clone();
        double norm = 0;
        for (float x : v) norm += (double) x * x;
        // already unit length (MiniLM's are): left bit for bit as the model gave it, as the evaluation uses it
        if (norm > 0 && Math.abs(Math.sqrt(norm) - 1) > 1e-6) {
            float inv = (float) (1 / Math.sqrt(norm));
            for (int j = 0; j < v.length; j++) v[j] *= inv;
        }
        return v;
    }

    private String text(int first, int count) {
        StringBuilder sb = new StringBuilder();
        for (int i = first; i < first + count; i++) {
            if (!sb.isEmpty()) sb.append('\n');
            sb.append(text(transcript.get(i)));
        }
        // a text embedder needs text; a message without any (an image) is embedded by its kind
        return sb.toString().isBlank() ? transcript.get(first).type().name() : sb.toString();
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
        List<float[]> embeddings = new ArrayList<>(units.size());
        for (Unit u : units) embeddings.add(u.embedding());
        all.add(MemoryState.encode(new MemoryState(config(), systemCost, List.copyOf(costs), embeddings, selection())));
        store.updateMessages(id, all);
    }

    private MemoryState.Config config() {
        Map<String, Object> values = PolicyRegistry.spec(policyName, maxTokens, policyParameters).parameterValues();
        Map<String, String> params = new LinkedHashMap<>();
        values.forEach((k, v) -> params.put(k, String.valueOf(v)));
        return new MemoryState.Config(policyName, params, maxTokens, temperature, packing);
    }

    /** Reads the store once: replays what it holds. */
    private void load() {
        if (loaded) return;
        loaded = true;
        List<ChatMessage> stored = store.getMessages(id);
        if (stored == null || stored.isEmpty()) return;
        MemoryState state = MemoryState.decode(stored.getLast(), id);
        List<ChatMessage> messages = state == null ? stored : stored.subList(0, stored.size() - 1);
        SystemMessage sys = null;
        for (ChatMessage m : messages) {
            if (m instanceof SystemMessage s) sys = s; // the last one is in force (others' stores may hold several)
            else transcript.add(m);
        }
        boolean useStored = state != null && state.costs().size() == transcript.size();
        if (useStored) {
            costs.addAll(state.costs());
            storedEmbeddings = state.embeddings();
        } else {
            for (ChatMessage m : transcript) costs.add(cost(m));
        }
        if (sys != null) setSystem(sys, useStored ? state.systemCost() : cost(sys));
        try {
            for (int i = 0; i < transcript.size(); i++) accept(i);
        } finally {
            storedEmbeddings = List.of();
        }
        if (state != null && useStored && state.config().equals(config()) && !state.selection().equals(selection())) {
            throw new IllegalStateException("chat memory '" + id + "': replaying the stored transcript selects "
                    + selection() + ", the store recorded " + state.selection() + " (policy code changed?)");
        }
    }

    /** Builds a {@link FdkvcChatMemory}; only {@code maxTokens} is required. */
    public static final class Builder {
        private Object id = "default";
        private int maxTokens;
        private TokenCountEstimator estimator;
        private EmbeddingModel embeddingModel;
        private String policy = DEFAULT_POLICY;
        private final Map<String, Object> parameters = new LinkedHashMap<>();
        private double temperature = DEFAULT_TEMPERATURE;
        private boolean packing = true;
        private ChatMemoryStore store = new InMemoryChatMemoryStore();

        private Builder() {}

        /** The memory's id in the store (default {@code "default"}). */
        public Builder id(Object id) {
            this.id = Objects.requireNonNull(id, "id");
            return this;
        }

        /** The most tokens {@link #messages()} returns, system message included (required). */
        public Builder maxTokens(int maxTokens) {
            this.maxTokens = maxTokens;
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

        /** The registry name of the policy (default {@value #DEFAULT_POLICY}); see {@code fdkvc policies}. */
        public Builder policy(String name) {
            this.policy = Objects.requireNonNull(name, "policy");
            return this;
        }

        /** One policy parameter (name as {@code fdkvc policies} lists it); validated by {@link #build()}. */
        public Builder policyParameter(String name, Object value) {
            parameters.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** Policy parameters by name, added to those already set. */
        public Builder policyParameters(Map<String, ?> values) {
            values.forEach(this::policyParameter);
            return this;
        }

        /** Attention temperature: the policy's attention logits are cosine / temperature (default {@value #DEFAULT_TEMPERATURE}). */
        public Builder temperature(double temperature) {
            this.temperature = temperature;
            return this;
        }

        /**
         * Whether the policy readmits evicted messages that still fit the budget, best-ranked
         * first (core's shared packing; default on). Off: the paper's plain eviction.
         */
        public Builder packing(boolean on) {
            this.packing = on;
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
            if (maxTokens < 1) throw new ParameterException("maxTokens", "must be >= 1, got " + maxTokens);
            if (!(temperature > 0) || Double.isInfinite(temperature)) {
                throw new ParameterException("temperature", "must be > 0 and finite, got " + temperature);
            }
            PolicyRegistry.spec(policy, maxTokens, parameters); // fail here, not at the first message
            return new FdkvcChatMemory(this);
        }
    }
}
