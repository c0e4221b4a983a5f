package io.fdkvc.eval.fidelity;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.PositionMode;

/**
 * One bounded cache run against the full one: a policy (by its report label, e.g.
 * {@code fdkvc-tuned} for FD-KVC with other parameters), its budget and its RoPE positions.
 */
public record Student(String policy, int budget, PositionMode positions, PolicySpec spec) {
    public Student {
        if (spec.budget() != budget) throw new IllegalArgumentException("spec budget " + spec.budget() + " != " + budget);
    }
}
