package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.param.Check;
import io.fdkvc.core.param.Doc;

/** StreamingLLM's parameters. */
public record StreamingParams(
        @Doc(value = "leading attention-sink entries always kept", range = "0..budget-1") int sinks) {
    public static final StreamingParams DEFAULTS = new StreamingParams(4);

    public StreamingParams {
        Check.atLeast("sinks", sinks, 0);
    }
}
