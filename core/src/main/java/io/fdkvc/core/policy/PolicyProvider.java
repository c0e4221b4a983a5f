package io.fdkvc.core.policy;

import java.util.List;

/**
 * The service through which policies reach the registry, and so every command ({@code trace},
 * {@code eval}, {@code chat}, the server) without a change to {@code core}: implement it, list the
 * class in {@code META-INF/services/io.fdkvc.core.policy.PolicyProvider}, and put the jar on the
 * class path. Each {@link PolicyRegistry.Kind} names a policy, gives its parameters as a record
 * (defaults = the record's values; help and ranges = {@link io.fdkvc.core.param.Doc} on its
 * components; validation = the record's compact constructor) and its factory. {@code fdkvc
 * policies} prints the same metadata.
 *
 * <p>Names are unique across all providers: a provider that repeats a name (a built-in one
 * included) is refused when the registry loads.
 */
public interface PolicyProvider {
    /** The policies this provider contributes, in the order {@code fdkvc policies} lists them. */
    List<PolicyRegistry.Kind> kinds();
}
