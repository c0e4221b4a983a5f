package io.fdkvc.core.policy;

import io.fdkvc.core.param.ParamBinder;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.baseline.FullPolicy;
import io.fdkvc.core.policy.baseline.H2oPolicy;
import io.fdkvc.core.policy.baseline.NoParams;
import io.fdkvc.core.policy.baseline.RandomParams;
import io.fdkvc.core.policy.baseline.RandomPolicy;
import io.fdkvc.core.policy.baseline.SnapKvParams;
import io.fdkvc.core.policy.baseline.SnapKvPolicy;
import io.fdkvc.core.policy.baseline.StreamingParams;
import io.fdkvc.core.policy.baseline.StreamingPolicy;
import io.fdkvc.core.policy.baseline.TovaPolicy;
import io.fdkvc.core.policy.baseline.WindowPolicy;
import io.fdkvc.core.policy.fdkvc.FdkvcParams;
import io.fdkvc.core.policy.fdkvc.FdkvcPolicy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every policy by name: the spec's policies, the paper's degenerate "H2O" and the FD-KVC
 * ablations. An ablation is FD-KVC with some parameters pinned (spec, "Special cases").
 */
public final class PolicyRegistry {

    /** Creates one per-stream instance from a validated parameter record. */
    @FunctionalInterface
    public interface Factory {
        Policy create(String name, int budget, Record params);
    }

    /**
     * One registered policy: its defaults (the parameter record), the parameters its definition
     * pins, and its factory.
     */
    public record Kind(String name, String description, Record defaults, Map<String, Object> pinned, Factory factory) {
        public Kind {
            pinned = Collections.unmodifiableMap(new LinkedHashMap<>(pinned));
        }
    }

    private static final Map<String, Kind> KINDS = new LinkedHashMap<>();

    static {
        Factory fdkvc = (n, b, p) -> new FdkvcPolicy(n, b, (FdkvcParams) p);
        register("fdkvc", "FD-KVC (paper mode by default): two-channel ownership, adaptive rate, threshold + budget eviction, eq. 9 modulation",
                FdkvcParams.DEFAULTS, Map.of(), fdkvc);
        register("full", "never evicts (fidelity reference; unbounded memory)", NoParams.INSTANCE, Map.of(),
                (n, b, p) -> new FullPolicy(n, b));
        register("window", "the budget most recent entries", NoParams.INSTANCE, Map.of(), (n, b, p) -> new WindowPolicy(n, b));
        register("streaming", "StreamingLLM: sink entries plus the most recent", StreamingParams.DEFAULTS, Map.of(),
                (n, b, p) -> new StreamingPolicy(n, b, (StreamingParams) p));
        register("h2o", "reference H2O: accumulated attention of every query row, half the budget kept for recent entries",
                NoParams.INSTANCE, Map.of(), (n, b, p) -> new H2oPolicy(n, b));
        register("tova", "TOVA: the last query row's attention, the turn's entries kept first", NoParams.INSTANCE, Map.of(),
                (n, b, p) -> new TovaPolicy(n, b));
        register("snapkv", "SnapKV: attention of the last query rows, max-pooled", SnapKvParams.DEFAULTS, Map.of(),
                (n, b, p) -> new SnapKvPolicy(n, b, (SnapKvParams) p));
        register("random", "a seeded uniform choice", RandomParams.DEFAULTS, Map.of(),
                (n, b, p) -> new RandomPolicy(n, b, (RandomParams) p));
        register("h2o-paper", "the paper's H2O: FD-KVC with wc=1, wrho=0, beta=0, tau=0 (cumulative attention only)",
                FdkvcParams.DEFAULTS, ordered("wc", 1.0, "wrho", 0.0, "beta", 0.0, "tau", 0.0), fdkvc);
        register("fdkvc-no-decay", "ablation: gamma=1", FdkvcParams.DEFAULTS, ordered("gamma", 1.0), fdkvc);
        register("fdkvc-no-reinforce", "ablation: alpha0=0", FdkvcParams.DEFAULTS, ordered("alpha0", 0.0), fdkvc);
        register("fdkvc-fixed-lr", "ablation: mu=0", FdkvcParams.DEFAULTS, ordered("mu", 0.0), fdkvc);
        register("fdkvc-no-modulation", "ablation: beta=0", FdkvcParams.DEFAULTS, ordered("beta", 0.0), fdkvc);
        register("fdkvc-no-threshold", "ablation: tau=0", FdkvcParams.DEFAULTS, ordered("tau", 0.0), fdkvc);
        register("fdkvc-dialogue", "conversation memory: recent share protected, decayed attention + relevance, novelty (latest mention of its words), speaker; see docs/evaluation-dialogues.md", io.fdkvc.core.policy.dialogue.DialogueParams.DEFAULTS, Map.of(), (n, b, p) -> new io.fdkvc.core.policy.dialogue.DialoguePolicy(n, b, (io.fdkvc.core.policy.dialogue.DialogueParams) p));
        register("fdkvc-recency-only", "ablation: wc=0, wrho=1", FdkvcParams.DEFAULTS, ordered("wc", 0.0, "wrho", 1.0), fdkvc);
    }

    private PolicyRegistry() {}

    private static Map<String, Object> ordered(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    private static void register(String name, String description, Record defaults, Map<String, Object> pinned, Factory f) {
        KINDS.put(name, new Kind(name, description, defaults, pinned, f));
    }

    /** All policy names, in registry order. */
    public static List<String> names() {
        return new ArrayList<>(KINDS.keySet());
    }

    public static List<Kind> kinds() {
        return new ArrayList<>(KINDS.values());
    }

    /** @throws ParameterException naming {@code policy} for an unknown name */
    public static Kind kind(String name) {
        Kind k = KINDS.get(name);
        if (k == null) {
            throw new ParameterException("policy", "unknown policy '" + name + "' (known: " + String.join(", ", names()) + ")");
        }
        return k;
    }

    /** A validated spec with every parameter at its default. */
    public static PolicySpec spec(String name, int budget) {
        return spec(name, budget, Map.of());
    }

    /**
     * A validated spec: the policy's defaults, its pinned values, then {@code params}. A value
     * that contradicts a pinned one is refused rather than silently overridden.
     *
     * @throws ParameterException naming the offending parameter
     */
    public static PolicySpec spec(String name, int budget, Map<String, ?> params) {
        Kind k = kind(name);
        Map<String, Object> values = new LinkedHashMap<>(k.pinned());
        for (Map.Entry<String, ?> e : params.entrySet()) {
            Object pinned = k.pinned().get(e.getKey());
            if (pinned != null) {
                Object given = e.getValue();
                double g;
                try {
                    g = given instanceof Number n ? n.doubleValue() : Double.parseDouble(String.valueOf(given).trim());
                } catch (NumberFormatException ex) {
                    throw new ParameterException(e.getKey(), "must be a number, got '" + given + "'");
                }
                if (g != ((Number) pinned).doubleValue()) {
                    throw new ParameterException(e.getKey(), "is fixed at " + pinned + " by policy '" + name + "', got " + given);
                }
            }
            values.put(e.getKey(), e.getValue());
        }
        Record bound = ParamBinder.bind(k.defaults(), values);
        PolicySpec spec = new PolicySpec(name, budget, bound, k);
        spec.newPolicy(); // constructors validate what depends on the budget (e.g. sinks < budget)
        return spec;
    }
}
