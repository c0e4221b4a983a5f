package io.fdkvc.core.policy.dialogue;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DialogueFeaturesTest {

    private static int nonZero(float[] f, int from, int to) {
        int n = 0;
        for (int i = from; i < to; i++) if (f[i] != 0) n++;
        return n;
    }

    @Test
    void contentWordsAreHashedStopWordsDroppedValuesWeighedAndTheSpeakerTagged() {
        float[] f = DialogueFeatures.of("Book a table at Sushi Bistro for 7 pm, please.", DialogueFeatures.Speaker.USER);
        assertThat(f).hasSize(DialogueFeatures.DIMENSION);
        // book, table, sushi, bistro, 7, pm: "a", "at", "for", "please" are stop words
        assertThat(nonZero(f, 0, DialogueFeatures.LEXICAL)).isEqualTo(6);
        assertThat(f[DialogueFeatures.bucket("book")]).isEqualTo(1f); // sentence-initial capital: not a name
        assertThat(f[DialogueFeatures.bucket("table")]).isEqualTo(1f);
        assertThat(f[DialogueFeatures.bucket("sushi")]).isEqualTo(2f); // a capital inside the sentence: a name
        assertThat(f[DialogueFeatures.bucket("7")]).isEqualTo(2f);     // a digit: a value
        assertThat(f[DialogueFeatures.bucket("pm")]).isEqualTo(1f);
        assertThat(f[DialogueFeatures.LEXICAL]).isEqualTo(1f);
        assertThat(f[DialogueFeatures.LEXICAL + 1]).isEqualTo(0f);
        // case and punctuation do not change a word's bucket; the assistant's tag is the other slot
        float[] g = DialogueFeatures.of("sushi BISTRO?", DialogueFeatures.Speaker.ASSISTANT);
        assertThat(g[DialogueFeatures.bucket("sushi")]).isEqualTo(1f);
        assertThat(g[DialogueFeatures.bucket("bistro")]).isEqualTo(2f);
        assertThat(g[DialogueFeatures.LEXICAL]).isEqualTo(0f);
        assertThat(g[DialogueFeatures.LEXICAL + 1]).isEqualTo(1f);
        assertThat(DialogueFeatures.of("Thank you, that's all.", DialogueFeatures.Speaker.UNKNOWN)).containsOnly(0f);
        assertThat(DialogueFeatures.next(DialogueFeatures.Speaker.USER)).isEqualTo(DialogueFeatures.Speaker.ASSISTANT);
        assertThat(DialogueFeatures.next(DialogueFeatures.Speaker.UNKNOWN)).isEqualTo(DialogueFeatures.Speaker.UNKNOWN);
    }

    @Test
    void bucketsAreStable() {
        // FNV-1a over the UTF-8 bytes, computed here by hand for one byte: the layout must not change between runs or JVMs
        int h = 0x811c9dc5;
        h ^= '7';
        h *= 0x01000193;
        assertThat(DialogueFeatures.bucket("7")).isEqualTo(Math.floorMod(h, DialogueFeatures.LEXICAL));
    }
}
