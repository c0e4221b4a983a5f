package io.fdkvc.cli.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.cli.CliRun;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** {@code fdkvc chat} on stories260K: bounded memory over a conversation many times the trained context. */
class ChatCommandTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String[] SUBJECTS = {"a cat", "the sea", "a red ball", "a big tree", "the moon", "a small dog",
            "a birthday cake", "the park", "a lost shoe", "a rainy day"};

    static String[] chat(Path stats, String... extra) {
        Path dir = GenerateCommandTest.dir();
        List<String> a = new ArrayList<>(List.of("chat", "--model", dir.resolve("stories260K.bin").toString(),
                "--tokenizer", dir.resolve("tok512.bin").toString(), "--threads", "1", "--seed", "3",
                "--stats-json", stats.toString()));
        a.addAll(List.of(extra));
        return a.toArray(String[]::new);
    }

    static List<JsonNode> stats(Path file) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(file)) out.add(JSON.readTree(line));
        return out;
    }

    static String userTurns(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append("Tell me a story about ").append(SUBJECTS[i % SUBJECTS.length]).append(" and number ").append(i).append('\n');
            if (i % 7 == 3) sb.append("\n"); // blank lines are skipped, not turns
        }
        return sb.toString();
    }

    /**
     * 60 turns of about 55 tokens: some 3300 tokens, over six times the model's trained context
     * of 512. With FD-KVC at budget 96, no stream holds more than 96 entries after any turn, the
     * cache's memory stays what budget + one turn needs, and the conversation keeps going.
     */
    @Test
    void sixtyTurnsStayWithinTheBudget(@TempDir Path tmp) throws IOException {
        Path file = tmp.resolve("stats.jsonl");
        CliRun r = CliRun.withStdin(userTurns(60), chat(file, "--policy", "fdkvc", "--budget", "96", "--max-tokens", "40",
                "--max-turn-tokens", "128", "--temperature", "0.8"));
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.err()).isEmpty();
        List<JsonNode> st = stats(file);
        assertThat(st).hasSize(60);
        long tokens = 0, evicted = 0;
        long firstFullBytes = -1;
        for (int i = 0; i < st.size(); i++) {
            JsonNode t = st.get(i);
            assertThat(t.get("turn").asInt()).isEqualTo(i + 1);
            assertThat(t.get("promptTokens").asInt()).isPositive();
            assertThat(t.get("generatedTokens").asInt()).isBetween(0, 40);
            assertThat(t.get("cacheEntries").asInt()).isLessThanOrEqualTo(96);
            tokens += t.get("promptTokens").asInt() + t.get("generatedTokens").asInt();
            evicted += t.get("evicted").asLong();
            if (tokens > 200 && firstFullBytes < 0) firstFullBytes = t.get("kvBytes").asLong();
        }
        assertThat(tokens).isGreaterThan(3 * 512);
        assertThat(st.getLast().get("cacheEntries").asInt()).isEqualTo(96);
        assertThat(evicted).isPositive();
        // memory: the streams' arrays never grow; only the eviction logs may (a few longs per stream)
        assertThat(st.getLast().get("kvBytes").asLong()).isLessThan(firstFullBytes + 20L * 8 * 256);
        assertThat(r.out().lines().count()).isGreaterThanOrEqualTo(60);
    }

    /** With full nothing is evicted: after each turn a stream holds every token fed so far. */
    @Test
    void fullKeepsEveryToken(@TempDir Path tmp) throws IOException {
        Path file = tmp.resolve("stats.jsonl");
        CliRun r = CliRun.withStdin(userTurns(5), chat(file, "--policy", "full", "--max-tokens", "30", "--temperature", "0"));
        assertThat(r.status()).as(r.err()).isZero();
        long tokens = 0;
        for (JsonNode t : stats(file)) {
            tokens += t.get("promptTokens").asInt() + t.get("generatedTokens").asInt();
            assertThat(t.get("cacheEntries").asLong()).isEqualTo(tokens);
            assertThat(t.get("evicted").asLong()).isZero();
        }
    }

    @Test
    void badInputIsRefusedWithExitTwo(@TempDir Path tmp) {
        CliRun r = CliRun.withStdin("hi\n", chat(tmp.resolve("s.jsonl"), "--template", "alpaca"));
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).startsWith("fdkvc chat: ").contains("--template");
        CliRun s = CliRun.withStdin("hi\n", chat(tmp.resolve("no/such/dir/s.jsonl")));
        assertThat(s.status()).isEqualTo(2);
        assertThat(s.err()).contains("--stats-json");
    }
}
