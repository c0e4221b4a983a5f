package io.fdkvc.core.policy;

import io.fdkvc.core.param.ParamBinder;
import io.fdkvc.core.param.ParameterException;
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
    /**
     * Every check that does not depend on the budget, the one place they are made
     * ({@link PolicySpec} runs them too): a non-blank name, the kind's record type, and the kind's
     * pinned values.
     */
    public PolicyTemplate {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(params, "params");
        if (name.isBlank()) throw new IllegalArgumentException("policy name is blank");
        if (params.getClass() != kind.defaults().getClass()) {
            throw new IllegalArgumentException("policy " + name + ": parameters " + params.getClass().getSimpleName()
                    + ", expected " + kind.defaults().getClass().getSimpleName());
        }
        Map<String, Object> values = ParamBinder.values(params);
        for (Map.Entry<String, Object> e : kind.pinned().entrySet()) {
            Object v = values.get(e.getKey());
            if (!(v instanceof Number n) || n.doubleValue() != ((Number) e.getValue()).doubleValue()) {
                throw new ParameterException(e.getKey(), "is fixed at " + e.getValue() + " by policy '" + kind.name() + "', got " + v);
            }
        }
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
