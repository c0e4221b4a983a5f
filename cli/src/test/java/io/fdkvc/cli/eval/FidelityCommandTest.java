package io.fdkvc.cli.eval;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.cli.CliRun;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fdkvc fidelity}: generate conversations, measure them, and refuse bad input with one line. */
class FidelityCommandTest {
    static final String MODEL = Path.of(System.getProperty("fdkvc.shared"), "models", "stories260K", "stories260K.gguf").toString();

    @TempDir
    Path dir;

    @Test
    void generatesConversationsAndWritesAReport() throws IOException {
        Path convs = dir.resolve("c.jsonl");
        CliRun w = CliRun.of("fidelity", "--model", MODEL, "--write-conversations", convs.toString(), "--count", "2", "--seed", "3",
                "--turns", "4", "--stories", "2", "--turn-tokens", "24..30", "--named");
        assertThat(w.status()).as(w.err()).isZero();
        assertThat(w.out()).startsWith("wrote 2 conversations");
        assertThat(Files.readAllLines(convs)).hasSize(2);
        // the same seed writes the same file
        Path again = dir.resolve("again.jsonl");
        CliRun.of("fidelity", "--model", MODEL, "--write-conversations", again.toString(), "--count", "2", "--seed", "3", "--turns", "4",
                "--stories", "2", "--turn-tokens", "24..30", "--named");
        assertThat(Files.readString(again)).isEqualTo(Files.readString(convs));

        Path out = dir.resolve("report");
        CliRun r = CliRun.of("fidelity", "--model", MODEL, "--conversations", convs.toString(), "--policy", "window,h2o", "--budget", "8",
                "--budget", "16", "--positions", "both", "--out", out.toString(), "--threads", "2");
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("report: ");
        List<String> csv = Files.readAllLines(out.resolve("results.csv"));
        assertThat(csv.getFirst()).isEqualTo("policy,budget,positions,metric,mean,lo,hi,n");
        assertThat(csv).anyMatch(l -> l.startsWith("h2o,16,original,probe_nll_increase,"));
        assertThat(csv).anyMatch(l -> l.startsWith("h2o,8,cache,kl_minus_window,"));
        assertThat(out.resolve("report.md")).content().contains("| window | 8 |");
        assertThat(out.resolve("results.json")).exists();
        assertThat(out.resolve("kl-by-budget-cache.png")).exists();
        assertThat(r.err()).contains("fidelity: 2 conversations x 8 caches in");
    }

    @Test
    void badInputIsOneLineWithStatus2AndNoReport() throws IOException {
        Path bad = dir.resolve("bad.jsonl");
        Files.writeString(bad, "{\"id\": \"a\", \"turns\": [{\"ids\": [1, 2]}, {\"ids\": \"x\"}]}\n");
        Path out = dir.resolve("none");
        CliRun r = CliRun.of("fidelity", "--model", MODEL, "--conversations", bad.toString(), "--out", out.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.errLines()).containsExactly("fdkvc fidelity: " + bad + ":1: turns[1].ids: must be a non-empty array of token ids");
        assertThat(out).doesNotExist();
        CliRun p = CliRun.of("fidelity", "--model", MODEL, "--conversations", bad.toString(), "--policy", "full");
        assertThat(p.status()).isEqualTo(2);
        assertThat(p.err()).contains("--policy: 'full' is unbounded");
        CliRun t = CliRun.of("fidelity", "--model", MODEL, "--write-conversations", dir.resolve("x.jsonl").toString(), "--turn-tokens", "9..x");
        assertThat(t.status()).isEqualTo(2);
        assertThat(t.err()).contains("--turn-tokens: must be N or MIN..MAX");
    }
}
