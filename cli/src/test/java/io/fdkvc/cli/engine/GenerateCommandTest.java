package io.fdkvc.cli.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.cli.CliRun;
import io.fdkvc.engine.model.Llama2cLoader;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code fdkvc generate} end to end on stories260K, and its refusals of broken input. */
class GenerateCommandTest {
    static Path dir() {
        return Path.of(System.getProperty("fdkvc.shared"), "models", "stories260K");
    }

    static String reference(String name) throws IOException {
        return Files.readString(dir().resolve(name), StandardCharsets.UTF_8);
    }

    static String[] args(String... extra) {
        String[] base = {"generate", "--model", dir().resolve("stories260K.bin").toString(),
                "--tokenizer", dir().resolve("tok512.bin").toString(), "--threads", "1"};
        String[] all = Arrays.copyOf(base, base.length + extra.length);
        System.arraycopy(extra, 0, all, base.length, extra.length);
        return all;
    }

    /** run.c's 64 steps: BOS and 4 prompt tokens at positions 0..4, then 60 generated tokens. */
    @Test
    void greedyOnceUponATimeEqualsRunC() throws IOException {
        CliRun r = CliRun.of(args("--prompt", "Once upon a time", "--max-tokens", "60", "--temperature", "0"));
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo(reference("runc_greedy_once_upon_a_time_64.txt"));
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).contains("5 prompt tokens").contains("60 generated");
    }

    /**
     * {@code --output ids}: one line holding only the generated ids; with BOS and the prompt's ids
     * in front they decode to run.c's text, and there are as many as asked for.
     */
    @Test
    void outputIdsAreTheGeneratedTokens() throws IOException {
        CliRun r = CliRun.of(args("--prompt", "Once upon a time", "--max-tokens", "60", "--temperature", "0", "--output", "ids"));
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).endsWith("\n").doesNotContain("Once");
        String[] ids = r.out().strip().split(" ");
        assertThat(ids).hasSize(60);
        int[] all = new int[1 + 4 + ids.length];
        int[] prompt = {1, 403, 407, 261, 378}; // BOS, "Once upon a time" as run.c encodes it
        System.arraycopy(prompt, 0, all, 0, prompt.length);
        for (int i = 0; i < ids.length; i++) all[prompt.length + i] = Integer.parseInt(ids[i]);
        Tokenizer tok = Tokenizers.from(Llama2cLoader.readTokenizer(dir().resolve("tok512.bin"), 512));
        assertThat(tok.decode(all) + "\n").isEqualTo(reference("runc_greedy_once_upon_a_time_64.txt"));
        assertRefused(CliRun.of(args("--output", "json")), "--output", "json");
        // special-token strings in the prompt are tokens, as llama.cpp's tools parse them: BOS, "<s>" = BOS, then
        // "Once upon a time" with its dummy prefix (403 407 261 378) = 6 prompt tokens, not 1 + 4 + 4
        CliRun s = CliRun.of("generate", "--model", dir().resolve("stories260K.gguf").toString(), "--prompt", "<s>Once upon a time",
                "--max-tokens", "1", "--temperature", "0", "--output", "ids");
        assertThat(s.status()).as(s.err()).isZero();
        assertThat(s.err()).contains(" 6 prompt tokens");
    }

    /** With a budget above the sequence length nothing is evicted, so a bounded policy prints the same story. */
    @ParameterizedTest
    @CsvSource({"full, 256, cache", "fdkvc, 300, original", "window, 300, cache"})
    void greedyNoPromptEqualsRunC(String policy, int budget, String positions) throws IOException {
        CliRun r = CliRun.of(args("--max-tokens", "256", "--temperature", "0", "--policy", policy, "--budget", String.valueOf(budget),
                "--positions", positions, "--batch", "16"));
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo(reference("runc_greedy_noprompt_256.txt"));
    }

    /** The GGUF file carries the tokenizer: no --tokenizer, same stories. */
    @Test
    void theGgufModelTellsTheSameStories() throws IOException {
        String gguf = dir().resolve("stories260K.gguf").toString();
        CliRun a = CliRun.of("generate", "--model", gguf, "--prompt", "Once upon a time", "--max-tokens", "60",
                "--temperature", "0", "--threads", "2");
        assertThat(a.status()).as(a.err()).isZero();
        assertThat(a.out()).isEqualTo(reference("runc_greedy_once_upon_a_time_64.txt"));
        CliRun b = CliRun.of("generate", "--model", gguf, "--max-tokens", "256", "--temperature", "0",
                "--policy", "fdkvc", "--budget", "400", "--batch", "1");
        assertThat(b.status()).as(b.err()).isZero();
        assertThat(b.out()).isEqualTo(reference("runc_greedy_noprompt_256.txt"));
    }

    @Test
    void aTruncatedGgufIsRefused(@TempDir Path tmp) throws IOException {
        byte[] all = Files.readAllBytes(dir().resolve("stories260K.gguf"));
        Path cut = tmp.resolve("cut.gguf");
        Files.write(cut, Arrays.copyOf(all, all.length / 2));
        assertRefused(CliRun.of("generate", "--model", cut.toString()), cut.toString());
    }

    @Test
    void theSameSeedGivesTheSameStory() {
        CliRun a = CliRun.of(args("--temperature", "0.9", "--seed", "17", "--max-tokens", "40", "--prompt", "The dog"));
        CliRun b = CliRun.of(args("--temperature", "0.9", "--seed", "17", "--max-tokens", "40", "--prompt", "The dog"));
        assertThat(a.status()).isZero();
        assertThat(a.out()).startsWith("The dog").isEqualTo(b.out());
    }

    static void assertRefused(CliRun r, String... fragments) {
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).startsWith("fdkvc generate: ");
        for (String f : fragments) assertThat(r.err()).contains(f);
    }

    @Test
    void aTruncatedCheckpointIsRefusedWithItsSizes(@TempDir Path tmp) throws IOException {
        byte[] all = Files.readAllBytes(dir().resolve("stories260K.bin"));
        Path cut = tmp.resolve("cut.bin");
        Files.write(cut, Arrays.copyOf(all, all.length - 1000));
        assertRefused(CliRun.of("generate", "--model", cut.toString(), "--tokenizer", dir().resolve("tok512.bin").toString()),
                cut.toString(), "implies 1056540 bytes", "the file has 1055540");
    }

    @Test
    void anAbsurdHeaderIsRefusedBeforeAnyAllocation(@TempDir Path tmp) throws IOException {
        byte[] all = Files.readAllBytes(dir().resolve("stories260K.bin"));
        // n_layers = 2^30: the implied size overflows an int, must not overflow the check
        all[8] = 0;
        all[9] = 0;
        all[10] = 0;
        all[11] = 0x40;
        Path bad = tmp.resolve("huge.bin");
        Files.write(bad, all);
        assertRefused(CliRun.of("generate", "--model", bad.toString(), "--tokenizer", dir().resolve("tok512.bin").toString()),
                "n_layers 1073741824", "more than a Java array holds");
        all[8] = -3;
        all[11] = -1;
        Files.write(bad, all);
        assertRefused(CliRun.of("generate", "--model", bad.toString(), "--tokenizer", dir().resolve("tok512.bin").toString()),
                "n_layers", "must be positive");
        Path tiny = tmp.resolve("tiny.bin");
        Files.write(tiny, new byte[] {1, 2, 3});
        assertRefused(CliRun.of("generate", "--model", tiny.toString(), "--tokenizer", dir().resolve("tok512.bin").toString()),
                "too short");
    }

    @Test
    void aBrokenTokenizerIsRefused(@TempDir Path tmp) throws IOException {
        byte[] tok = Files.readAllBytes(dir().resolve("tok512.bin"));
        Path cut = tmp.resolve("tok.bin");
        Files.write(cut, Arrays.copyOf(tok, tok.length / 2));
        assertRefused(CliRun.of("generate", "--model", dir().resolve("stories260K.bin").toString(), "--tokenizer", cut.toString()),
                cut.toString(), "tokens, the model has 512");
        byte[] longer = Arrays.copyOf(tok, tok.length + 9);
        Files.write(cut, longer);
        assertRefused(CliRun.of("generate", "--model", dir().resolve("stories260K.bin").toString(), "--tokenizer", cut.toString()),
                "9 bytes after the 512 tokens");
    }

    @Test
    void missingFilesAndOptionsAreRefused(@TempDir Path tmp) {
        assertRefused(CliRun.of("generate", "--model", tmp.resolve("nope.bin").toString(), "--tokenizer", "x"),
                "nope.bin", "no such");
        assertRefused(CliRun.of("generate", "--model", dir().resolve("stories260K.bin").toString()), "--tokenizer");
        assertRefused(CliRun.of("generate", "--model", tmp.toString()), "directory");
        assertRefused(CliRun.of(args("--temperature", "-1")), "--temperature");
        assertRefused(CliRun.of(args("--policy", "fdkvc", "--budget", "0")), "budget");
        assertRefused(CliRun.of(args("--policy", "fdkvc", "-p", "gamma=2")), "gamma");
        assertRefused(CliRun.of(args("--positions", "slots")), "--positions");
        assertRefused(CliRun.of(args("--max-turn-tokens", "0")), "--max-turn-tokens");
        assertRefused(CliRun.of("generate", "--model", dir().resolve("stories260K.bin").toString(), "--tokenizer",
                dir().resolve("tok512.bin").toString(), "--threads", "0"), "--threads");
    }

    @Test
    void aGgufWithoutTheMagicIsRefused(@TempDir Path tmp) throws IOException {
        Path fake = tmp.resolve("model.gguf");
        Files.write(fake, "GGUX not really a model".getBytes(StandardCharsets.US_ASCII));
        assertRefused(CliRun.of("generate", "--model", fake.toString()), fake.toString(), "not a GGUF file");
    }
}
