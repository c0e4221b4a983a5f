package io.fdkvc.core.policy;

import io.fdkvc.core.Limits;
import io.fdkvc.core.param.ParamBinder;
import java.util.Map;

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
        new PolicyTemplate(name, params, kind); // what does not depend on the budget
        Limits.check("budget", budget, 1, Limits.MAX_BUDGET);
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
