package io.fdkvc.eval.synthetic;

import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyParams;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.PolicyTemplate;
import io.fdkvc.core.policy.fdkvc.FdkvcParams;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Builds the policies of an evaluation: every name validated against the registry, the FD-KVC
 * family (fdkvc, h2o-paper and the ablations: every policy whose parameters are FD-KVC's) starting
 * from the base parameters (tuned or the spec's), and the user's parameters distributed by the one
 * rule of {@link PolicyParams}: each goes to every selected policy that has it and does not pin it
 * (e.g. beta for fdkvc-no-modulation keeps its pinned value: the pin is what the ablation is).
 * Errors are {@link ParameterException}s naming {@code policy}, {@code budget} or the parameter.
 */
public final class EvalPolicies {
    private EvalPolicies() {}

    /** Which FD-KVC parameters the family starts from. */
    public enum Defaults { TUNED, SPEC }

    public static boolean isFdkvcFamily(String name) {
        return PolicyRegistry.kind(name).defaults() instanceof FdkvcParams;
    }

    /**
     * @param names      registry names (duplicates refused)
     * @param userParams parameters for the selected policies (see the class comment)
     * @throws ParameterException naming {@code policy}, {@code budget} or the parameter
     */
    public static List<PolicySpec> build(List<String> names, int budget, Map<String, String> userParams, Defaults defaults) {
        if (names.isEmpty()) throw new ParameterException("policy", "at least one policy is needed");
        LinkedHashSet<String> unique = new LinkedHashSet<>();
        List<PolicyRegistry.Kind> kinds = new ArrayList<>();
        for (String n : names) {
            kinds.add(PolicyRegistry.kind(n));
            if (!unique.add(n)) throw new ParameterException("policy", "'" + n + "' is given twice");
        }
        List<Map<String, Object>> given = PolicyParams.distribute(kinds, userParams);
        Map<String, Object> base = defaults == Defaults.TUNED ? TunedDefaults.FDKVC : Map.of();
        List<PolicySpec> out = new ArrayList<>();
        for (int i = 0; i < kinds.size(); i++) {
            PolicyRegistry.Kind k = kinds.get(i);
            Map<String, Object> params = new LinkedHashMap<>();
            if (isFdkvcFamily(k.name())) {
                for (Map.Entry<String, Object> e : base.entrySet()) {
                    if (PolicyParams.takes(k, e.getKey())) params.put(e.getKey(), e.getValue());
                }
            }
            params.putAll(given.get(i));
            PolicyTemplate t = PolicyRegistry.template(k.name(), params); // names a bad parameter
            Limits.check("budget", budget, 1, Limits.MAX_BUDGET);
            try {
                out.add(t.spec(budget));
            } catch (ParameterException e) { // what depends on the budget, e.g. streaming's sinks < budget
                throw new InputException("policy " + k.name() + " at budget " + budget + ": " + e.getMessage(), e);
            }
        }
        return out;
    }
}
