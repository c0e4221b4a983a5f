package io.fdkvc.core.policy.fdkvc;

import io.fdkvc.core.param.Check;
import io.fdkvc.core.param.Doc;
import io.fdkvc.core.param.ParameterException;

/**
 * FD-KVC's hyper-parameters (spec table "Hyper-parameters and defaults"). Validated at
 * construction; nothing is ever clamped.
 */
public record FdkvcParams(
        @Doc(value = "recency decay per turn (eq. 2)", range = "(0,1]") double gamma,
        @Doc(value = "base learning rate of the recency channel (eq. 4, 7)", range = ">= 0") double alpha0,
        @Doc(value = "convergence adaptation factor (eq. 7)", range = ">= 0") double mu,
        @Doc(value = "relative eviction threshold (eq. 8)", range = "[0,1)") double tau,
        @Doc(value = "attention modulation strength (eq. 9)", range = ">= 0") double beta,
        @Doc(value = "weight of the cumulative-attention channel (eq. 5)", range = "[0,1], wc + wrho = 1") double wc,
        @Doc(value = "weight of the recency-relevance channel (eq. 5)", range = "[0,1], wc + wrho = 1") double wrho,
        @Doc(value = "leading positions never evicted (extension; 0 in paper mode)", range = "0..budget-1") int sinks) {

    /** The spec's defaults. */
    public static final FdkvcParams DEFAULTS = new FdkvcParams(0.85, 0.5, 2.0, 0.05, 1.0, 0.45, 0.55, 0);

    /** Tolerance on wc + wrho = 1 (spec). */
    public static final double WEIGHT_SUM_TOLERANCE = 1e-6;

    public FdkvcParams {
        Check.inOpenClosed("gamma", gamma, 0, 1);
        Check.atLeast("alpha0", alpha0, 0);
        Check.atLeast("mu", mu, 0);
        Check.inHalfOpen("tau", tau, 0, 1);
        Check.atLeast("beta", beta, 0);
        Check.inClosed("wc", wc, 0, 1);
        Check.inClosed("wrho", wrho, 0, 1);
        if (Math.abs(wc + wrho - 1) > WEIGHT_SUM_TOLERANCE) {
            throw new ParameterException("wrho", "wc + wrho must equal 1 (within 1e-6), got wc=" + wc + " wrho=" + wrho);
        }
        Check.atLeast("sinks", sinks, 0);
    }
}
