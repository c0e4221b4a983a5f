package io.fdkvc.memory;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What a policy-chosen chat memory's selection depends on, validated on construction.
 *
 * @param policy      the registry name of the policy (see {@code fdkvc policies})
 * @param parameters  policy parameters by name, as {@code fdkvc policies} lists them
 * @param maxTokens   the most tokens the shown messages hold, system message included
 * @param temperature the policy's attention logits are cosine / temperature
 * @param packing     whether evicted messages that still fit are readmitted (and the budget that
 *                    the conventions free is refilled from the transcript)
 */
public record MemoryConfig(String policy, Map<String, Object> parameters, int maxTokens, double temperature, boolean packing) {
    /** The policy used when none is named. */
    public static final String DEFAULT_POLICY = "fdkvc-dialogue";
    /**
     * Attention temperature when none is set: the evaluation's default
     * ({@code DialogueOptions.DEFAULT_TEMPERATURE}).
     */
    public static final double DEFAULT_TEMPERATURE = 0.05;

    /**
     * @throws InputException naming {@code maxTokens}, {@code temperature}, the policy or the
     *                        parameter that is invalid
     */
    public MemoryConfig {
        Objects.requireNonNull(policy, "policy");
        parameters = Map.copyOf(parameters);
        if (maxTokens < 1) throw new ParameterException("maxTokens", "must be >= 1, got " + maxTokens);
        if (!(temperature > 0) || Double.isInfinite(temperature)) {
            throw new ParameterException("temperature", "must be > 0 and finite, got " + temperature);
        }
        PolicyRegistry.spec(policy, maxTokens, parameters); // fail here, not at the first message
    }

    /** This configuration as the stored state records it (parameters with their defaults, as text). */
    MemoryState.Config stored() {
        Map<String, Object> values = PolicyRegistry.spec(policy, maxTokens, parameters).parameterValues();
        Map<String, String> params = new LinkedHashMap<>();
        values.forEach((k, v) -> params.put(k, String.valueOf(v)));
        return new MemoryState.Config(policy, params, maxTokens, temperature, packing);
    }
}
