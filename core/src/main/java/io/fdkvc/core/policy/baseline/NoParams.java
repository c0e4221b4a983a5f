package io.fdkvc.core.policy.baseline;

/** The parameters of a policy that has none besides its budget. */
public record NoParams() {
    public static final NoParams INSTANCE = new NoParams();
}
