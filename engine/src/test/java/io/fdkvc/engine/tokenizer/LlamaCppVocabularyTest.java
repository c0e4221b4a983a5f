package io.fdkvc.engine.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.InputException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every test case of llama.cpp's vocabulary-only GGUF files ({@code ../shared/tokenizers/llama.cpp-vocab},
 * its {@code .inp}/{@code .out} pairs as its {@code test-tokenizer-0} reads them): the ids of each
 * input, without BOS and with special-token strings as plain text, must be exactly llama.cpp's.
 */
class LlamaCppVocabularyTest {
    private static final String SEPARATOR = "\n__ggml_vocab_test__\n";

    /** One input of one file, its expected ids and what this tokenizer gives. */
    record Case(String file, int index, String text, int[] expected, int[] actual, String error) {
        boolean matches() {
            return error == null && Arrays.equals(expected, actual);
        }

        @Override
        public String toString() {
            return file + " #" + index + " " + quoted(text) + ": want " + Arrays.toString(expected) + ", got "
                    + (error != null ? error : Arrays.toString(actual));
        }
    }

    static String quoted(String s) {
        StringBuilder sb = new StringBuilder("\"");
        s.codePoints().forEach(cp -> {
            if (cp == '\n') sb.append("\\n");
            else if (cp == '\t') sb.append("\\t");
            else if (cp < 0x20 || cp == 0x7f) sb.append(String.format("\\u%04x", cp));
            else sb.appendCodePoint(cp);
        });
        return sb.append('"').toString();
    }

    static List<Case> cases(Path gguf) throws IOException {
        String inputs = Files.readString(Path.of(gguf + ".inp"), StandardCharsets.UTF_8);
        List<String> outputs = Files.readAllLines(Path.of(gguf + ".out"), StandardCharsets.UTF_8);
        // every file ends with a separator except gemma-4's, whose last input runs to the end
        String body = inputs.endsWith(SEPARATOR) ? inputs.substring(0, inputs.length() - SEPARATOR.length()) : inputs;
        String[] texts = body.split(SEPARATOR, -1);
        assertThat(outputs).as(gguf + ".out: one line per input").hasSize(texts.length);
        Tokenizer tokenizer = null;
        String loadError = null;
        try {
            tokenizer = Tokenizers.from(GgufVocabulary.load(gguf));
        } catch (InputException e) {
            loadError = e.getMessage();
        }
        List<Case> result = new ArrayList<>();
        for (int i = 0; i < texts.length; i++) {
            String line = outputs.get(i).strip();
            int[] expected = line.isEmpty() ? new int[0] : Arrays.stream(line.split(" +")).mapToInt(Integer::parseInt).toArray();
            int[] actual = null;
            String error = loadError;
            if (tokenizer != null) {
                try {
                    actual = tokenizer.encode(texts[i]);
                } catch (RuntimeException e) {
                    error = e.toString();
                }
            }
            result.add(new Case(gguf.getFileName().toString(), i, texts[i], expected, actual, error));
        }
        return result;
    }

    @Test
    void everyCaseOfEveryFileMatchesLlamaCpp() throws IOException {
        Path dir = TestVocabularies.shared().resolve("tokenizers/llama.cpp-vocab");
        List<Path> files;
        try (Stream<Path> list = Files.list(dir)) {
            files = list.filter(p -> p.toString().endsWith(".gguf")).sorted().toList();
        }
        assertThat(files).hasSize(11);
        List<Case> all = new ArrayList<>();
        for (Path f : files) {
            all.addAll(cases(f));
        }
        List<String> mismatches = all.stream().filter(c -> !c.matches()).map(Case::toString).toList();
        assertThat(all.size()).isGreaterThanOrEqualTo(510);
        assertThat(mismatches).as("%d of %d cases differ from llama.cpp", mismatches.size(), all.size()).isEmpty();
    }
}
