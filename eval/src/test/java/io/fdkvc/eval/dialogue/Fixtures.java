package io.fdkvc.eval.dialogue;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;

/** Small constructed corpora and a deterministic embedder, so tests need neither data nor ONNX. */
final class Fixtures {
    private Fixtures() {}

    /** Writes {@code lines} as a gzipped JSON Lines file (single quotes become double quotes). */
    static Path gz(Path dir, String name, String... lines) {
        Path f = dir.resolve(name);
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(f))) {
            for (String l : lines) out.write((l.replace('\'', '"') + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return f;
    }

    /**
     * A bag-of-words embedder: each lower-cased word adds 1 to the dimension its hash picks, then
     * the vector is normalised. Texts sharing words get a positive cosine, texts without common
     * words (and no hash collision) a zero one. Tokens = whitespace-separated words.
     */
    static class BagOfWords implements Embedder {
        final int dim;
        final List<String> embedded = new ArrayList<>();

        BagOfWords(int dim) {
            this.dim = dim;
        }

        @Override public String modelName() { return "bag-of-words-" + dim; }
        @Override public int dimension() { return dim; }

        @Override
        public float[][] embed(List<String> texts) {
            float[][] out = new float[texts.size()][];
            for (int i = 0; i < out.length; i++) {
                embedded.add(texts.get(i));
                out[i] = vector(texts.get(i));
            }
            return out;
        }

        float[] vector(String text) {
            float[] v = new float[dim];
            for (String w : words(text)) v[Math.floorMod(w.hashCode(), dim)] += 1;
            double n = 0;
            for (float x : v) n += x * x;
            for (int k = 0; k < dim; k++) v[k] /= (float) Math.sqrt(n);
            return v;
        }

        @Override
        public int tokenCount(String text) {
            return words(text).length;
        }

        private static String[] words(String text) {
            return text.toLowerCase(java.util.Locale.ROOT).trim().split("\\s+");
        }
    }

    /** A dialogue whose turn i has the given topic and text "w_i w_i ..." of tokens[i] words, no refs. */
    static EmbeddedDialogue orthogonal(String id, int[] tokens, String... topics) {
        int n = tokens.length;
        int dim = n;
        float[] e = new float[n * dim];
        List<Utterance> turns = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            e[i * dim + i] = 1; // pairwise orthogonal unit embeddings
            turns.add(Utterance.of("USER", "turn " + i, topics.length == 0 ? null : topics[i]));
        }
        return new EmbeddedDialogue(new Dialogue(id, turns), dim, e, tokens.clone());
    }
}
