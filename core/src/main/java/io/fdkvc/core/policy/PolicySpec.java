package io.fdkvc.core.policy;

import io.fdkvc.core.param.ParamBinder;
import java.util.Map;

/**
 * A validated policy configuration: name, budget and parameter record. Creates one policy
 * instance per stream.
 */
public record PolicySpec(String name, int budget, Record params, PolicyRegistry.Kind kind) {

    public Policy newPolicy() {
        return kind.factory().create(name, budget, params);
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
