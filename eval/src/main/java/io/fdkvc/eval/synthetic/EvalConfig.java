package io.fdkvc.eval.synthetic;

import io.fdkvc.core.Limits;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicySpec;
import java.util.HashSet;
import java.util.List;

/**
 * One synthetic evaluation: the generator, the scenarios, dialogues per scenario, the policies
 * (validated specs), the run seed and the worker threads. Errors name the component.
 */
public record EvalConfig(GeneratorConfig generator, List<Scenario> scenarios, int dialogues,
                         List<PolicySpec> policies, long seed, int threads) {

    /** The evaluation's default seed; {@code fdkvc tune} refuses it. */
    public static final long DEFAULT_SEED = 1;
    public static final int DEFAULT_DIALOGUES = 120;
    /** Most per-turn curve values a run keeps (8 bytes each: about 400 MB). */
    public static final long MAX_CURVE_CELLS = 50_000_000L;

    public EvalConfig {
        scenarios = List.copyOf(scenarios);
        policies = List.copyOf(policies);
        if (scenarios.isEmpty()) throw new ParameterException("scenario", "at least one scenario is needed");
        if (new HashSet<>(scenarios).size() != scenarios.size()) throw new ParameterException("scenario", "a scenario is given twice");
        if (policies.isEmpty()) throw new ParameterException("policy", "at least one policy is needed");
        if (dialogues < 1) throw new ParameterException("dialogues", "must be >= 1, got " + dialogues);
        // the per-turn curves keep 3 doubles per (scenario, policy, dialogue, turn)
        long cells = 3L * scenarios.size() * policies.size() * dialogues * generator.turns();
        if (cells > MAX_CURVE_CELLS) {
            throw new ParameterException("dialogues", dialogues + " dialogues x " + generator.turns() + " turns x " + policies.size()
                    + " policies x " + scenarios.size() + " scenarios is more than the run keeps in memory; use fewer dialogues");
        }
        Limits.check("threads", threads, 1, Limits.MAX_THREADS);
        for (PolicySpec p : policies) {
            if (p.budget() != generator.budget()) {
                throw new IllegalArgumentException("policy " + p.name() + " has budget " + p.budget() + ", the generator " + generator.budget());
            }
        }
    }

    public int policyIndex(String name) {
        for (int i = 0; i < policies.size(); i++) if (policies.get(i).name().equals(name)) return i;
        return -1;
    }

    public int scenarioIndex(Scenario s) {
        return scenarios.indexOf(s);
    }
}
