package io.fdkvc.eval.dialogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The real model, on four sentences only: loading it takes seconds, embedding is CPU-heavy. */
class MiniLmEmbedderTest {

    static double dot(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) s += (double) a[i] * b[i];
        return s;
    }

    @Test
    void returnsUnitVectorsThatPutParaphrasesCloserThanUnrelatedSentences() {
        try (MiniLmEmbedder m = new MiniLmEmbedder(2)) {
            float[][] v = m.embed(List.of(
                    "I would like to book a table for two at an Italian restaurant.",
                    "Can you reserve a table for 2 people at an Italian place?",
                    "The train to Cambridge leaves at 5 pm on Friday.",
                    "My cat loves sleeping in the sun."));
            assertThat(m.dimension()).isEqualTo(384);
            for (float[] x : v) {
                assertThat(x).hasSize(384);
                assertThat(Math.sqrt(dot(x, x))).isCloseTo(1.0, within(1e-4));
            }
            double paraphrase = dot(v[0], v[1]);
            assertThat(paraphrase).isGreaterThan(dot(v[0], v[2])).isGreaterThan(dot(v[0], v[3]));
            assertThat(paraphrase).isGreaterThan(dot(v[1], v[2])).isGreaterThan(dot(v[1], v[3]));
            // WordPiece tokens without [CLS]/[SEP]: "my cat loves sleeping in the sun ." = 8
            assertThat(m.tokenCount("My cat loves sleeping in the sun.")).isEqualTo(8);
        }
    }
}
