package io.fdkvc.cli;

import io.fdkvc.core.policy.PolicyRegistry;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Lists the registry: every policy, what it is, its parameters with defaults and ranges. */
@Command(name = "policies", mixinStandardHelpOptions = true,
        description = "List the eviction policies and their parameters.")
public final class PoliciesCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        for (PolicyRegistry.Kind k : PolicyRegistry.kinds()) {
            out.println(k.name() + ": " + k.description());
            for (PolicyRegistry.Parameter d : k.parameters()) {
                Object shown = d.fixed() ? d.defaultValue() + " (fixed)" : d.defaultValue();
                out.printf("    %-8s %-7s default %-14s %s%s%n", d.name(), d.type(), shown, d.doc(),
                        d.range().isEmpty() ? "" : " [" + d.range() + "]");
            }
        }
        out.println("Every policy also takes --budget N (entries kept per stream after a turn; ignored by full).");
        out.flush();
    }

}
