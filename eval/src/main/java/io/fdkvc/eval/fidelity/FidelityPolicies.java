package io.fdkvc.eval.fidelity;

import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyParams;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.PolicyTemplate;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.eval.synthetic.TunedDefaults;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The students of a fidelity run: the policies by name (every bounded registry policy, plus
 * {@value #TUNED}: FD-KVC at {@code eval}'s tuned defaults), each at every budget and positions
 * mode. {@code -p} follows the one rule of {@link PolicyParams} ({@value #TUNED} takes what
 * {@code fdkvc} takes). Errors are {@link ParameterException}s naming {@code policy},
 * {@code budget} or the parameter.
 */
public final class FidelityPolicies {
    /** FD-KVC with {@link TunedDefaults#FDKVC}, the synthetic benchmark's tuned parameters. */
    public static final String TUNED = "fdkvc-tuned";

    private FidelityPolicies() {}

    /** Every bounded registry policy (the registry's order), then {@value #TUNED}. */
    public static List<String> defaults() {
        List<String> out = new ArrayList<>();
        for (PolicyRegistry.Kind k : PolicyRegistry.kinds()) if (!unbounded(k)) out.add(k.name());
        out.add(TUNED);
        return out;
    }

    /** Whether the policy never evicts (an instance at its defaults says; no budget check applies to the question). */
    static boolean unbounded(PolicyRegistry.Kind k) {
        return k.factory().create(k.name(), 1 << 10, k.defaults()).unbounded();
    }

    public static List<Student> build(List<String> names, List<Integer> budgets, List<PositionMode> modes, Map<String, String> params) {
        if (names.isEmpty()) throw new ParameterException("policy", "at least one policy is needed");
        LinkedHashSet<String> unique = new LinkedHashSet<>();
        List<PolicyRegistry.Kind> kinds = new ArrayList<>();
        for (String n : names) {
            if (!unique.add(n)) throw new ParameterException("policy", "'" + n + "' is given twice");
            PolicyRegistry.Kind k = PolicyRegistry.kind(n.equals(TUNED) ? "fdkvc" : n);
            if (unbounded(k)) {
                throw new ParameterException("policy", "'" + n + "' is unbounded: the full cache is the reference every policy is measured against");
            }
            kinds.add(k);
        }
        List<Map<String, Object>> given = PolicyParams.distribute(kinds, params);
        List<PolicyTemplate> templates = new ArrayList<>();
        for (int i = 0; i < kinds.size(); i++) {
            Map<String, Object> p = new LinkedHashMap<>();
            if (names.get(i).equals(TUNED)) p.putAll(TunedDefaults.FDKVC);
            p.putAll(given.get(i));
            templates.add(PolicyRegistry.template(kinds.get(i).name(), p));
        }
        if (budgets.isEmpty()) throw new ParameterException("budget", "at least one budget is needed");
        if (new LinkedHashSet<>(budgets).size() != budgets.size()) throw new ParameterException("budget", "a budget is given twice");
        List<Student> out = new ArrayList<>();
        for (PositionMode mode : modes) {
            for (int b : budgets) {
                Limits.check("budget", b, 1, Limits.MAX_BUDGET);
                for (int i = 0; i < names.size(); i++) {
                    PolicySpec spec;
                    try {
                        spec = templates.get(i).spec(b);
                    } catch (ParameterException e) { // what depends on the budget, e.g. streaming's sinks < budget
                        throw new InputException("policy " + names.get(i) + " at budget " + b + ": " + e.getMessage(), e);
                    }
                    out.add(new Student(names.get(i), b, mode, spec));
                }
            }
        }
        return out;
    }
}
