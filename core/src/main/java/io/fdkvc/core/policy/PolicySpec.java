package io.fdkvc.core.policy;

import io.fdkvc.core.Limits;
import io.fdkvc.core.param.ParamBinder;
import io.fdkvc.core.param.ParameterException;
import java.util.Map;
import java.util.Objects;

/**
 * A validated policy configuration: name, budget and parameter record. Creates one policy
 * instance per stream. The constructor validates everything: the budget is in
 * [1, {@link Limits#MAX_BUDGET}], the record is the kind's, the kind's pinned values hold, and
 * the policy accepts the budget (e.g. streaming's sinks &lt; budget), so no spec exists that
 * {@link #newPolicy()} would refuse. Callers without a budget yet use {@link PolicyTemplate}.
 *
 * @param name the name results show (the registry name, or a label)
 */
public record PolicySpec(String name, int budget, Record params, PolicyRegistry.Kind kind) {

    public PolicySpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(params, "params");
        if (params.getClass() != kind.defaults().getClass()) {
            throw new IllegalArgumentException("policy " + name + ": parameters " + params.getClass().getSimpleName()
                    + ", expected " + kind.defaults().getClass().getSimpleName());
        }
        Limits.check("budget", budget, 1, Limits.MAX_BUDGET);
        Map<String, Object> values = ParamBinder.values(params);
        for (Map.Entry<String, Object> e : kind.pinned().entrySet()) {
            Object v = values.get(e.getKey());
            if (!(v instanceof Number n) || n.doubleValue() != ((Number) e.getValue()).doubleValue()) {
                throw new ParameterException(e.getKey(), "is fixed at " + e.getValue() + " by policy '" + kind.name() + "', got " + v);
            }
        }
        kind.factory().create(name, budget, params); // what depends on the budget, e.g. sinks < budget
    }

    public Policy newPolicy() {
        return kind.factory().create(name, budget, params);
    }

    /** This policy at another budget, validated again. */
    public PolicySpec withBudget(int newBudget) {
        return new PolicySpec(name, newBudget, params, kind);
    }

    /** The parameters by name, in declaration order. */
    public Map<String, Object> parameterValues() {
        return ParamBinder.values(params);
    }

    @Override
    public String toString() {
        Map<String, Object> values = parameterValues();
        return name + "(budget=" + budget + (values.isEmpty() ? "" : ", " + values.toString().replaceAll("[{}]", "")) + ")";
    }
}
