package io.fdkvc.memory;

import io.fdkvc.core.InputException;
import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;
import io.fdkvc.core.policy.dialogue.DialogueFeatures;
import io.fdkvc.core.policy.dialogue.DialoguePolicy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.function.IntUnaryOperator;

/**
 * The selection of a policy-chosen chat memory, for any chat framework: the adapters (fdkvc's
 * LangChain4j and Spring AI memories) describe each message as a {@link MessageInfo} and a token
 * count, and show the system message and the transcript messages at {@link #selection()}.
 *
 * <p><b>What the policy sees.</b> Each message is one cache entry (a tool request and its results
 * together are one entry): key = its unit-length sentence embedding, cost = its token count,
 * position = its index. Each entry is one policy turn whose single query is the entry's own
 * embedding scaled so that attention logits are cosine / temperature; for {@code fdkvc-dialogue}
 * the policy also reads each entry's hashed content words and speaker (user, or assistant for
 * every other entry). That is how the evaluation plays real dialogues through a policy (eval
 * {@code PolicyMemory}), so its numbers for a policy describe this selection. The policy's budget
 * is {@code maxTokens} minus the system message's tokens.
 *
 * <p><b>Conventions.</b>
 * <ul>
 * <li>The system message is always kept (its tokens come off the policy's budget); a different
 * one replaces it and the policy state is replayed under the new budget.</li>
 * <li>A tool request and its results are one entry: kept or dropped together. While results are
 * still arriving the group is the open end of the conversation and always shown.</li>
 * <li>The current exchange (the last user message and everything after it) is always shown, even
 * when the policy evicted it.</li>
 * <li>If the shown messages exceed {@code maxTokens}, the oldest are dropped until they fit,
 * first outside the current exchange, then inside it.</li>
 * <li>The shown messages never begin with an orphaned reply: a reply or tool result whose user
 * message was dropped is dropped too.</li>
 * <li>With packing on, the budget that these rules freed is refilled with the most recent
 * messages not shown that still fit (never an orphan, never a new orphaned first reply).</li>
 * </ul>
 *
 * <p>Not thread-safe: the adapters synchronize.
 */
public final class ChatSelection {
    private final MemoryConfig config;
    private final TextEmbedder embedder;

    private boolean hasSystem;
    private int systemCost;
    /** Every non-system message, in order, and its token count. */
    private final List<MessageInfo> messages = new ArrayList<>();
    private final List<Integer> costs = new ArrayList<>();
    /** Closed entries in order; entry k has stream position k. */
    private final List<Unit> units = new ArrayList<>();
    /** A tool request whose results may still arrive; not yet given to the policy. */
    private OpenGroup open;
    /** Embeddings read from a store, used instead of the embedder while replaying. */
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
    private record Unit(int first, int count, int cost, float[] embedding, boolean user) {}

    private static final class OpenGroup {
        final int first;
        int count = 1;
        int cost;
        final Set<String> ids = new HashSet<>();

        OpenGroup(int first, int cost, MessageInfo request) {
            this.first = first;
            this.cost = cost;
            ids.addAll(request.toolIds());
        }

        boolean accepts(MessageInfo result) {
            // providers without request ids send null on both sides
            for (String id : result.toolIds()) {
                if (id != null && !ids.contains(id) && !ids.contains(null)) return false;
            }
            return true;
        }
    }

    public ChatSelection(MemoryConfig config, TextEmbedder embedder) {
        this.config = Objects.requireNonNull(config, "config");
        this.embedder = Objects.requireNonNull(embedder, "embedder");
    }

    public MemoryConfig config() {
        return config;
    }

    /** The policy configuration in force (its budget is {@code maxTokens} minus the system message), or null before the first entry. */
    public PolicySpec policySpec() {
        return spec;
    }

    /** Number of non-system messages. */
    public int size() {
        return messages.size();
    }

    /** Sets the system message's token count (a new or replaced system message). */
    public void system(int cost) {
        if (cost >= config.maxTokens()) {
            throw new InputException("maxTokens: the system message alone has " + cost + " tokens, maxTokens is " + config.maxTokens());
        }
        hasSystem = true;
        boolean budgetChanged = cost != systemCost;
        systemCost = cost;
        if (budgetChanged && spec != null) replayPolicy(); // a new budget: the state is what it would have been under it
    }

    /** Appends a non-system message of {@code cost} tokens (at least 1). */
    public void add(MessageInfo m, int cost) {
        Objects.requireNonNull(m, "message");
        if (cost < 1) throw new IllegalArgumentException("cost must be >= 1, got " + cost);
        messages.add(m);
        costs.add(cost);
        accept(messages.size() - 1);
    }

    /** Forgets everything. */
    public void reset() {
        hasSystem = false;
        systemCost = 0;
        messages.clear();
        costs.clear();
        units.clear();
        open = null;
        storedEmbeddings = List.of();
        spec = null;
        policy = null;
        stream = null;
    }

    // ------------------------------------------------------------------ entries and the policy

    /** Files message {@code i} into an entry (or the open tool group). */
    private void accept(int i) {
        MessageInfo m = messages.get(i);
        int cost = costs.get(i);
        if (open != null && m.role() == MessageInfo.Role.TOOL_RESULT && open.accepts(m)) {
            open.count++;
            open.cost += cost;
            return;
        }
        closeOpenGroup();
        if (m.role() == MessageInfo.Role.TOOL_REQUEST) {
            open = new OpenGroup(i, cost, m);
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
        units.add(new Unit(first, count, cost, e, messages.get(first).role() == MessageInfo.Role.USER));
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
        float scale = (float) (Math.sqrt(dim) / config.temperature());
        for (int j = 0; j < dim; j++) query[j] = u.embedding()[j] * scale;
        turn.set(query, 1, lexical ? queryFeatures : u.embedding());
        policy.endTurn(stream, turn);
    }

    private void createPolicy(int dim) {
        spec = PolicyRegistry.spec(config.policy(), config.maxTokens() - systemCost, config.parameters());
        policy = spec.newPolicy();
        policy.setPacking(config.packing());
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

    /** Indices of the transcript messages shown, in order (the system message aside). */
    public List<Integer> selection() {
        int n = units.size() + (open != null ? 1 : 0);
        boolean[] keep = new boolean[n];
        if (stream != null) {
            long[] pos = stream.positions();
            for (int i = 0; i < stream.size(); i++) keep[(int) pos[i]] = true;
        }
        int maxTokens = config.maxTokens();
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
        if (config.packing()) refill(keep, orphan, total);
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
        int maxTokens = config.maxTokens();
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
        return k < units.size() && messages.get(units.get(k).first()).role() == MessageInfo.Role.TOOL_RESULT;
    }

    private int unitCost(int k) {
        return k < units.size() ? units.get(k).cost() : open.cost;
    }

    // ------------------------------------------------------------------ embeddings

    private float[] embed(String text) {
        float[] v = embedder.embed(text).clone();
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
            sb.append(messages.get(i).text());
        }
        // a text embedder needs text; a message without any (an image) is embedded by its kind
        return sb.toString().isBlank() ? messages.get(first).typeName() : sb.toString();
    }

    // ------------------------------------------------------------------ the store

    /** What the store keeps beside the transcript: the numbers a rebuilt memory replays from, and the selection as a check. */
    public MemoryState state() {
        List<float[]> embeddings = new ArrayList<>(units.size());
        for (Unit u : units) embeddings.add(u.embedding());
        return new MemoryState(config.stored(), systemCost, List.copyOf(costs), embeddings, selection());
    }

    /**
     * Rebuilds the selection from a store (on an empty selection): replays {@code transcript}
     * through a fresh policy from the stored numbers in {@code state} when they match it (no
     * embedding call, no re-counting), else counts ({@code cost}) and embeds every message (a
     * store written by another memory, {@code state} null).
     *
     * @param systemCost the system message's token count, or null when there is none (asked only without stored numbers)
     * @param cost       token count of transcript message i
     * @throws IllegalStateException when the stored selection is not what the replay selects under the same configuration
     */
    public void restore(List<MessageInfo> transcript, IntSupplier systemCost, IntUnaryOperator cost, MemoryState state, Object id) {
        if (!messages.isEmpty() || hasSystem) throw new IllegalStateException("restore needs an empty selection");
        boolean useStored = state != null && state.costs().size() == transcript.size();
        messages.addAll(transcript);
        if (useStored) {
            costs.addAll(state.costs());
            storedEmbeddings = state.embeddings();
        } else {
            for (int i = 0; i < transcript.size(); i++) costs.add(cost.applyAsInt(i));
        }
        if (systemCost != null) system(useStored ? state.systemCost() : systemCost.getAsInt());
        try {
            for (int i = 0; i < messages.size(); i++) accept(i);
        } finally {
            storedEmbeddings = List.of();
        }
        if (state != null && useStored && state.config().equals(config.stored()) && !state.selection().equals(selection())) {
            throw new IllegalStateException("chat memory '" + id + "': replaying the stored transcript selects "
                    + selection() + ", the store recorded " + state.selection() + " (policy code changed?)");
        }
    }
}
