package io.fdkvc.core.policy;

import io.fdkvc.core.param.ParamBinder;
import java.util.Map;
import java.util.Objects;

/**
 * A policy with validated parameters and no budget yet: for callers that choose the budget later,
 * or one per case (a token budget per dialogue). {@link #spec(int)} adds the budget and runs the
 * checks that depend on it.
 *
 * @param name   the name results show (the registry name, or a label such as "fdkvc#3")
 * @param params the bound parameter record, of the kind's record type
 * @param kind   the registered policy
 */
public record PolicyTemplate(String name, Record params, PolicyRegistry.Kind kind) {
    public PolicyTemplate {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(params, "params");
        if (params.getClass() != kind.defaults().getClass()) {
            throw new IllegalArgumentException("policy " + name + ": parameters " + params.getClass().getSimpleName()
                    + ", expected " + kind.defaults().getClass().getSimpleName());
        }
        if (name.isBlank()) throw new IllegalArgumentException("policy name is blank");
    }

    /** The validated spec at {@code budget}. @throws io.fdkvc.core.param.ParameterException naming {@code budget} */
    public PolicySpec spec(int budget) {
        return new PolicySpec(name, budget, params, kind);
    }

    /** The same policy shown under another name. */
    public PolicyTemplate named(String label) {
        return new PolicyTemplate(label, params, kind);
    }

    public Map<String, Object> parameterValues() {
        return ParamBinder.values(params);
    }
}
