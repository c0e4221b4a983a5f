package io.fdkvc.eval.dialogue;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicyParams;
import io.fdkvc.core.policy.PolicyTemplate;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What {@link DialogueEvaluation#run} evaluates, validated at construction: every bad value
 * raises a {@link ParameterException} naming the component (the command line maps it to its option). Null (or 0 for the counts)
 * selects the documented default.
 *
 * @param dataset        the corpus format and its questions
 * @param data           the gzipped JSON Lines file
 * @param policies       policy names (registry names, and {@link #TUNED}); default {@link #DEFAULT_POLICIES}
 * @param params         policy parameters ({@code -p NAME=VALUE}); each goes to every selected
 *                       policy that has the parameter and does not pin it, and one that no
 *                       selected policy takes is refused
 * @param budgetTokens   the token budget of the headline results, the same for every dialogue;
 *                       default: {@link #DEFAULT_BUDGET_SHARE} of the median dialogue's tokens
 * @param sweepFractions budgets of the sweep, each a share of each dialogue's own tokens, in
 *                       [0.01, 1]; default {@link #DEFAULT_SWEEP}
 * @param temperature    attention temperature: logits = cosine / temperature; default {@link #DEFAULT_TEMPERATURE}
 * @param seed           seed of the dialogue sample and of the bootstrap
 * @param maxDialogues   evaluate a seeded sample of this many dialogues; 0 = all
 * @param embeddingCache directory of the embedding cache; default {@link EmbeddingCache#defaultDir()}
 * @param threads        worker threads for embedding and simulation; 0 = every core
 * @param packing        core's packing for every policy (readmit evicted utterances that still fit,
 *                       best-ranked first); false = the paper's plain eviction ({@code --no-packing})
 */
public record DialogueOptions(Dataset dataset, Path data, List<String> policies, Map<String, String> params,
                              Integer budgetTokens, List<Double> sweepFractions, double temperature, long seed,
                              int maxDialogues, Path embeddingCache, int threads, boolean packing) {

    /**
     * FD-KVC with the dialogue parameters tuned on the dataset's train split ({@link TunedParams});
     * not a registry name, and {@code -p} never changes its values.
     */
    public static final String TUNED = "fdkvc-tuned";
    /**
     * FD-KVC at the spec's defaults and as tuned, every baseline that fits a token budget, and the
     * paper's H2O; {@code full} is the ceiling. (streaming is left out: its sink utterances are
     * never evicted, so a token budget below their cost cannot be met; window is streaming
     * without sinks.)
     */
    public static final List<String> DEFAULT_POLICIES = List.of("fdkvc", TUNED, "fdkvc-dialogue", "h2o", "h2o-paper", "tova", "snapkv",
            "window", LangChain4jMemory.MESSAGE_WINDOW, LangChain4jMemory.TOKEN_WINDOW, FdkvcLangChain4jMemory.LABEL,
            SpringAiMemory.MESSAGE_WINDOW, SpringAiMemory.FDKVC, "random", "full");
    /** Rows that are chat memories (LangChain4j's, Spring AI's, fdkvc's adapters) rather than registry policies (no parameters, no packing). */
    public static final List<String> MEMORIES = List.of(LangChain4jMemory.MESSAGE_WINDOW, LangChain4jMemory.TOKEN_WINDOW,
            FdkvcLangChain4jMemory.LABEL, SpringAiMemory.MESSAGE_WINDOW, SpringAiMemory.FDKVC);
    /**
     * Default headline budget: 30% of the median dialogue's tokens (SGD dev: about five of its
     * eighteen utterances), tight enough that the policies must choose.
     */
    public static final double DEFAULT_BUDGET_SHARE = 0.3;
    public static final List<Double> DEFAULT_SWEEP = List.of(0.1, 0.2, 0.3, 0.4, 0.5);
    /**
     * Default temperature, fixed before any run (see docs/evaluation-dialogues.md): 0.05 is
     * the scale sentence-embedding models are trained with (contrastive loss at scale 20), so
     * cosine gaps of a few hundredths become clear attention preferences.
     */
    public static final double DEFAULT_TEMPERATURE = 0.05;
    public static final long DEFAULT_SEED = 1;

    public DialogueOptions {
        if (dataset == null) throw new ParameterException("dataset", "missing (sgd, tiage or multiwoz)");
        if (data == null) throw new ParameterException("data", "missing");
        if (!Files.isRegularFile(data)) throw new ParameterException("data", "no such file: " + data);
        policies = List.copyOf(policies == null || policies.isEmpty() ? DEFAULT_POLICIES : policies);
        Set<String> distinct = new HashSet<>();
        for (String p : policies) {
            if (!p.equals(TUNED) && !MEMORIES.contains(p)) PolicyRegistry.kind(p); // names --policy for an unknown name
            if (!distinct.add(p)) throw new ParameterException("policy", "'" + p + "' is given twice");
        }
        params = Map.copyOf(params == null ? Map.of() : params);
        if (budgetTokens != null && budgetTokens < 1) throw new ParameterException("budgetTokens", "must be >= 1, got " + budgetTokens);
        sweepFractions = List.copyOf(sweepFractions == null || sweepFractions.isEmpty() ? DEFAULT_SWEEP : sweepFractions);
        Set<Double> seen = new HashSet<>();
        for (double f : sweepFractions) {
            if (!(f >= 0.01 && f <= 1)) throw new ParameterException("sweep", "each budget share must be in [0.01, 1], got " + f);
            if (!seen.add(f)) throw new ParameterException("sweep", "share " + f + " is given twice");
        }
        if (!(temperature > 0) || Double.isInfinite(temperature)) throw new ParameterException("temperature", "must be > 0 and finite, got " + temperature);
        if (maxDialogues < 0) throw new ParameterException("maxDialogues", "must be >= 0 (0 = all), got " + maxDialogues);
        if (embeddingCache == null) embeddingCache = EmbeddingCache.defaultDir();
        if (threads < 0) throw new ParameterException("threads", "must be >= 0 (0 = every core), got " + threads);
        if (threads == 0) threads = Runtime.getRuntime().availableProcessors();
        // Bind every policy's parameters now, so that a bad value fails before any embedding work.
        List<PolicyRegistry.Kind> kinds = new ArrayList<>();
        for (String p : policies) if (!p.equals(TUNED) && !MEMORIES.contains(p)) kinds.add(PolicyRegistry.kind(p));
        PolicyParams.distribute(kinds, params); // the one rule: a parameter no selected policy takes is refused
        for (String p : policies) if (!MEMORIES.contains(p)) template(dataset, p, params);
    }

    /** Defaults for everything but the dataset and its file. */
    public static DialogueOptions defaults(Dataset dataset, Path data) {
        return new DialogueOptions(dataset, data, null, null, null, null, DEFAULT_TEMPERATURE, DEFAULT_SEED, 0, null, 0, true);
    }

    public DialogueOptions withPolicies(List<String> names, Map<String, String> parameters) {
        return new DialogueOptions(dataset, data, names, parameters, budgetTokens, sweepFractions, temperature, seed, maxDialogues, embeddingCache, threads, packing);
    }

    public DialogueOptions withBudgetTokens(Integer tokens) {
        return new DialogueOptions(dataset, data, policies, params, tokens, sweepFractions, temperature, seed, maxDialogues, embeddingCache, threads, packing);
    }

    public DialogueOptions withSweep(List<Double> fractions) {
        return new DialogueOptions(dataset, data, policies, params, budgetTokens, fractions, temperature, seed, maxDialogues, embeddingCache, threads, packing);
    }

    public DialogueOptions withTemperature(double t) {
        return new DialogueOptions(dataset, data, policies, params, budgetTokens, sweepFractions, t, seed, maxDialogues, embeddingCache, threads, packing);
    }

    public DialogueOptions withSeed(long s) {
        return new DialogueOptions(dataset, data, policies, params, budgetTokens, sweepFractions, temperature, s, maxDialogues, embeddingCache, threads, packing);
    }

    public DialogueOptions withMaxDialogues(int n) {
        return new DialogueOptions(dataset, data, policies, params, budgetTokens, sweepFractions, temperature, seed, n, embeddingCache, threads, packing);
    }

    public DialogueOptions withEmbeddingCache(Path dir) {
        return new DialogueOptions(dataset, data, policies, params, budgetTokens, sweepFractions, temperature, seed, maxDialogues, dir, threads, packing);
    }

    public DialogueOptions withThreads(int n) {
        return new DialogueOptions(dataset, data, policies, params, budgetTokens, sweepFractions, temperature, seed, maxDialogues, embeddingCache, n, packing);
    }

    public DialogueOptions withPacking(boolean on) {
        return new DialogueOptions(dataset, data, policies, params, budgetTokens, sweepFractions, temperature, seed, maxDialogues, embeddingCache, threads, on);
    }

    /** The parameters {@code -p} gives to {@code policy}: those it has and does not pin. */
    public Map<String, String> paramsOf(String policy) {
        return policy.equals(TUNED) || MEMORIES.contains(policy) ? Map.of() : paramsOf(policy, params);
    }

    /**
     * {@code policy} with its parameters validated and no budget yet: the evaluation makes one
     * spec per dialogue budget from it ({@link PolicyTemplate#spec}).
     */
    public PolicyTemplate template(String policy) {
        return template(dataset, policy, params);
    }

    private static PolicyTemplate template(Dataset dataset, String policy, Map<String, String> params) {
        if (policy.equals(TUNED)) return PolicyRegistry.template("fdkvc", TunedParams.of(dataset));
        return PolicyRegistry.template(policy, paramsOf(policy, params));
    }

    private static Map<String, String> paramsOf(String policy, Map<String, String> params) {
        PolicyRegistry.Kind k = PolicyRegistry.kind(policy);
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : params.entrySet()) {
            if (PolicyParams.takes(k, e.getKey())) out.put(e.getKey(), e.getValue());
        }
        return out;
    }

}
