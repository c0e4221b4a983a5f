package io.fdkvc.cli.engine;

import io.fdkvc.cli.PolicyOptions;
import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LlamaConfig;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.tensor.Parallel;
import java.nio.file.Path;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What every engine command (generate, chat, bench) shares about loading and running a model:
 * the llama2.c tokenizer file, the cache policy, threads, prefill chunk, turn chunking and RoPE
 * positions.
 */
public final class EngineOptions {
    @Option(names = "--tokenizer", paramLabel = "FILE", description = "llama2.c tokenizer file (for a .bin model)")
    public Path tokenizer;

    @Mixin
    public PolicyOptions policy;

    @Option(names = "--max-turn-tokens", paramLabel = "N", defaultValue = "512",
            description = "tokens a turn may add before the policy runs; a longer turn is processed in chunks of N, "
                    + "each counted as a turn (cache memory: budget + N entries per stream); default: ${DEFAULT-VALUE}")
    public int maxTurnTokens;

    @Option(names = "--positions", paramLabel = "MODE", defaultValue = PositionMode.DEFAULT_LABEL,
            description = "RoPE position of a cached entry: 'original' (its true position), 'cache' (its slot in the "
                    + "bounded stream: every distance stays below budget + turn) or 'auto' (original while the conversation "
                    + "is within the model's trained context, cache after); default: ${DEFAULT-VALUE} "
                    + "(docs/fidelity.md measures what each costs the model)")
    public String positions;

    @Option(names = "--threads", paramLabel = "N",
            description = "threads of the forward pass and the policy updates; default: all cores")
    public Integer threads;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "64",
            description = "prefill chunk: prompt tokens processed together as a matrix; default: ${DEFAULT-VALUE}")
    public int batch;

    /** Opens {@code model} (GGUF, or a llama2.c checkpoint with --tokenizer): see {@link ModelFiles#load}. */
    public LoadedModel load(Path model) {
        return ModelFiles.load(model, tokenizer);
    }

    public int threads() {
        int t = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
        Limits.check("--threads", t, 1, Limits.MAX_THREADS);
        return t;
    }

    /**
     * Checks every engine option against its documented range (docs/limits.md), before the model
     * is opened: cheap, and nothing is allocated from an unchecked value.
     */
    public void validate() {
        threads();
        Limits.check("--batch", batch, 1, Limits.MAX_BATCH);
        Limits.check("--max-turn-tokens", maxTurnTokens, 1, Limits.MAX_TURN_TOKENS);
        Limits.check("--budget", policy.budget, 1, Limits.MAX_BUDGET);
        positionMode();
    }

    /**
     * Refuses a cache the JVM could not hold: keys and values of every (layer, KV head) stream at
     * its capacity (budget + max-turn-tokens; full starts at max-turn-tokens and grows), plus the
     * turn's query rows, all float32.
     */
    public void checkCacheMemory(LoadedModel m, PolicySpec spec) {
        var c = m.config();
        double streams = (double) c.layers() * c.kvHeads();
        double entries = spec.newPolicy().unbounded() ? maxTurnTokens : (double) spec.budget() + maxTurnTokens;
        double bytes = streams * (entries * 2 * c.headDim() * 4 + (double) maxTurnTokens * c.headDim() * 4);
        Limits.checkMemory("--budget " + spec.budget() + " with --max-turn-tokens " + maxTurnTokens + ": the KV cache", bytes);
    }

    public PositionMode positionMode() {
        return PositionMode.parse(positions);
    }

    /**
     * The context of a run whose conversations use {@code spec}, in llama.cpp's sense (its
     * {@code n_ctx}): the span of RoPE positions a conversation can reach. Where cached entries keep
     * their original positions ({@code original}, {@code auto}), or a growing policy keeps every
     * entry, that is the model's trained context (llama.cpp's default context); where they take
     * their slot in a bounded stream ({@code cache} with a budget), the stream's capacity, budget +
     * --max-turn-tokens. It decides LongRoPE's short or long factors ({@link LlamaConfig#forContext}).
     */
    public int context(LoadedModel m, PolicySpec spec) {
        if (positionMode() != PositionMode.CACHE || spec.newPolicy().unbounded()) return m.config().contextLength();
        return spec.budget() + maxTurnTokens;
    }

    /** The forward pass at the {@link #context} of this run's own policy (bench, generate, chat). */
    public Llama newModel(LoadedModel m) {
        return newModel(m, context(m, policy.spec()));
    }

    /**
     * Validates the options, sets the shared pool's threads and builds the forward pass for a run at
     * {@code context} tokens ({@link #context}).
     */
    public Llama newModel(LoadedModel m, int context) {
        validate();
        int t = threads();
        Parallel.setThreads(t);
        Llama llama = new Llama(m.config().forContext(context), m.weights(), batch, t);
        // once per conversation, e.g. --positions original past the trained context
        llama.onWarning(message -> System.err.println("fdkvc: warning: " + message));
        return llama;
    }

    public KvCache newCache(Llama llama, PolicySpec spec) {
        return llama.newCache(spec, maxTurnTokens, positionMode());
    }

    /** A conversation on {@code llama} over a cache bounded by {@code spec}. */
    public Session newSession(Llama llama, PolicySpec spec) {
        return new Session(llama, newCache(llama, spec));
    }
}
