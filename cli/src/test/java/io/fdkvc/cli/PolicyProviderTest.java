package io.fdkvc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.examples.policy.KeepOldestPolicies;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A policy from outside core ({@link KeepOldestPolicies} in the examples module, registered
 * through that jar's META-INF/services, on this module's test class path as a user's jar would
 * be) reaches the registry, 'fdkvc policies', trace and eval, with its parameters validated like a
 * built-in's.
 */
class PolicyProviderTest {
    @Test
    void theExampleIsRegisteredAfterTheBuiltins() {
        assertThat(PolicyRegistry.names()).startsWith("fdkvc", "full").contains(KeepOldestPolicies.NAME);
        assertThat(PolicyRegistry.names().indexOf(KeepOldestPolicies.NAME)).isGreaterThan(PolicyRegistry.names().indexOf("fdkvc-recency-only"));
        CliRun r = CliRun.of("policies");
        assertThat(r.out()).contains(KeepOldestPolicies.NAME + ": example: the oldest entries plus the most recent ones")
                .containsPattern("recent +int +default 1 +most recent entries kept besides the oldest \\[0..budget-1]");
    }

    @Test
    void traceReplaysIt() {
        // budget 2, recent 1: after three one-entry turns the oldest (a) and the newest (c) remain
        String trace = "{\"policy\": {\"name\": \"" + KeepOldestPolicies.NAME + "\", \"budget\": 2, \"recent\": 1}, \"dim\": 2, \"turns\": ["
                + "{\"queries\": [[1, 0]], \"entries\": [{\"id\": \"a\", \"key\": [1, 0]}]},"
                + "{\"queries\": [[1, 0]], \"entries\": [{\"id\": \"b\", \"key\": [0, 1]}]},"
                + "{\"queries\": [[1, 0]], \"entries\": [{\"id\": \"c\", \"key\": [1, 1]}]}]}";
        CliRun r = CliRun.withStdin(trace, "trace", "-");
        assertThat(r.status()).as(r.err()).isZero();
        String[] lines = r.out().split("\n");
        assertThat(lines[2]).contains("\"evicted\":[\"b\"]").contains("\"id\":\"a\"").contains("\"id\":\"c\"");
        CliRun bad = CliRun.withStdin(trace.replace("\"recent\": 1", "\"recent\": 2"), "trace", "-");
        assertThat(bad.status()).isEqualTo(2);
        assertThat(bad.err()).isEqualTo("fdkvc trace: policy.recent: must be < budget 2, got 2\n");
    }

    @Test
    void evalRunsItWithItsParameter(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("report");
        CliRun r = CliRun.of("eval", "--policy", KeepOldestPolicies.NAME + ",window", "-p", "recent=8", "--dialogues", "2", "--turns", "4",
                "--scenario", "topic-shift", "--threads", "1", "--quiet", "--out", out.toString());
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(Files.readString(out.resolve("results.csv"))).contains(KeepOldestPolicies.NAME);
        CliRun bad = CliRun.of("eval", "--policy", KeepOldestPolicies.NAME, "-p", "recent=-1", "--dialogues", "2", "--quiet",
                "--out", dir.resolve("r2").toString());
        assertThat(bad.status()).isEqualTo(2);
        assertThat(bad.err()).startsWith("fdkvc eval: -p recent: must be >= 0, got -1");
        assertThat(dir.resolve("r2")).doesNotExist();
    }
}
