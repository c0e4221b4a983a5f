package io.fdkvc.spring.boot;

import io.fdkvc.core.param.ParameterException;
import io.fdkvc.memory.MemoryConfig;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * {@code fdkvc.memory.*}: the policy-chosen {@code ChatMemory}. Validated at start-up (a bad value
 * fails the application context with a message naming the property).
 */
@ConfigurationProperties(prefix = FdkvcMemoryProperties.PREFIX)
public class FdkvcMemoryProperties implements Validator {
    public static final String PREFIX = "fdkvc.memory";

    /** The most tokens the memory returns per conversation, system message included (required). */
    private Integer maxTokens;
    /** The registry name of the cache policy that chooses the messages (see {@code fdkvc policies}). */
    private String policy = "fdkvc-dialogue"; // MemoryConfig.DEFAULT_POLICY, as a literal for the configuration metadata
    /** The policy's parameters by name, as {@code fdkvc policies} lists them. */
    private Map<String, String> params = new LinkedHashMap<>();
    /** Attention temperature: the policy's attention logits are cosine / temperature. */
    private double temperature = 0.05; // MemoryConfig.DEFAULT_TEMPERATURE, as a literal for the configuration metadata
    /** Whether evicted messages that still fit the budget are readmitted. */
    private boolean packing = true;

    public Integer getMaxTokens() {
        return maxTokens;
    }

    public void setMaxTokens(Integer maxTokens) {
        this.maxTokens = maxTokens;
    }

    public String getPolicy() {
        return policy;
    }

    public void setPolicy(String policy) {
        this.policy = policy;
    }

    public Map<String, String> getParams() {
        return params;
    }

    public void setParams(Map<String, String> params) {
        this.params = params;
    }

    public double getTemperature() {
        return temperature;
    }

    public void setTemperature(double temperature) {
        this.temperature = temperature;
    }

    public boolean isPacking() {
        return packing;
    }

    public void setPacking(boolean packing) {
        this.packing = packing;
    }

    /** The memory's configuration; validated. */
    public MemoryConfig toConfig() {
        if (maxTokens == null) throw new ParameterException("maxTokens", "is required");
        return new MemoryConfig(policy, new LinkedHashMap<>(params), maxTokens, temperature, packing);
    }

    @Override
    public boolean supports(Class<?> type) {
        return FdkvcMemoryProperties.class.isAssignableFrom(type);
    }

    @Override
    public void validate(Object target, Errors errors) {
        try {
            ((FdkvcMemoryProperties) target).toConfig();
        } catch (ParameterException e) {
            String field = switch (e.parameter()) {
                case "maxTokens", "temperature", "policy", "packing" -> e.parameter();
                default -> "params[" + e.parameter() + "]";
            };
            String property = PREFIX + "." + switch (e.parameter()) {
                case "maxTokens" -> "max-tokens";
                case "temperature", "policy", "packing" -> e.parameter();
                default -> "params." + e.parameter();
            };
            errors.rejectValue(field, "invalid", property + ": " + e.problem());
        }
    }
}
