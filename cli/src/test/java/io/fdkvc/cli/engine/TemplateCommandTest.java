package io.fdkvc.cli.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.cli.CliRun;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/** {@code fdkvc template}: the prompt exactly as Jinja2 renders it, the template's refusal as status 2. */
class TemplateCommandTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** The engine's golden renderings (written by bench/templates/render_goldens.py with Jinja2). */
    private static final Path GOLDEN = Path.of("../engine/src/test/resources/templates");

    @TempDir
    Path dir;

    static Path shared(String first, String... more) {
        return Path.of(System.getProperty("fdkvc.shared"), first).resolve(Path.of("", more));
    }

    @SuppressWarnings("unchecked")
    private Path conversationFile(String name, String key) throws IOException {
        Map<String, Object> spec = JSON.readValue(Files.readString(GOLDEN.resolve("conversations.json")), Map.class);
        Path file = dir.resolve(name + ".json");
        Files.writeString(file, JSON.writeValueAsString(((Map<String, Object>) spec.get(key)).get(name)));
        return file;
    }

    @SuppressWarnings("unchecked")
    private static String golden(String template, String key) throws IOException {
        Map<String, Object> g = JSON.readValue(Files.readString(GOLDEN.resolve("golden/" + template + ".json")), Map.class);
        return (String) ((Map<String, Object>) ((Map<String, Object>) g.get("cases")).get(key)).get("output");
    }

    @Test
    void printsTheRenderedPromptExactly() throws IOException {
        Path messages = conversationFile("tool-calls", "conversations");
        Path tools = dir.resolve("tools.json");
        Map<?, ?> spec = JSON.readValue(Files.readString(GOLDEN.resolve("conversations.json")), Map.class);
        Files.writeString(tools, JSON.writeValueAsString(spec.get("tools")));
        for (String template : List.of("Qwen-Qwen2.5-7B-Instruct", "Qwen-Qwen3-0.6B")) {
            CliRun run = CliRun.of("template", "--template", shared("templates", template + ".jinja").toString(),
                    "--messages", messages.toString(), "--tools", tools.toString(), "--add-generation-prompt",
                    "--bos-token", "<s>", "--eos-token", "</s>");
            assertThat(run.err()).isEmpty();
            assertThat(run.status()).isZero();
            assertThat(run.out()).as(template).isEqualTo(golden(template, "tool-calls+generation-prompt"));
        }
    }

    @Test
    void takesTheTemplateAndTokensFromAModel() throws IOException {
        Path messages = dir.resolve("m.json");
        Files.writeString(messages, "[{\"role\": \"user\", \"content\": \"Hi there \"}]", StandardCharsets.UTF_8);
        CliRun run = CliRun.of("template", "--model", shared("tokenizers", "llama.cpp-vocab", "ggml-vocab-gemma-4.gguf").toString(),
                "--messages", messages.toString(), "--add-generation-prompt");
        assertThat(run.status()).as(run.err()).isZero();
        // Gemma 4's template: its BOS "<bos>", the user turn with the content trimmed, the model turn
        // with an empty thought channel (thinking off)
        assertThat(run.out()).isEqualTo("<bos><|turn>user\nHi there<turn|>\n<|turn>model\n<|channel>thought\n<channel|>");
    }

    @Test
    void aRefusalIsStatusTwoWithTheTemplatesMessage() throws IOException {
        Path messages = conversationFile("system-user", "conversations");
        CliRun run = CliRun.of("template", "--template", shared("templates", "google-gemma-2-2b-it.jinja").toString(),
                "--messages", messages.toString());
        assertThat(run.status()).isEqualTo(2);
        assertThat(run.out()).isEmpty();
        assertThat(run.errLines()).hasSize(1);
        assertThat(run.err()).contains("System role not supported");
    }

    @Test
    void badMessagesAreStatusTwoNamingTheOption() throws IOException {
        Path messages = dir.resolve("bad.json");
        Files.writeString(messages, "{\"role\": \"user\"}");
        CliRun run = CliRun.of("template", "--template", shared("templates", "Qwen-Qwen3-0.6B.jinja").toString(),
                "--messages", messages.toString());
        assertThat(run.status()).isEqualTo(2);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).contains("--messages").contains("list");
        Files.writeString(messages, "[{\"role\": ");
        CliRun broken = CliRun.of("template", "--template", shared("templates", "Qwen-Qwen3-0.6B.jinja").toString(),
                "--messages", messages.toString());
        assertThat(broken.status()).isEqualTo(2);
        assertThat(broken.err()).contains("--messages").contains("not JSON");
    }
}
