package io.fdkvc.eval.synthetic;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParamBinder;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.fdkvc.FdkvcParams;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Builds the policies of an evaluation: every name validated against the registry, and the
 * FD-KVC family (fdkvc, h2o-paper and the ablations: every policy whose parameters are FD-KVC's)
 * given the base parameters (tuned or the spec's) plus the user's {@code -p} values. A parameter
 * that a policy's definition pins (e.g. beta for fdkvc-no-modulation) keeps its pinned value for
 * that policy: the pin is what the ablation is.
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
     * @param userParams -p NAME=VALUE for the FD-KVC family
     * @throws InputException naming {@code --policy} or {@code -p}
     */
    public static List<PolicySpec> build(List<String> names, int budget, Map<String, String> userParams, Defaults defaults) {
        if (names.isEmpty()) throw new InputException("--policy: at least one policy is needed");
        LinkedHashSet<String> unique = new LinkedHashSet<>();
        for (String n : names) {
            try {
                PolicyRegistry.kind(n);
            } catch (ParameterException e) {
                throw new InputException("--policy: unknown policy '" + n + "' (known: " + String.join(", ", PolicyRegistry.names()) + ")");
            }
            if (!unique.add(n)) throw new InputException("--policy: '" + n + "' is given twice");
        }
        Map<String, Object> base = new LinkedHashMap<>(defaults == Defaults.TUNED ? TunedDefaults.FDKVC : Map.of());
        base.putAll(userParams);
        boolean anyFamily = unique.stream().anyMatch(EvalPolicies::isFdkvcFamily);
        if (!userParams.isEmpty() && !anyFamily) {
            throw new InputException("-p: parameters apply to the FD-KVC family (fdkvc, h2o-paper, fdkvc-*), and none is selected");
        }
        try {
            ParamBinder.bind(FdkvcParams.DEFAULTS, base); // names and ranges, once, before anything runs
        } catch (ParameterException e) {
            throw new InputException("-p " + e.getMessage(), e);
        }
        List<PolicySpec> out = new ArrayList<>();
        for (String n : unique) {
            Map<String, Object> params = new LinkedHashMap<>();
            if (isFdkvcFamily(n)) {
                Map<String, Object> pinned = PolicyRegistry.kind(n).pinned();
                for (Map.Entry<String, Object> e : base.entrySet()) {
                    if (!pinned.containsKey(e.getKey())) params.put(e.getKey(), e.getValue());
                }
            }
            try {
                out.add(PolicyRegistry.spec(n, budget, params));
            } catch (ParameterException e) {
                String opt = e.parameter().equals("budget") ? "--budget" : "--policy " + n;
                throw new InputException(opt + ": " + e.getMessage(), e);
            }
        }
        return out;
    }
}
