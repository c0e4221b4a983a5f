package io.fdkvc.core.policy;

import io.fdkvc.core.Limits;
import io.fdkvc.core.param.ParameterException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The one rule by which user-given policy parameters (the command line's {@code -p NAME=VALUE},
 * in every command) reach the selected policies: each parameter goes to every selected policy
 * that has a parameter of that name and does not pin it; a parameter that no selected policy
 * takes is refused, naming it and what the selected policies do take. Values are validated when
 * each policy binds them ({@link PolicyRegistry#template}).
 */
public final class PolicyParams {
    private PolicyParams() {}

    /**
     * The validated spec of one policy chosen by a user (the command line's {@code --policy},
     * {@code --budget} and {@code -p}; the server's per-conversation choice): the policy by name,
     * the budget in [1, {@link Limits#MAX_BUDGET}], the parameters by {@link #distribute}'s rule.
     *
     * @throws ParameterException naming {@code policy}, {@code budget} or the offending parameter
     */
    public static PolicySpec spec(String policy, int budget, Map<String, ?> given) {
        PolicyRegistry.Kind kind = PolicyRegistry.kind(policy);
        Map<String, Object> taken = distribute(List.of(kind), given).getFirst();
        Limits.check("budget", budget, 1, Limits.MAX_BUDGET);
        return PolicyRegistry.spec(policy, budget, taken);
    }

    /**
     * For each of {@code kinds} (in order), the parameters of {@code given} it takes.
     *
     * @throws ParameterException naming a parameter that none of {@code kinds} takes
     */
    public static List<Map<String, Object>> distribute(List<PolicyRegistry.Kind> kinds, Map<String, ?> given) {
        List<Map<String, Object>> out = new ArrayList<>(kinds.size());
        for (int i = 0; i < kinds.size(); i++) out.add(new LinkedHashMap<>());
        for (Map.Entry<String, ?> e : given.entrySet()) {
            boolean taken = false;
            for (int i = 0; i < kinds.size(); i++) {
                if (takes(kinds.get(i), e.getKey())) {
                    out.get(i).put(e.getKey(), e.getValue());
                    taken = true;
                }
            }
            if (!taken) throw new ParameterException(e.getKey(), "no selected policy takes this parameter (" + takenBy(kinds) + ")");
        }
        return out;
    }

    /** Whether {@code kind} has a parameter {@code name} that its definition does not pin. */
    public static boolean takes(PolicyRegistry.Kind kind, String name) {
        return free(kind).contains(name);
    }

    /** The parameters of {@code kind} a user may set, in declaration order. */
    public static Set<String> free(PolicyRegistry.Kind kind) {
        Set<String> names = new LinkedHashSet<>();
        for (RecordComponent rc : kind.defaults().getClass().getRecordComponents()) {
            if (!kind.pinned().containsKey(rc.getName())) names.add(rc.getName());
        }
        return names;
    }

    private static String takenBy(List<PolicyRegistry.Kind> kinds) {
        List<String> parts = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (PolicyRegistry.Kind k : kinds) {
            if (!seen.add(k.name())) continue;
            Set<String> f = free(k);
            parts.add(k.name() + ": " + (f.isEmpty() ? "none" : String.join(", ", f)));
            if (parts.size() == 6 && kinds.size() > 6) {
                parts.add("...");
                break;
            }
        }
        return String.join("; ", parts);
    }
}
