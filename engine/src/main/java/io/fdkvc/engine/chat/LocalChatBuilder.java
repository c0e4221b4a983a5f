package io.fdkvc.engine.chat;

import io.fdkvc.engine.cache.PositionMode;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What the builders of the framework chat models (fdkvc-langchain4j's, fdkvc-spring-ai's) share:
 * the GGUF model, the KV cache policy and its budget, the engine's options and the sampler's seed,
 * as {@link LocalChat.Options}. Only {@code modelPath} is required.
 *
 * @param <B> the concrete builder
 */
public abstract class LocalChatBuilder<B extends LocalChatBuilder<B>> {
    private Path modelPath;
    private String policy = "fdkvc";
    private final Map<String, Object> parameters = new LinkedHashMap<>();
    private int cacheBudget = 256;
    private int maxTurnTokens = 512;
    private PositionMode positions = PositionMode.DEFAULT;
    private String template;
    private int threads = Runtime.getRuntime().availableProcessors();
    private int batch = 64;
    private int maxConversations = 8;
    private long seed;

    protected LocalChatBuilder() {}

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /** The GGUF model file (required). */
    public B modelPath(Path modelPath) {
        this.modelPath = Objects.requireNonNull(modelPath, "modelPath");
        return self();
    }

    /** The KV cache policy by registry name (default {@code fdkvc}); see {@code fdkvc policies}. */
    public B policy(String name) {
        this.policy = Objects.requireNonNull(name, "policy");
        return self();
    }

    /** One parameter of the cache policy. */
    public B policyParameter(String name, Object value) {
        parameters.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
        return self();
    }

    /** Entries (tokens) each KV stream keeps after a turn (default 256). */
    public B cacheBudget(int tokens) {
        this.cacheBudget = tokens;
        return self();
    }

    /** Tokens a turn may add before the policy runs; longer turns run in chunks (default 512). */
    public B maxTurnTokens(int tokens) {
        this.maxTurnTokens = tokens;
        return self();
    }

    /** RoPE position of a cached entry (default {@link PositionMode#DEFAULT}). */
    public B positions(PositionMode positions) {
        this.positions = Objects.requireNonNull(positions, "positions");
        return self();
    }

    /** The chat format by name ({@code chatml}, {@code llama3}, {@code llama2}, {@code plain}); default: detected from the model. */
    public B template(String name) {
        this.template = Objects.requireNonNull(name, "template");
        return self();
    }

    /** Threads of the forward pass (default: all cores; the engine's thread pool is shared by the JVM). */
    public B threads(int threads) {
        this.threads = threads;
        return self();
    }

    /** Prompt tokens processed together (default 64). */
    public B batch(int tokens) {
        this.batch = tokens;
        return self();
    }

    /** Conversations (each with its own cache) held at once; the least recently used goes first (default 8). */
    public B maxConversations(int n) {
        this.maxConversations = n;
        return self();
    }

    /** Seed of the sampler's random stream, the same for every request (default 0). */
    public B seed(long seed) {
        this.seed = seed;
        return self();
    }

    /**
     * The engine's options as set so far.
     *
     * @throws io.fdkvc.core.InputException naming the option or the file at fault
     */
    protected LocalChat.Options options() {
        return new LocalChat.Options(modelPath, policy, parameters, cacheBudget, maxTurnTokens, positions, template, threads, batch,
                maxConversations);
    }

    /** The sampler's seed. */
    protected long seed() {
        return seed;
    }
}
