package io.fdkvc.langchain4j;

import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.DefaultChatRequestParameters;
import io.fdkvc.core.InputException;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.chat.LocalChat;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What {@link FdkvcChatModel} and {@link FdkvcStreamingChatModel} share: the GGUF model, the KV
 * cache policy and its budget, the engine's options and the default sampling options (each
 * request's {@code ChatRequestParameters} override them).
 *
 * @param <B> the concrete builder
 */
public abstract class FdkvcModelBuilder<B extends FdkvcModelBuilder<B>> {
    /** Reply tokens when neither the builder nor the request sets {@code maxOutputTokens}. */
    public static final int DEFAULT_MAX_OUTPUT_TOKENS = 256;

    private Path modelPath;
    private String policy = "fdkvc";
    private final Map<String, Object> parameters = new LinkedHashMap<>();
    private int cacheBudget = 256;
    private int maxTurnTokens = 512;
    private PositionMode positions = PositionMode.CACHE;
    private String template;
    private int threads = Runtime.getRuntime().availableProcessors();
    private int batch = 64;
    private int maxConversations = 8;
    private long seed;
    private Double temperature = 0.0;
    private Double topP = 1.0;
    private Integer maxOutputTokens = DEFAULT_MAX_OUTPUT_TOKENS;
    private List<String> stopSequences = List.of();

    FdkvcModelBuilder() {}

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

    /** RoPE position of a cached entry (default {@link PositionMode#CACHE}). */
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

    /** Default sampling temperature, 0 for greedy (default 0). */
    public B temperature(double temperature) {
        this.temperature = temperature;
        return self();
    }

    /** Default nucleus mass in (0, 1] (default 1). */
    public B topP(double topP) {
        this.topP = topP;
        return self();
    }

    /** Default most reply tokens (default {@value #DEFAULT_MAX_OUTPUT_TOKENS}). */
    public B maxOutputTokens(int tokens) {
        this.maxOutputTokens = tokens;
        return self();
    }

    /** Default texts that end a reply, besides the chat format's own. */
    public B stopSequences(List<String> stops) {
        this.stopSequences = List.copyOf(stops);
        return self();
    }

    ChatRequestParameters defaults() {
        return DefaultChatRequestParameters.builder().temperature(temperature).topP(topP).maxOutputTokens(maxOutputTokens)
                .stopSequences(stopSequences).build();
    }

    /**
     * Validates everything, then loads the model.
     *
     * @throws InputException naming the option or the file at fault
     */
    LocalChatEngine engine() {
        LocalChat.Options options = new LocalChat.Options(modelPath, policy, parameters, cacheBudget, maxTurnTokens, positions, template,
                threads, batch, maxConversations);
        LocalChatEngine.params(defaults(), seed); // the default sampling options are checked now, not at the first request
        LocalChat chat = LocalChat.open(options, warning -> System.getLogger("io.fdkvc.langchain4j").log(System.Logger.Level.WARNING, warning));
        return new LocalChatEngine(chat, seed);
    }
}
