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
import java.util.ArrayList;
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

    /**
     * The cases this renderer (Jinja semantics rebuilt on Jinjava) does not match, each with the
     * reason; key: "template.jinja case". The test fails on any other difference and on a listed
     * case that matches now, so the list stays exact.
     */
    private static final Map<String, String> UNMATCHABLE = unmatchable();

    private static Map<String, String> unmatchable() {
        Map<String, String> known = new TreeMap<>();
        String undefinedPlus = "the template adds an undefined value to a string ('+'), which Jinja refuses (UndefinedError);"
                + " Jinjava reads an undefined name or missing key as null and concatenates it";
        for (String c : List.of("user", "system-user", "multi-turn", "multi-turn-no-system", "tools-offered", "tool-calls")) {
            for (String g : List.of("", "+generation-prompt")) {
                known.put("fireworks-ai-llama-3-firefunction-v2.jinja " + c + g, undefinedPlus + " (the variable 'functions')");
            }
        }
        for (String g : List.of("", "+generation-prompt")) {
            known.put("CohereForAI-c4ai-command-r-plus-tool_use.jinja tools-offered" + g,
                    undefinedPlus + " (a tool's 'description' key, which OpenAI-style tools keep under 'function')");
            known.put("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja tool-calls" + g,
                    "Jinjava drops the indentation that opens a macro's body (\"    {\" of format_tool_message's output)");
            known.put("meetkai-functionary-medium-v3.2.jinja tool-calls" + g,
                    "the template adds a dict (parsed arguments) to a string, which Python refuses (TypeError); Jinjava concatenates");
            for (String c : List.of("tools-offered", "tool-calls")) {
                known.put("llama-cpp-deepseek-r1.jinja " + c + g, "tojson of map(...): Jinja's map filter gives a generator,"
                        + " which json.dumps refuses (TypeError); Jinjava's gives a list");
                known.put("meetkai-functionary-medium-v3.1.jinja " + c + g, "\"...\"|safe + text: Jinja's Markup HTML-escapes"
                        + " what is added to it (&#34;); Jinjava has no Markup strings");
            }
        }
        return known;
    }

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
        List<String> unexpected = new ArrayList<>();
        mismatches.forEach((id, problem) -> {
            if (!UNMATCHABLE.containsKey(id)) {
                unexpected.add(id + ": " + problem);
            }
        });
        List<String> nowMatching = UNMATCHABLE.keySet().stream().filter(id -> !mismatches.containsKey(id)).sorted().toList();
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target/template-golden-mismatches.txt"), String.join("\n\n", unexpected));
        assertThat(unexpected).as("%d of %d cases differ from Jinja2 (details in target/template-golden-mismatches.txt)",
                unexpected.size(), total).isEmpty();
        assertThat(nowMatching).as("listed as unmatchable but matching now").isEmpty();
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
