package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.param.Check;
import io.fdkvc.core.param.Doc;
import io.fdkvc.core.param.ParameterException;

/** SnapKV's parameters. */
public record SnapKvParams(
        @Doc(value = "observation window: the turn's last query rows whose attention is summed", range = ">= 1") int window,
        @Doc(value = "max-pooling kernel over neighbouring entries", range = "odd, >= 1") int kernel) {
    public static final SnapKvParams DEFAULTS = new SnapKvParams(32, 7);

    public SnapKvParams {
        Check.atLeast("window", window, 1);
        Check.atLeast("kernel", kernel, 1);
        if (kernel % 2 == 0) throw new ParameterException("kernel", "must be odd, got " + kernel);
    }
}
