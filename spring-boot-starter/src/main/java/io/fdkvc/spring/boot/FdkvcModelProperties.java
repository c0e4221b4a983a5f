package io.fdkvc.spring.boot;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code fdkvc.model.*}: the in-process {@code ChatModel}, configured when {@code fdkvc.model.path} is set. */
@ConfigurationProperties(prefix = "fdkvc.model")
public class FdkvcModelProperties {
    /** The GGUF model file; setting it makes the fdkvc ChatModel bean. */
    private Path path;
    /** The KV cache policy by registry name. */
    private String policy = "fdkvc";
    /** The KV cache policy's parameters by name. */
    private Map<String, String> params = new LinkedHashMap<>();
    /** Entries (tokens) each KV stream keeps after a turn. */
    private int cacheBudget = 256;
    /** Tokens a turn may add before the policy runs; longer turns run in chunks. */
    private int maxTurnTokens = 512;
    /** The chat format by name (chatml, llama3, llama2, plain); unset: detected from the model. */
    private String template;
    /** Threads of the forward pass; unset: all cores. */
    private Integer threads;
    /** Conversations (each with its own cache) held at once. */
    private int maxConversations = 8;
    /** Seed of the sampler's random stream. */
    private long seed;
    /** Default sampling temperature, 0 for greedy. */
    private double temperature;
    /** Default nucleus mass in (0, 1]. */
    private double topP = 1;
    /** Default most reply tokens. */
    private int maxTokens = 256;
    /** Default texts that end a reply, besides the chat format's own. */
    private List<String> stopSequences = List.of();

    public Path getPath() { return path; }
    public void setPath(Path path) { this.path = path; }
    public String getPolicy() { return policy; }
    public void setPolicy(String policy) { this.policy = policy; }
    public Map<String, String> getParams() { return params; }
    public void setParams(Map<String, String> params) { this.params = params; }
    public int getCacheBudget() { return cacheBudget; }
    public void setCacheBudget(int cacheBudget) { this.cacheBudget = cacheBudget; }
    public int getMaxTurnTokens() { return maxTurnTokens; }
    public void setMaxTurnTokens(int maxTurnTokens) { this.maxTurnTokens = maxTurnTokens; }
    public String getTemplate() { return template; }
    public void setTemplate(String template) { this.template = template; }
    public Integer getThreads() { return threads; }
    public void setThreads(Integer threads) { this.threads = threads; }
    public int getMaxConversations() { return maxConversations; }
    public void setMaxConversations(int maxConversations) { this.maxConversations = maxConversations; }
    public long getSeed() { return seed; }
    public void setSeed(long seed) { this.seed = seed; }
    public double getTemperature() { return temperature; }
    public void setTemperature(double temperature) { this.temperature = temperature; }
    public double getTopP() { return topP; }
    public void setTopP(double topP) { this.topP = topP; }
    public int getMaxTokens() { return maxTokens; }
    public void setMaxTokens(int maxTokens) { this.maxTokens = maxTokens; }
    public List<String> getStopSequences() { return stopSequences; }
    public void setStopSequences(List<String> stopSequences) { this.stopSequences = stopSequences; }
}
