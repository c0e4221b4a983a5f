package io.fdkvc.eval.dialogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddingCacheTest {
    @TempDir
    Path dir;

    static final List<String> TEXTS = List.of("book a table for two", "call me a taxi", "book a table for two", "thanks");

    @Test
    void aSecondRunReadsEveryVectorAndCountFromDiskAndEmbedsNothing() {
        Fixtures.BagOfWords first = new Fixtures.BagOfWords(16);
        List<Double> progress = new ArrayList<>();
        EmbeddingCache cache = new EmbeddingCache(dir, first);
        EmbeddingCache.Table a = cache.lookup("corpus.jsonl.gz", TEXTS, progress::add);
        // duplicates are embedded once
        assertThat(first.embedded).containsExactly("book a table for two", "call me a taxi", "thanks");
        assertThat(progress).last().isEqualTo(1.0);
        assertThat(a.tokens()).containsExactly(5, 4, 5, 1);
        assertThat(Arrays.copyOfRange(a.vectors(), 16, 32)).containsExactly(first.vector("call me a taxi"));
        assertThat(cache.file("corpus.jsonl.gz")).exists().hasParent(dir);
        assertThat(cache.file("corpus.jsonl.gz").getFileName().toString()).startsWith("corpus.jsonl.gz.").endsWith(".emb");
        assertThat(dir).isDirectoryNotContaining("glob:**.tmp"); // the temporary file was moved into place

        Fixtures.BagOfWords second = new Fixtures.BagOfWords(16);
        EmbeddingCache.Table b = new EmbeddingCache(dir, second).lookup("corpus.jsonl.gz", TEXTS, p -> {});
        assertThat(second.embedded).isEmpty();
        assertThat(b.vectors()).containsExactly(a.vectors());
        assertThat(b.tokens()).containsExactly(a.tokens());
    }

    @Test
    void newTextsAreAddedWithoutLosingTheOldOnes() {
        new EmbeddingCache(dir, new Fixtures.BagOfWords(8)).lookup("c", List.of("one two"), p -> {});
        Fixtures.BagOfWords next = new Fixtures.BagOfWords(8);
        new EmbeddingCache(dir, next).lookup("c", List.of("one two", "three"), p -> {});
        assertThat(next.embedded).containsExactly("three");
        Fixtures.BagOfWords last = new Fixtures.BagOfWords(8);
        new EmbeddingCache(dir, last).lookup("c", List.of("three", "one two"), p -> {});
        assertThat(last.embedded).isEmpty();
    }

    @Test
    void anotherModelNeverReadsTheseVectors() {
        new EmbeddingCache(dir, new Fixtures.BagOfWords(8)).lookup("c", List.of("one two"), p -> {});
        // another model keeps its own file and embeds for itself
        Fixtures.BagOfWords other = new Fixtures.BagOfWords(16);
        new EmbeddingCache(dir, other).lookup("c", List.of("one two"), p -> {});
        assertThat(other.embedded).containsExactly("one two");
        assertThat(EmbeddingCache.key("m1", "hello")).isNotEqualTo(EmbeddingCache.key("m2", "hello"));
        // a file whose header contradicts the embedder is refused, not mixed in
        Embedder liar = new Fixtures.BagOfWords(4) {
            @Override public String modelName() { return "bag-of-words-8"; }
        };
        assertThatThrownBy(() -> new EmbeddingCache(dir, liar).lookup("c", List.of("x"), p -> {}))
                .isInstanceOf(InputException.class).hasMessageContaining("dimension 8, expected 4").hasMessageContaining("delete it to rebuild");
    }

    @Test
    void aTruncatedOrForeignFileIsReportedWithItsPath() throws Exception {
        new EmbeddingCache(dir, new Fixtures.BagOfWords(8)).lookup("c", List.of("one two", "three"), p -> {});
        Path f = new EmbeddingCache(dir, new Fixtures.BagOfWords(8)).file("c");
        byte[] bytes = Files.readAllBytes(f);
        Files.write(f, Arrays.copyOf(bytes, bytes.length - 5));
        assertThatThrownBy(() -> new EmbeddingCache(dir, new Fixtures.BagOfWords(8)).lookup("c", List.of("three"), p -> {}))
                .isInstanceOf(InputException.class).hasMessageContaining(f.toString()).hasMessageContaining("truncated");
        Files.writeString(f, "hello");
        assertThatThrownBy(() -> new EmbeddingCache(dir, new Fixtures.BagOfWords(8)).lookup("c", List.of("three"), p -> {}))
                .isInstanceOf(InputException.class).hasMessageContaining(f.toString());
    }

    @Test
    void anEmbedderThatReturnsNonUnitVectorsIsCaught() {
        Embedder bad = new Fixtures.BagOfWords(4) {
            @Override public float[][] embed(List<String> texts) {
                float[][] v = super.embed(texts);
                for (float[] x : v) x[0] += 1;
                return v;
            }
        };
        assertThatThrownBy(() -> new EmbeddingCache(dir, bad).lookup("c", List.of("a"), p -> {}))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("norm");
    }
}
