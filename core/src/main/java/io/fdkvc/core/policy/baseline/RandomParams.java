package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.param.Doc;

/** The random baseline's parameters. */
public record RandomParams(@Doc(value = "seed of the uniform choice", range = "any integer") long seed) {
    public static final RandomParams DEFAULTS = new RandomParams(0);
}
