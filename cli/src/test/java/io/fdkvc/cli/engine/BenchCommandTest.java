package io.fdkvc.cli.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.cli.CliRun;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@code fdkvc bench}: runs both configurations and reports them; refuses bad settings. No timing is asserted. */
class BenchCommandTest {
    static String[] bench(String... extra) {
        Path dir = GenerateCommandTest.dir();
        String[] base = {"bench", "--model", dir.resolve("stories260K.bin").toString(), "--tokenizer",
                dir.resolve("tok512.bin").toString(), "--threads", "1"};
        String[] all = java.util.Arrays.copyOf(base, base.length + extra.length);
        System.arraycopy(extra, 0, all, base.length, extra.length);
        return all;
    }

    @Test
    void reportsFullAndTheBudgetedPolicy() {
        CliRun r = CliRun.of(bench("--turns", "3", "--warmup", "1", "--prompt-tokens", "20", "--gen-tokens", "10",
                "--budget", "16"));
        assertThat(r.status()).as(r.err()).isZero();
        String[] lines = r.out().split("\n");
        assertThat(lines).hasSize(5);
        assertThat(lines[0]).contains("stories260K.bin").contains("5 layers").contains("F32");
        assertThat(lines[3]).startsWith("full");
        assertThat(lines[4]).startsWith("fdkvc");
        // 3 turns of 30 tokens: full holds all 90, fdkvc its budget
        assertThat(lines[3].trim().split("\\s+")[5]).isEqualTo("90");
        assertThat(lines[4].trim().split("\\s+")[5]).isEqualTo("16");
    }

    @Test
    void refusesBadSettings() {
        assertThat(CliRun.of(bench("--turns", "2", "--warmup", "2")).status()).isEqualTo(2);
        assertThat(CliRun.of(bench("--prompt-tokens", "0")).status()).isEqualTo(2);
        CliRun none = CliRun.of("bench");
        assertThat(none.status()).isEqualTo(2);
        CliRun unknown = CliRun.of("bench", "--synthetic", "gpt5");
        assertThat(unknown.status()).isEqualTo(2);
        assertThat(unknown.err()).contains("smollm2-135m-q8");
        // --quant and --save belong to --synthetic
        CliRun quantOnFile = CliRun.of(bench("--quant", "Q4_0"));
        assertThat(quantOnFile.status()).isEqualTo(2);
        assertThat(quantOnFile.err()).contains("--quant");
        assertThat(CliRun.of("bench", "--synthetic", "smollm2-135m", "--quant", "Q9").status()).isEqualTo(2);
    }

    @Test
    void perTurnLinesAndTheBudgetedConfigurationAlone() {
        CliRun r = CliRun.of(bench("--turns", "3", "--warmup", "1", "--jit-warmup", "1", "--prompt-tokens", "20",
                "--gen-tokens", "10", "--budget", "16", "--budgeted-only", "--per-turn"));
        assertThat(r.status()).as(r.err()).isZero();
        String[] lines = r.out().split("\n");
        // header (3 lines), the two reported turns, the fdkvc row
        assertThat(lines).hasSize(6);
        assertThat(lines[3]).contains("fdkvc turn 2: 16 entries before");
        assertThat(lines[4]).contains("fdkvc turn 3: 16 entries before");
        assertThat(lines[5]).startsWith("fdkvc");
    }
}
