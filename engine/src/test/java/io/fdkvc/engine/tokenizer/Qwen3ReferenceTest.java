package io.fdkvc.engine.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The real Qwen3 tokenizer (../shared/tokenizers/qwen3, read from its GGUF without weights)
 * against the Hugging Face {@code tokenizers} library's ids for 2,168 strings, in both modes:
 * plain text ({@code ids}) and with special-token strings recognised ({@code ids_specials}).
 * Every string must match; the 20 that are not in NFC match only because of the normaliser.
 */
class Qwen3ReferenceTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static Tokenizer qwen;
    private static List<JsonNode> rows;

    static Path dir() {
        return TestVocabularies.shared().resolve("tokenizers/qwen3");
    }

    @BeforeAll
    static void load() throws IOException {
        qwen = Tokenizers.from(GgufVocabulary.load(dir().resolve("qwen3-tokenizer.gguf")));
        rows = new ArrayList<>();
        for (String line : Files.readAllLines(dir().resolve("reference-ids.jsonl"), StandardCharsets.UTF_8)) {
            rows.add(JSON.readTree(line));
        }
    }

    static int[] ids(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) out[i] = array.get(i).asInt();
        return out;
    }

    @Test
    void theFileIsWhatTheReadmeSays() {
        assertThat(rows).hasSize(2168);
        assertThat(rows.stream().filter(r -> !r.get("nfc").asBoolean()).count()).isEqualTo(20);
        assertThat(qwen.vocabSize()).isEqualTo(151936);
        assertThat(qwen.addBos()).isFalse(); // tokenizer.ggml.add_bos_token = false
        assertThat(qwen.tokenString(qwen.eos())).isEqualTo("<|im_end|>");
    }

    @Test
    void everyStringMatchesHuggingFaceWithAndWithoutSpecialTokens() {
        List<String> plain = new ArrayList<>(), specials = new ArrayList<>();
        for (JsonNode r : rows) {
            String text = r.get("text").asString();
            int[] got = qwen.encode(text);
            if (!Arrays.equals(got, ids(r.get("ids")))) {
                plain.add(r.get("cat").asString() + " " + JSON.writeValueAsString(text) + ": " + Arrays.toString(got));
            }
            int[] gotSpecial = qwen.encodeWithSpecials(text);
            if (!Arrays.equals(gotSpecial, ids(r.get("ids_specials")))) {
                specials.add(r.get("cat").asString() + " " + JSON.writeValueAsString(text) + ": " + Arrays.toString(gotSpecial));
            }
        }
        System.out.printf("Qwen3 reference: %d/%d match as plain text, %d/%d with special tokens%n",
                rows.size() - plain.size(), rows.size(), rows.size() - specials.size(), rows.size());
        assertThat(plain).as("strings whose plain-text ids differ").isEmpty();
        assertThat(specials).as("strings whose ids with special tokens differ").isEmpty();
    }

    /** The normaliser is what makes the decomposed strings match: without NFC they differ. */
    @Test
    void decomposedTextEncodesAsItsComposedForm() {
        int checked = 0;
        for (JsonNode r : rows) {
            String text = r.get("text").asString();
            if (r.get("nfc").asBoolean()) continue;
            String composed = Normalizer.normalize(text, Normalizer.Form.NFC);
            assertThat(composed).isNotEqualTo(text);
            assertThat(qwen.encode(text)).isEqualTo(qwen.encode(composed)).isEqualTo(ids(r.get("ids")));
            checked++;
        }
        assertThat(checked).isEqualTo(20);
        // "é" decomposed (e + U+0301) and composed are one token; the special token around it stays whole
        int[] e = qwen.encodeWithSpecials("<|im_start|>cafe\u0301<|im_end|>");
        assertThat(e).isEqualTo(qwen.encodeWithSpecials("<|im_start|>caf\u00e9<|im_end|>"));
        assertThat(e[0]).isEqualTo(qwen.tokenId("<|im_start|>"));
        assertThat(e[e.length - 1]).isEqualTo(qwen.tokenId("<|im_end|>"));
    }

    /** Decoding gives back the NFC text (HF's decode does the same: the normaliser is not undone). */
    @Test
    void decodingGivesTheNormalisedText() {
        for (JsonNode r : rows) {
            String text = r.get("text").asString();
            if (r.get("cat").asString().equals("invalid")) continue; // lone surrogates came back as U+FFFD
            assertThat(qwen.decode(ids(r.get("ids")))).isEqualTo(Normalizer.normalize(text, Normalizer.Form.NFC));
        }
    }
}
