package io.fdkvc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The trace command end to end: good input replayed, bad input refused with exit 2. */
class TraceCommandTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * Two turns of FD-KVC with budget 2, worked out by hand.
     * Turn 0: the cache is empty, so straight to step 6 with alpha = alpha0 = 0.5. The query
     * embedding q = (0.1, 0.5, 0.1, 0.2) has norm sqrt(0.31); a = e1 gets cos = 0.1/sqrt(0.31)
     * = 0.179605, rho = 0.5 * 0.179605 = 0.089803; b = e2 gets cos = 0.898027, rho = 0.449013.
     * Both c = 1 so chat = 1 and h = 0.45 + 0.55 rho: 0.499391 and 0.696957.
     * Turn 1: qbar = e3 is orthogonal to both keys, so each gets attention 1/2: c = 1.5.
     * rho decays: 0.076333, 0.381661; cosines are both 0, so r = 0 (min = max). h = 0.45 +
     * 0.55 rho = 0.491983, 0.659914; hhat = 0.745528, 1; L = (0.745528 * 0.254472 + 0) / 2 =
     * 0.094859; alpha = 0.5 / (1 + 2 L) = 0.420268. No entry is under 0.05 * max h.
     * c enters with c = 1, rho = alpha * cos(e3, e3) = 0.420268; then max c = 1.5 so h_c = 0.45
     * / 1.5 + 0.55 * 0.420268 = 0.531147; h_a = 0.491983 is the lowest: a is evicted.
     */
    static final String TWO_TURNS = """
            {"policy": {"name": "fdkvc", "budget": 2},
             "dim": 4,
             "turns": [
               {"queries": [[0.1, 0.2, 0.3, 0.4], [0.0, 1.0, 0.0, 0.0]],
                "queryEmbedding": [0.1, 0.5, 0.1, 0.2],
                "entries": [{"id": "a", "key": [1, 0, 0, 0]}, {"id": "b", "key": [0, 1, 0, 0]}]},
               {"queries": [[0, 0, 1, 0]], "entries": [{"id": "c", "key": [0, 0, 1, 0]}]}
             ]}
            """;

    @Test
    void replaysTwoTurnsAsWorkedOutByHand(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("t.json");
        Files.writeString(f, TWO_TURNS);
        CliRun r = CliRun.of("trace", f.toString());
        assertThat(r.status()).isZero();
        assertThat(r.err()).isEmpty();
        String[] lines = r.out().split("\n");
        assertThat(lines).hasSize(2);
        JsonNode t0 = JSON.readTree(lines[0]);
        assertThat(t0.get("alpha").doubleValue()).isEqualTo(0.5);
        assertThat(t0.get("loss").doubleValue()).isZero();
        assertThat(t0.get("entries").get(0).get("rho").doubleValue()).isCloseTo(0.0898027, within());
        assertThat(t0.get("entries").get(1).get("h").doubleValue()).isCloseTo(0.6969573, within());

        JsonNode t1 = JSON.readTree(lines[1]);
        assertThat(t1.get("turn").intValue()).isEqualTo(1);
        assertThat(t1.get("loss").doubleValue()).isCloseTo(0.0948585, within());
        assertThat(t1.get("alpha").doubleValue()).isCloseTo(0.4202680, within());
        assertThat(t1.get("evicted").get(0).stringValue()).isEqualTo("a");
        JsonNode b = t1.get("entries").get(0), c = t1.get("entries").get(1);
        assertThat(b.get("id").stringValue()).isEqualTo("b");
        assertThat(b.get("position").intValue()).isEqualTo(1);
        assertThat(b.get("c").doubleValue()).isCloseTo(1.5, within());
        assertThat(b.get("h").doubleValue()).isCloseTo(0.6599137, within());
        assertThat(c.get("rho").doubleValue()).isCloseTo(0.4202680, within());
        assertThat(c.get("h").doubleValue()).isCloseTo(0.5311474, within());
        // eq. 9: rhohat_b = 0.381661 / 0.420268 = 0.908137, factor (0.5 + 0.454068) = 0.954068;
        // rhohat_c = 1, factor 1. Logits: q = e3 gives 0 for b and 1/2 for c.
        double wb = 0.954068, wc = Math.exp(0.5);
        assertThat(b.get("weight").doubleValue()).isCloseTo(wb / (wb + wc), within());
        assertThat(b.get("weight").doubleValue() + c.get("weight").doubleValue()).isCloseTo(1.0, within());
    }

    @Test
    void readsStandardInput() {
        CliRun r = CliRun.withStdin(TWO_TURNS, "trace", "-");
        assertThat(r.status()).isZero();
        assertThat(r.out().split("\n")).hasSize(2);
    }

    @Test
    void everyBaselineReplays() {
        for (String policy : io.fdkvc.core.policy.PolicyRegistry.names()) {
            // streaming's default of 4 sinks does not fit a budget of 2: give it one sink
            String params = policy.equals("streaming") ? "\"" + policy + "\", \"sinks\": 1" : "\"" + policy + "\"";
            CliRun r = CliRun.withStdin(TWO_TURNS.replace("\"fdkvc\"", params), "trace", "-");
            assertThat(r.status()).as(policy + ": " + r.err()).isZero();
            JsonNode last = JSON.readTree(r.out().split("\n")[1]);
            double sum = 0;
            for (JsonNode e : last.get("entries")) sum += e.get("weight").doubleValue();
            assertThat(sum).as(policy).isCloseTo(1.0, within());
            assertThat(last.get("entries").size()).as(policy).isLessThanOrEqualTo(policy.equals("full") ? 3 : 2);
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            not JSON                 | {"policy":                                  | not valid JSON
            missing dim              | {"policy": {"name": "fdkvc", "budget": 2}, "turns": []} | dim: missing
            wrong vector length      | @"key": [1, 0, 0, 0]@"key": [1, 0, 0]@                  | turn 0: entries[0].key: must have exactly dim = 4 numbers, got 3
            mistyped number          | @[0.1, 0.2, 0.3, 0.4]@[0.1, "x", 0.3, 0.4]@             | turn 0: queries[0][1]: must be a number
            overflowing float        | @[0, 0, 1, 0]@[0, 0, 1e39, 0]@                          | turn 1: queries[0][2]: must be a finite 32-bit number
            duplicate id             | @"id": "c"@"id": "a"@                                   | turn 1: entries[0].id: duplicate id
            unknown policy           | @"fdkvc"@"lru"@                                         | policy.name: unknown policy 'lru'
            out of range             | @"budget": 2@"budget": 2, "gamma": 1.5@                 | policy.gamma: must be in (0.0, 1.0]
            weights not summing to 1 | @"budget": 2@"budget": 2, "wc": 0.5@                    | policy.wrho: wc + wrho must equal 1
            missing budget           | @"budget": 2@"budgt": 2@                                | policy.budget: missing
            empty queries            | @"queries": [[0, 0, 1, 0]]@"queries": []@               | turn 1: queries: must be a non-empty array
            unknown field            | @"entries": [{"id": "c"@"entrys": [{"id": "c"@          | turn 1: entrys: unknown field
            sinks too large          | @"budget": 2@"budget": 2, "sinks": 2@                   | policy.sinks: must be in 0..budget-1
            """)
    void refusesBadInputWithOneLineAndNoOutput(String what, String edit, String expected) {
        String input = edit.startsWith("@") ? applyEdit(edit) : edit;
        CliRun r = CliRun.withStdin(input, "trace", "-");
        assertThat(r.status()).as(what).isEqualTo(2);
        assertThat(r.out()).as(what).isEmpty();
        assertThat(r.errLines()).as(what).hasSize(1);
        assertThat(r.err()).as(what).contains(expected).doesNotContain("Exception").doesNotContain("\tat ");
    }

    @Test
    void missingFileIsBadInput() {
        CliRun r = CliRun.of("trace", "/nonexistent/trace.json");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("/nonexistent/trace.json: no such file");
    }

    private static String applyEdit(String edit) {
        String[] parts = edit.split("@", -1); // "", from, to, ""
        assertThat(TWO_TURNS).contains(parts[1]);
        return TWO_TURNS.replaceFirst(java.util.regex.Pattern.quote(parts[1]), java.util.regex.Matcher.quoteReplacement(parts[2]));
    }

    private static org.assertj.core.data.Offset<Double> within() {
        return org.assertj.core.data.Offset.offset(2e-6);
    }
}
