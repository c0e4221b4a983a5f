package io.fdkvc.cli;

import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyParams;
import io.fdkvc.core.policy.PolicySpec;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
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
            description = "a parameter of the policy, e.g. -p gamma=0.9 (repeatable; 'fdkvc policies' lists them; "
                    + "one the policy does not take or pins is refused)")
    public Map<String, String> params = new LinkedHashMap<>();

    /**
     * The validated spec; -p follows the one rule of {@link PolicyParams} (a parameter the policy
     * does not take, or pins, is refused). Errors name the option: --policy, --budget or -p NAME.
     */
    public PolicySpec spec() {
        return withOptionNames(params, () -> PolicyParams.spec(policy, budget, params));
    }

    /**
     * Runs {@code body}, reporting a library {@link ParameterException} about one of the
     * {@code -p} parameters as {@code -p NAME}, and one about the policy or the budget under
     * those options. The one place where policy errors get their command-line names.
     */
    public static <T> T withOptionNames(Map<String, ?> params, Supplier<T> body) {
        try {
            return body.get();
        } catch (ParameterException e) {
            String p = e.parameter();
            if (params.containsKey(p)) throw new ParameterException("-p " + p, e.problem());
            if (p.equals("policy") || p.equals("budget")) throw new ParameterException("--" + p, e.problem());
            throw e;
        }
    }
}
