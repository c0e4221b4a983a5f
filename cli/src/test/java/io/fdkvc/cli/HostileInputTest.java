package io.fdkvc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.InputException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The hostile cases of issue 10 as a table: each input, the exit status it must get and a
 * fragment of the one line it must print on stderr, prefixed with the command. Every refusal is
 * exactly one line, without control characters, and writes nothing on stdout.
 */
class HostileInputTest {
    static final String MODEL = Path.of(System.getProperty("fdkvc.shared", "../../shared"), "models", "stories260K", "stories260K.gguf").toString();

    @TempDir
    static Path dir;

    /** args, standard input (null: none), expected status, expected stderr fragment. */
    static Stream<Arguments> cases() throws Exception {
        Path empty = Files.write(dir.resolve("empty.jsonl"), new byte[0]);
        String trace = "{\"policy\": {\"name\": \"fdkvc\", \"budget\": %s}, \"dim\": %s, \"turns\": []}";
        List<Arguments> a = new ArrayList<>();
        // sizes from options: refused, named, before anything is allocated
        a.add(row(2, "fdkvc chat: --budget: must be in [1, 16777216], got 2147483647", "chat", "--model", MODEL, "--budget", "2147483647"));
        a.add(row(2, "fdkvc chat: --budget: must be in [1, 16777216], got 100000000", "chat", "--model", MODEL, "--budget", "100000000"));
        a.add(row(2, "fdkvc chat: Invalid value for option '--budget': '1e8' is not an int", "chat", "--model", MODEL, "--budget", "1e8"));
        a.add(row(2, "fdkvc chat: --batch: must be in [1, 4096], got 2147483647", "chat", "--model", MODEL, "--batch", "2147483647"));
        a.add(row(2, "fdkvc chat: --max-turn-tokens: must be in [1, 1048576], got 2147483647", "chat", "--model", MODEL, "--max-turn-tokens", "2147483647"));
        a.add(row(2, "fdkvc chat: --threads: must be in [1, 1024], got 100000", "chat", "--model", MODEL, "--threads", "100000"));
        a.add(row(2, "fdkvc generate: --threads: must be in [1, 1024], got 0", "generate", "--model", MODEL, "--threads", "0"));
        a.add(row(2, "fdkvc generate: --max-tokens: must be in [0, 16777216], got -1", "generate", "--model", MODEL, "--max-tokens", "-1"));
        a.add(row(2, "fdkvc generate: --positions: must be 'auto', 'original' or 'cache', got 'slot'", "generate", "--model", MODEL, "--positions", "slot"));
        a.add(row(2, "fdkvc generate: --top-p: must be in (0, 1], got 2.0", "generate", "--model", MODEL, "--top-p", "2"));
        a.add(row(2, "fdkvc chat: -p sinks: must be in 0..budget-1 = 0..2, got 5", "chat", "--model", MODEL, "--policy", "streaming", "--budget", "3", "-p", "sinks=5"));
        a.add(row(2, "fdkvc chat: -p gamma: no selected policy takes this parameter (window: none)", "chat", "--model", MODEL, "--policy", "window", "-p", "gamma=0.5"));
        a.add(row(2, "fdkvc chat: --policy: unknown policy 'nope'", "chat", "--model", MODEL, "--policy", "nope"));
        a.add(row(2, "fdkvc generate: " + dir.resolve("none.gguf") + ": no such model file", "generate", "--model", dir.resolve("none.gguf").toString()));
        // eval
        a.add(row(2, "fdkvc eval: --scenario: no scenario named", "eval", "--scenario", ","));
        a.add(row(2, "fdkvc eval: -p zeta: no selected policy takes this parameter (fdkvc: gamma", "eval", "--policy", "fdkvc", "-p", "zeta=1"));
        a.add(row(2, "fdkvc eval: -p gamma: no selected policy takes this parameter (h2o: none)", "eval", "--policy", "h2o", "-p", "gamma=0.5"));
        a.add(row(2, "fdkvc eval: -p gamma: must be in (0.0, 1.0], got 2.0", "eval", "--policy", "fdkvc", "-p", "gamma=2"));
        a.add(row(2, "fdkvc eval: --turns: must be >= 3, got 2", "eval", "--turns", "2"));
        a.add(row(2, "fdkvc eval: --threads: must be in [1, 1024], got 100000", "eval", "--threads", "100000"));
        a.add(row(2, "fdkvc eval: Unknown option: '--bogus' (see 'fdkvc eval --help')", "eval", "--bogus"));
        a.add(row(2, "fdkvc eval: " + empty + ": empty file", "eval", "--dataset", "sgd", "--data", empty.toString(), "--out", dir.resolve("r1").toString()));
        a.add(row(2, "fdkvc eval: --out: " + empty + " exists and is not a directory", "eval", "--dialogues", "1", "--out", empty.toString()));
        // traces
        a.add(rowIn(String.format(trace, "2", "2147483647"), 2, "fdkvc trace: dim: must be in [1, 65536], got 2147483647", "trace", "-"));
        a.add(rowIn(String.format(trace, "2147483647", "2"), 2, "fdkvc trace: policy.budget: must be in [1, 16777216], got 2147483647", "trace", "-"));
        a.add(rowIn("", 2, "fdkvc trace: <stdin>: empty", "trace", "-"));
        a.add(rowIn("{\"dim\": 2, \"po\\nlicy\\u001b[31m\": 1}", 2, "fdkvc trace: po\\nlicy\\u001b[31m: unknown field", "trace", "-"));
        a.add(rowIn("{\"policy\": {\"name\": \"fdkvc\", \"budget\": 2, \"gamma\": \"" + "A".repeat(1 << 20) + "\"}, \"dim\": 2, \"turns\": []}", 2,
                "fdkvc trace: policy.gamma: must be a number, got \"AAAA", "trace", "-"));
        a.add(rowIn("{\"policy\": {\"name\": \"fdkvc\", \"budget\": 2}, \"dim\": 2, \"turns\": [{\"queries\": [[], []], \"entries\": []}]}", 2,
                "fdkvc trace: turn 0: queries[0]: must have exactly dim = 2 numbers, got 0", "trace", "-"));
        // picocli's @-files are off: "@/etc/hostname" is a literal prompt (see the test below), and
        // a trace named "@x" is a file named "@x"
        a.add(row(2, "fdkvc trace: @/nonexistent: no such file", "trace", "@/nonexistent"));
        return a.stream();
    }

    static Arguments row(int status, String fragment, String... args) {
        return Arguments.of(String.join(" ", args).length() > 120 ? String.join(" ", args).substring(0, 120) : String.join(" ", args),
                args, null, status, fragment);
    }

    static Arguments rowIn(String stdin, int status, String fragment, String... args) {
        return Arguments.of(String.join(" ", args) + " <<< " + (stdin.length() > 80 ? stdin.substring(0, 80) + "..." : stdin), args, stdin, status, fragment);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void isRefusedWithOneLine(String label, String[] args, String stdin, int status, String fragment) {
        CliRun r = CliRun.withStdin(stdin == null ? "" : stdin, args);
        assertThat(r.status()).as(label + "\n" + r.err()).isEqualTo(status);
        assertThat(r.out()).as("stdout").isEmpty();
        assertThat(r.errLines()).as("stderr: " + r.err()).hasSize(1);
        assertThat(r.err()).contains(fragment);
        assertOneSafeLine(r.err());
    }

    static void assertOneSafeLine(String err) {
        String line = err.endsWith("\n") ? err.substring(0, err.length() - 1) : err;
        assertThat(line).startsWith("fdkvc");
        assertThat(line.length()).as("line length").isLessThanOrEqualTo(1200);
        for (char c : line.toCharArray()) assertThat(c < 0x20 || c == 0x7f).as("control character " + (int) c).isFalse();
    }

    @Test
    void anAtSignPromptIsTextNotAFile() {
        CliRun r = CliRun.of("generate", "--model", MODEL, "--prompt", "@/etc/hostname", "--max-tokens", "1", "--temperature", "0", "--threads", "1");
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("@/etc/hostname");
    }

    /** The top-level handler's answer to what no command should throw, Errors included. */
    @Test
    void everyThrowableBecomesOneSanitisedLineWithTheRightStatus() {
        var spec = new picocli.CommandLine(new Main()).getSubcommands().get("eval").getCommandSpec();
        assertReport(new OutOfMemoryError("Java heap space"), spec, 1, "fdkvc eval: out of memory (this JVM may use");
        assertReport(new InternalError("a fault occurred in an unsafe memory access operation"), spec, 2,
                "fdkvc eval: a memory-mapped input file (the model) was truncated or changed while in use");
        assertReport(new StackOverflowError(), spec, 1, "fdkvc eval: internal error: stack overflow (this is a bug in fdkvc: please report it; FDKVC_DEBUG=1");
        assertReport(new ArithmeticException("integer overflow"), spec, 1, "fdkvc eval: internal error: ArithmeticException: integer overflow (this is a bug");
        assertReport(new RuntimeException(new InputException("bad\nline\u001b[2J")), spec, 2, "fdkvc eval: bad\\nline\\u001b[2J");
        assertReport(new IllegalStateException("x".repeat(1_000_000)), spec, 1, "more characters)");
        assertReport(new io.fdkvc.core.param.ParameterException("entriesPerTurn", "must be >= 1, got 0"), spec, 2,
                "fdkvc eval: --entries-per-turn: must be >= 1, got 0");
        assertReport(new java.io.UncheckedIOException(new java.io.IOException("No space left on device")), spec, 1,
                "fdkvc eval: input/output error: No space left on device");
    }

    private static void assertReport(Throwable t, picocli.CommandLine.Model.CommandSpec spec, int status, String fragment) {
        StringWriter err = new StringWriter();
        int s = Main.report(t, spec, new PrintWriter(err, true));
        assertThat(s).as(err.toString()).isEqualTo(status);
        assertThat(err.toString()).contains(fragment);
        assertThat(err.toString().split("\n")).hasSize(1);
        assertOneSafeLine(err.toString());
    }

    /** --stats-json appends, and only once the model has loaded: a bad model leaves the file as it was. */
    @Test
    void statsJsonAppendsAndOnlyAfterTheModelLoaded() throws Exception {
        Path stats = Files.writeString(dir.resolve("stats.jsonl"), "kept\n");
        CliRun bad = CliRun.withStdin("hi\n", "chat", "--model", dir.resolve("none.gguf").toString(), "--stats-json", stats.toString());
        assertThat(bad.status()).isEqualTo(2);
        assertThat(Files.readString(stats)).isEqualTo("kept\n");
        CliRun good = CliRun.withStdin("hi\n", "chat", "--model", MODEL, "--stats-json", stats.toString(), "--max-tokens", "2",
                "--temperature", "0", "--threads", "1");
        assertThat(good.status()).as(good.err()).isZero();
        List<String> lines = Files.readAllLines(stats);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).isEqualTo("kept");
        assertThat(lines.get(1)).startsWith("{\"turn\":1,");
    }
}
