package io.fdkvc.engine.template;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.tokenizer.TestVocabularies;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every real chat template of {@code ../shared/templates} rendered through every case of
 * {@code templates/conversations.json} (with and without the generation prompt), against what
 * Jinja2 in Hugging Face's configuration renders ({@code bench/templates/render_goldens.py} wrote
 * {@code templates/golden/*.json}): the same text, or a failure where Jinja2 raises, with the
 * template's own message where the template raised it ({@code raise_exception}).
 */
class JinjaTemplateGoldenTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Path RESOURCES = Path.of("src/test/resources/templates");

    @SuppressWarnings("unchecked")
    static Map<String, Object> read(Path file) {
        try {
            return JSON.readValue(Files.readString(file, StandardCharsets.UTF_8), Map.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The case's outcome in the golden's shape: {"output": text} or {"error": message}. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> render(JinjaRenderer template, Map<String, Object> spec, Map<String, Object> c,
            boolean generationPrompt) {
        List<Map<String, Object>> messages = (List<Map<String, Object>>)
                ((Map<String, Object>) spec.get("conversations")).get((String) c.get("conversation"));
        Map<String, Object> variables = new HashMap<>();
        variables.put("tools", Boolean.TRUE.equals(c.get("tools")) ? spec.get("tools") : null);
        variables.put("documents", null);
        try {
            return Map.of("output", template.render(messages, generationPrompt, variables));
        } catch (InputException e) {
            return Map.of("error", e.getMessage());
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyTemplateRendersEveryConversationAsJinja2Does() throws IOException {
        Map<String, Object> spec = read(RESOURCES.resolve("conversations.json"));
        Clock clock = Clock.fixed(LocalDateTime.parse((String) spec.get("now")).toInstant(ZoneOffset.UTC), ZoneOffset.UTC);
        Map<String, String> mismatches = new TreeMap<>();
        int total = 0;
        List<Path> goldens;
        try (Stream<Path> files = Files.list(RESOURCES.resolve("golden"))) {
            goldens = files.filter(f -> f.toString().endsWith(".json")).sorted().toList();
        }
        Path templates = TestVocabularies.shared().resolve("templates");
        try (Stream<Path> files = Files.list(templates)) {
            assertThat(files.filter(f -> f.toString().endsWith(".jinja")).count())
                    .as("one golden file per template").isEqualTo(goldens.size());
        }
        for (Path golden : goldens) {
            Map<String, Object> expected = read(golden);
            String name = (String) expected.get("template");
            Map<String, Object> cases = (Map<String, Object>) expected.get("cases");
            String source = Files.readString(templates.resolve(name), StandardCharsets.UTF_8);
            JinjaRenderer template = JinjaRenderer.of(source, (String) spec.get("bos_token"), (String) spec.get("eos_token"), clock);
            for (Map<String, Object> c : (List<Map<String, Object>>) spec.get("cases")) {
                for (boolean generationPrompt : new boolean[] {false, true}) {
                    String key = c.get("name") + (generationPrompt ? "+generation-prompt" : "");
                    Map<String, Object> want = (Map<String, Object>) cases.get(key);
                    total++;
                    String id = name + " " + key;
                    Map<String, Object> got = render(template, spec, c, generationPrompt);
                    String problem = compare(want, got);
                    if (problem != null) {
                        mismatches.put(id, problem);
                    }
                }
            }
        }
        Files.createDirectories(Path.of("target"));
        List<String> report = mismatches.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue()).toList();
        Files.writeString(Path.of("target/template-golden-mismatches.txt"), String.join("\n\n", report));
        assertThat(mismatches.keySet()).as("%d of %d cases differ from Jinja2 (details in target/template-golden-mismatches.txt)",
                mismatches.size(), total).isEmpty();
    }

    /** Null when {@code got} is what {@code want} says; otherwise what differs. */
    static String compare(Map<String, Object> want, Map<String, Object> got) {
        if (want.containsKey("output")) {
            if (want.get("output").equals(got.get("output"))) {
                return null;
            }
            return got.containsKey("error") ? "raised '" + got.get("error") + "'; want\n" + want.get("output")
                    : "rendered\n" + got.get("output") + "\n--- want\n" + want.get("output");
        }
        if (!got.containsKey("error")) {
            return "rendered where Jinja2 raises " + want.get("error_type") + " '" + want.get("error") + "'";
        }
        // the template's own message (raise_exception) must reach the user unchanged
        if ("TemplateError".equals(want.get("error_type")) && !((String) got.get("error")).contains((String) want.get("error"))) {
            return "raised '" + got.get("error") + "'; want the template's message '" + want.get("error") + "'";
        }
        return null;
    }
}
