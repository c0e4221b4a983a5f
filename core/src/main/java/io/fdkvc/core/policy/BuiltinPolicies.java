package io.fdkvc.core.policy;

import io.fdkvc.core.policy.PolicyRegistry.Factory;
import io.fdkvc.core.policy.PolicyRegistry.Kind;
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
import io.fdkvc.core.policy.dialogue.DialogueParams;
import io.fdkvc.core.policy.dialogue.DialoguePolicy;
import io.fdkvc.core.policy.fdkvc.FdkvcParams;
import io.fdkvc.core.policy.fdkvc.FdkvcPolicy;
import io.fdkvc.core.policy.fidelity.FidelityParams;
import io.fdkvc.core.policy.fidelity.FidelityPolicy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The policies {@code core} ships: the spec's policies, the paper's degenerate "H2O" and the
 * FD-KVC ablations. An ablation is FD-KVC with some parameters pinned (spec, "Special cases").
 * Always first in the registry; other providers come through {@link java.util.ServiceLoader}.
 */
public final class BuiltinPolicies implements PolicyProvider {
    @Override
    public List<Kind> kinds() {
        Factory fdkvc = (n, b, p) -> new FdkvcPolicy(n, b, (FdkvcParams) p);
        return List.of(
                new Kind("fdkvc", "FD-KVC (paper mode by default): two-channel ownership, adaptive rate, threshold + budget eviction, eq. 9 modulation",
                        FdkvcParams.DEFAULTS, Map.of(), fdkvc),
                new Kind("full", "never evicts (fidelity reference; unbounded memory)", NoParams.INSTANCE, Map.of(),
                        (n, b, p) -> new FullPolicy(n, b)),
                new Kind("window", "the budget most recent entries", NoParams.INSTANCE, Map.of(), (n, b, p) -> new WindowPolicy(n, b)),
                new Kind("streaming", "StreamingLLM: sink entries plus the most recent", StreamingParams.DEFAULTS, Map.of(),
                        (n, b, p) -> new StreamingPolicy(n, b, (StreamingParams) p)),
                new Kind("h2o", "reference H2O: accumulated attention of every query row, half the budget kept for recent entries",
                        NoParams.INSTANCE, Map.of(), (n, b, p) -> new H2oPolicy(n, b)),
                new Kind("tova", "TOVA: the last query row's attention, the turn's entries kept first", NoParams.INSTANCE, Map.of(),
                        (n, b, p) -> new TovaPolicy(n, b)),
                new Kind("snapkv", "SnapKV: attention of the last query rows, max-pooled", SnapKvParams.DEFAULTS, Map.of(),
                        (n, b, p) -> new SnapKvPolicy(n, b, (SnapKvParams) p)),
                new Kind("random", "a seeded uniform choice", RandomParams.DEFAULTS, Map.of(),
                        (n, b, p) -> new RandomPolicy(n, b, (RandomParams) p)),
                new Kind("h2o-paper", "the paper's H2O: FD-KVC with wc=1, wrho=0, beta=0, tau=0 (cumulative attention only)",
                        FdkvcParams.DEFAULTS, ordered("wc", 1.0, "wrho", 0.0, "beta", 0.0, "tau", 0.0), fdkvc),
                new Kind("fdkvc-no-decay", "ablation: gamma=1", FdkvcParams.DEFAULTS, ordered("gamma", 1.0), fdkvc),
                new Kind("fdkvc-no-reinforce", "ablation: alpha0=0", FdkvcParams.DEFAULTS, ordered("alpha0", 0.0), fdkvc),
                new Kind("fdkvc-fixed-lr", "ablation: mu=0", FdkvcParams.DEFAULTS, ordered("mu", 0.0), fdkvc),
                new Kind("fdkvc-no-modulation", "ablation: beta=0", FdkvcParams.DEFAULTS, ordered("beta", 0.0), fdkvc),
                new Kind("fdkvc-no-threshold", "ablation: tau=0", FdkvcParams.DEFAULTS, ordered("tau", 0.0), fdkvc),
                new Kind("fdkvc-dialogue", "conversation memory: recent share protected, decayed attention + lexical relevance, "
                        + "novelty (latest mention of names and numbers), speaker; see docs/evaluation-dialogues.md",
                        DialogueParams.DEFAULTS, Map.of(), (n, b, p) -> new DialoguePolicy(n, b, (DialogueParams) p)),
                new Kind("fdkvc-fidelity", "FD-KVC's two channels on the model's own attention (decayed cumulative attention + the "
                        + "observation window's), with sinks and a recent share: least drift from the full cache; see docs/fidelity.md",
                        FidelityParams.DEFAULTS, Map.of(), (n, b, p) -> new FidelityPolicy(n, b, (FidelityParams) p)),
                new Kind("fdkvc-recency-only", "ablation: wc=0, wrho=1", FdkvcParams.DEFAULTS, ordered("wc", 0.0, "wrho", 1.0), fdkvc));
    }

    private static Map<String, Object> ordered(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }
}
