package io.fdkvc.memory;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What the builders of fdkvc's chat memories (LangChain4j's, Spring AI's) share: the
 * {@link MemoryConfig} options, validated by {@link #config()}. Only {@code maxTokens} is required.
 *
 * @param <B> the concrete builder
 */
public abstract class MemoryBuilder<B extends MemoryBuilder<B>> {
    private int maxTokens;
    private String policy = MemoryConfig.DEFAULT_POLICY;
    private final Map<String, Object> parameters = new LinkedHashMap<>();
    private double temperature = MemoryConfig.DEFAULT_TEMPERATURE;
    private boolean packing = true;

    protected MemoryBuilder() {}

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /** The most tokens the memory shows (per conversation), system message included (required). */
    public B maxTokens(int maxTokens) {
        this.maxTokens = maxTokens;
        return self();
    }

    /** The registry name of the policy (default {@value MemoryConfig#DEFAULT_POLICY}); see {@code fdkvc policies}. */
    public B policy(String name) {
        this.policy = Objects.requireNonNull(name, "policy");
        return self();
    }

    /** One policy parameter (name as {@code fdkvc policies} lists it); validated when the memory is built. */
    public B policyParameter(String name, Object value) {
        parameters.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
        return self();
    }

    /** Policy parameters by name, added to those already set. */
    public B policyParameters(Map<String, ?> values) {
        values.forEach(this::policyParameter);
        return self();
    }

    /** Attention temperature: the policy's attention logits are cosine / temperature (default {@value MemoryConfig#DEFAULT_TEMPERATURE}). */
    public B temperature(double temperature) {
        this.temperature = temperature;
        return self();
    }

    /**
     * Whether the policy readmits evicted messages that still fit the budget, best-ranked first
     * (core's shared packing; default on). Off: the paper's plain eviction.
     */
    public B packing(boolean on) {
        this.packing = on;
        return self();
    }

    /**
     * The configuration set so far.
     *
     * @throws io.fdkvc.core.InputException naming {@code maxTokens}, {@code temperature}, the
     *                                      policy or the parameter that is invalid
     */
    protected MemoryConfig config() {
        return new MemoryConfig(policy, parameters, maxTokens, temperature, packing);
    }
}
