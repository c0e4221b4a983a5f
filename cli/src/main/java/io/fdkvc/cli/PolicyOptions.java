package io.fdkvc.cli;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** The options that choose a policy and its parameters, shared by every command that runs one. */
public final class PolicyOptions {
    @Option(names = "--policy", paramLabel = "NAME", defaultValue = "full",
            description = "eviction policy (see 'fdkvc policies'); default: ${DEFAULT-VALUE}")
    public String policy;

    @Option(names = "--budget", paramLabel = "N", defaultValue = "256",
            description = "entries kept per stream after each turn; default: ${DEFAULT-VALUE}")
    public int budget;

    @Option(names = {"-p", "--param"}, paramLabel = "NAME=VALUE",
            description = "a policy parameter, e.g. -p gamma=0.9 (repeatable; 'fdkvc policies' lists them)")
    public Map<String, String> params = new LinkedHashMap<>();

    /** The validated spec; throws an input error naming the parameter. */
    public PolicySpec spec() {
        return PolicyRegistry.spec(policy, budget, params);
    }
}
