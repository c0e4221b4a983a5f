package io.fdkvc.core.policy.fidelity;

import io.fdkvc.core.param.Check;
import io.fdkvc.core.param.Doc;
import io.fdkvc.core.param.ParameterException;

/**
 * The parameters of {@code fdkvc-fidelity} ({@link FidelityPolicy}). Validated at construction;
 * nothing is clamped. The defaults were chosen with {@code fdkvc fidelity} on development
 * conversations of stories260K (docs/fidelity.md).
 */
public record FidelityParams(
        @Doc(value = "leading positions never evicted (attention sinks)", range = "0..budget-1") int sinks,
        @Doc(value = "share of the budget kept for the most recent entries, whatever their scores", range = "[0,1]") double recent,
        @Doc(value = "decay per turn of the long-term channel c (cumulative attention)", range = "(0,1]") double gamma,
        @Doc(value = "weight of the long-term channel: decayed cumulative attention c / max c", range = ">= 0") double wc,
        @Doc(value = "weight of the relevance channel: the turn's last `window` rows' attention, max-pooled, / its max", range = ">= 0") double wrho,
        @Doc(value = "observation window: the turn's last query rows whose attention makes the relevance channel", range = ">= 1") int window,
        @Doc(value = "max-pooling kernel of the relevance channel over neighbouring entries", range = "odd, >= 1") int kernel,
        @Doc(value = "decay per turn of the relevance channel: rho = max(delta * rho, the turn's pooled window); 0 replaces it every turn", range = "[0,1]") double delta,
        @Doc(value = "share of the budget kept for the entries of highest long-term importance H, whatever their scores", range = "[0,1], recent + heavy <= 1") double heavy,
        @Doc(value = "decay per turn of the long-term importance H that the heavy share ranks by (1: H2O's cumulative attention)", range = "(0,1]") double eta,
        @Doc(value = "how the channels are put on one scale: 0 each / its maximum, 1 each entry's rank among the competing entries / their count", range = "0 or 1") int ranks) {

    public static final FidelityParams DEFAULTS = new FidelityParams(1, 0.125, 0.75, 1.0, 1.0, 12, 1, 0.5, 0.0, 1.0, 1);

    public FidelityParams {
        Check.atLeast("sinks", sinks, 0);
        Check.inClosed("recent", recent, 0, 1);
        Check.inOpenClosed("gamma", gamma, 0, 1);
        Check.atLeast("wc", wc, 0);
        Check.atLeast("wrho", wrho, 0);
        Check.atLeast("window", window, 1);
        Check.atLeast("kernel", kernel, 1);
        Check.inClosed("delta", delta, 0, 1);
        Check.inClosed("heavy", heavy, 0, 1);
        Check.inOpenClosed("eta", eta, 0, 1);
        if (ranks != 0 && ranks != 1) throw new ParameterException("ranks", "must be 0 or 1, got " + ranks);
        if (recent + heavy > 1) throw new ParameterException("heavy", "recent + heavy must be <= 1, got " + recent + " + " + heavy);
        if (kernel % 2 == 0) throw new ParameterException("kernel", "must be odd, got " + kernel);
    }
}
