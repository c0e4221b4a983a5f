package io.fdkvc.cli.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.cli.CliRun;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.core.json.JsonWriteFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** {@code fdkvc tokenize} end to end: the real Qwen3 tokenizer against Hugging Face's ids, stories260K, bad input. */
class TokenizeCommandTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    // lone surrogates in the reference texts must travel as \\uXXXX escapes, not as (unencodable) chars
    private static final JsonMapper ESCAPING = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

    static Path qwen3(String file) {
        return Path.of(System.getProperty("fdkvc.shared"), "tokenizers", "qwen3", file);
    }

    static String qwen3Model() {
        return qwen3("qwen3-tokenizer.gguf").toString();
    }

    /** All 2,168 reference strings as JSON lines, both modes: every output line is the reference's ids. */
    @Test
    void qwen3ReferenceIdsThroughTheCommandLine() throws IOException {
        List<JsonNode> rows = new ArrayList<>();
        StringBuilder in = new StringBuilder();
        for (String line : Files.readAllLines(qwen3("reference-ids.jsonl"), StandardCharsets.UTF_8)) {
            JsonNode r = JSON.readTree(line);
            rows.add(r);
            in.append(ESCAPING.writeValueAsString(r.get("text").asString())).append('\n');
        }
        for (boolean special : new boolean[] {false, true}) {
            CliRun r = special ? CliRun.withStdin(in.toString(), "tokenize", "--model", qwen3Model(), "--jsonl", "--special")
                    : CliRun.withStdin(in.toString(), "tokenize", "--model", qwen3Model(), "--jsonl");
            assertThat(r.status()).as(r.err()).isZero();
            assertThat(r.err()).isEmpty();
            String[] lines = r.out().split("\n", -1);
            assertThat(lines).hasSize(rows.size() + 1); // each line ends with '\n'
            assertThat(lines[rows.size()]).isEmpty();
            int matched = 0;
            for (int i = 0; i < rows.size(); i++) {
                if (lines[i].equals(idLine(rows.get(i).get(special ? "ids_specials" : "ids")))) matched++;
            }
            assertThat(matched).as(special ? "with --special" : "plain").isEqualTo(2168);
        }
    }

    static String idLine(JsonNode ids) {
        StringBuilder sb = new StringBuilder();
        for (JsonNode id : ids) {
            if (!sb.isEmpty()) sb.append(' ');
            sb.append(id.asInt());
        }
        return sb.toString();
    }

    /**
     * Text lines: "Hello world" is Qwen's "Hello" 9707 + " world" 1879; "<|im_start|>user" is plain
     * text (&lt; | im _start | &gt;, then "user" 872) unless --special makes it token 151644; an empty
     * line is an empty list. No BOS is added (and Qwen3 has add_bos_token = false anyway).
     */
    @Test
    void textLines() {
        String in = "Hello world\n<|im_start|>user\n\n";
        CliRun plain = CliRun.withStdin(in, "tokenize", "--model", qwen3Model());
        assertThat(plain.status()).as(plain.err()).isZero();
        assertThat(plain.out()).isEqualTo("9707 1879\n27 91 318 4906 91 29 872\n\n");
        CliRun special = CliRun.withStdin(in, "tokenize", "--model", qwen3Model(), "--special");
        assertThat(special.out()).isEqualTo("9707 1879\n151644 872\n\n");
        // JSON lines carry newlines: "a\nb" is one input
        CliRun json = CliRun.withStdin("\"<|im_end|>\\n\"\n", "tokenize", "--model", qwen3Model(), "--jsonl", "--special");
        assertThat(json.out()).isEqualTo("151645 198\n");
    }

    /** A llama2.c checkpoint with its tokenizer file: run.c's ids for "Once upon a time" (dummy prefix included). */
    @Test
    void stories260K() {
        Path dir = GenerateCommandTest.dir();
        CliRun r = CliRun.withStdin("Once upon a time\n", "tokenize", "--model", dir.resolve("stories260K.bin").toString(),
                "--tokenizer", dir.resolve("tok512.bin").toString());
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("403 407 261 378\n");
        CliRun g = CliRun.withStdin("Once upon a time\n<s>Once\n", "tokenize", "--model",
                dir.resolve("stories260K.gguf").toString(), "--special");
        assertThat(g.out()).isEqualTo("403 407 261 378\n1 403\n");
    }

    @Test
    void badInputIsRefusedWithTheLineNumberAndNoOutput() {
        CliRun notJson = CliRun.withStdin("\"fine\"\n{\"text\": 1}\n", "tokenize", "--model", qwen3Model(), "--jsonl");
        assertRefused(notJson, "line 2", "expected a JSON string");
        CliRun broken = CliRun.withStdin("\"fine\"\n\"ok\"\n\"unterminated\n", "tokenize", "--model", qwen3Model(), "--jsonl");
        assertRefused(broken, "line 3", "not JSON");
        CliRun blank = CliRun.withStdin("\"fine\"\n\n", "tokenize", "--model", qwen3Model(), "--jsonl");
        assertRefused(blank, "line 2");
        byte[] bad = {'o', 'k', '\n', (byte) 0xC3, '(', '\n'};
        assertRefused(CliRun.withStdinBytes(bad, "tokenize", "--model", qwen3Model()), "line 2", "UTF-8");
        assertRefused(CliRun.withStdin("x\n", "tokenize", "--model", GenerateCommandTest.dir().resolve("stories260K.bin").toString()),
                "stories260K.bin", "not a GGUF file");
        assertRefused(CliRun.withStdin("x\n", "tokenize", "--model", "no/such.gguf"), "no/such.gguf");
    }

    static void assertRefused(CliRun r, String... fragments) {
        assertThat(r.status()).as(r.err()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.errLines()).hasSize(1);
        assertThat(r.err()).startsWith("fdkvc tokenize: ");
        for (String f : fragments) assertThat(r.err()).contains(f);
    }
}
