package io.fdkvc.cli.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.cli.CliRun;
import io.fdkvc.engine.modelwriter.GgufModelWriter;
import io.fdkvc.engine.modelwriter.Layout;
import io.fdkvc.engine.modelwriter.ModelShape;
import io.fdkvc.engine.modelwriter.TensorTypes;
import io.fdkvc.engine.modelwriter.VocabularySpec;
import io.fdkvc.engine.modelwriter.Weights;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tokenizer.GgufVocabulary;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
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

    /**
     * {@code --template jinja:FILE}: the file's template writes the turns. With the GGUF model
     * (BOS "&lt;s&gt;"), the first turn is "&lt;s&gt;User: Hi\nAssistant:" (BOS from the template's
     * bos_token, not added again) and the second "\nUser: Bye\nAssistant:": each turn's prompt
     * has exactly those texts' tokens.
     */
    @Test
    void aJinjaTemplateFileWritesTheTurns(@TempDir Path tmp) throws IOException {
        Path tpl = tmp.resolve("plain.jinja");
        Files.writeString(tpl, """
                {{ bos_token }}{% for m in messages %}{{ m.role | capitalize }}: {{ m.content.strip() }}
                {% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}
                """);
        Path stats = tmp.resolve("stats.jsonl");
        Path gguf = GenerateCommandTest.dir().resolve("stories260K.gguf");
        CliRun r = CliRun.withStdin("Hi\nBye\n", "chat", "--model", gguf.toString(), "--threads", "1", "--temperature", "0",
                "--max-tokens", "5", "--stats-json", stats.toString(), "--template", "jinja:" + tpl);
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.err()).isEmpty();
        Tokenizer tok = Tokenizers.from(GgufVocabulary.load(gguf));
        List<JsonNode> st = stats(stats);
        assertThat(st).hasSize(2);
        int[] first = tok.encodeWithSpecials("<s>User: Hi\nAssistant:", true);
        assertThat(first[0]).isEqualTo(1);
        assertThat(st.get(0).get("promptTokens").asInt()).isEqualTo(first.length);
        assertThat(st.get(1).get("promptTokens").asInt()).isEqualTo(tok.encodeWithSpecials("\nUser: Bye\nAssistant:", false).length);
    }

    @Test
    void badJinjaTemplatesAreRefused(@TempDir Path tmp) throws IOException {
        CliRun missing = CliRun.withStdin("hi\n", chat(tmp.resolve("s.jsonl"), "--template", "jinja:" + tmp.resolve("none.jinja")));
        assertThat(missing.status()).isEqualTo(2);
        assertThat(missing.errLines()).hasSize(1);
        assertThat(missing.err()).startsWith("fdkvc chat: ").contains("--template").contains("none.jinja");
        Path refusing = tmp.resolve("refusing.jinja");
        Files.writeString(refusing, "{{ raise_exception('This model only chats in French') }}");
        CliRun r = CliRun.withStdin("hi\n", chat(tmp.resolve("s.jsonl"), "--template", "jinja:" + refusing));
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).contains("--template").contains("This model only chats in French");
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

    /**
     * A Phi-3-style file with LongRoPE factors (original context 256, trained 4096): chat takes
     * the long factors when its conversations can reach positions beyond 256 (original or auto
     * positions: the trained context; a growing policy), the short ones when every position stays
     * below budget + --max-turn-tokens <= 256 (cache positions), and says which on stderr.
     */
    @Test
    void longRopeFactorsFollowTheContextTheRunCanReach(@TempDir Path tmp) throws IOException {
        Path phi3 = tmp.resolve("phi3.gguf");
        ModelShape shape = new ModelShape(new Layout.Phi3(12, 256, new float[] {1f, 1.5f, 2.5f, 4f, 6f, 9f},
                new float[] {1f, 1.02f, 1.05f, 1.1f, 1.2f, 1.3f}, 262144), 64, 128, 2, 4, 2, 16, 320, 4096, 1e-5f, 10000f, true);
        GgufModelWriter.writer(shape, VocabularySpec.sentencePiecePlaceholders(320), Weights.random(1), TensorTypes.uniform(GgmlType.F32))
                .write(phi3);
        String[] base = {"chat", "--model", phi3.toString(), "--threads", "1", "--temperature", "0", "--max-tokens", "3"};
        record Case(String expected, String... options) {}
        for (Case c : List.of(
                new Case("long factors (context 4096 > the original 256)"),
                new Case("long factors (context 4096 > the original 256)", "--positions", "original", "--budget", "16"),
                new Case("long factors (context 4096 > the original 256)", "--positions", "cache", "--policy", "full"),
                new Case("short factors (context 48 <= the original 256)", "--positions", "cache", "--policy", "window",
                        "--budget", "16", "--max-turn-tokens", "32"),
                new Case("long factors (context 272 > the original 256)", "--positions", "cache", "--policy", "window",
                        "--budget", "240", "--max-turn-tokens", "32"))) {
            List<String> args = new ArrayList<>(List.of(base));
            args.addAll(List.of(c.options()));
            CliRun r = CliRun.withStdin("hi\n", args.toArray(String[]::new));
            assertThat(r.status()).as(r.err()).isZero();
            assertThat(r.errLines()).as(String.join(" ", c.options())).contains("chat: LongRoPE: the " + c.expected());
        }
    }
}
