package io.fdkvc.cli.trace;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.replay.TraceReplay;
import java.util.List;

/**
 * A validated policy-replay trace ({@code shared/spec/trace-format.md}), ready for
 * {@link TraceReplay}: an entry's position is its index over the whole trace.
 *
 * @param idNodes the id of every entry over the whole trace, by position, as given (a String or a Long)
 */
public record Trace(PolicySpec policy, int dim, List<TraceReplay.Step> turns, List<Object> idNodes) {}
