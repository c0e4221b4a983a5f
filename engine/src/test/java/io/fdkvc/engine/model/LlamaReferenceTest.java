package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * Greedy generation on the real stories260K model must print exactly what llama2.c's run.c
 * printed (the reference files in shared/models/stories260K). Any error in RMSNorm, RoPE,
 * grouped-query attention, SwiGLU, the tied classifier or the cache shows up as a different story.
 */
class LlamaReferenceTest {
    static LoadedModel bin, gguf;

    @BeforeAll
    static void load() {
        bin = Llama2cLoader.load(Stories260K.bin(), Stories260K.tokenizer());
        gguf = GgufModelLoader.load(Stories260K.gguf());
    }

    @AfterAll
    static void close() {
        bin.close();
        gguf.close();
    }

    @Test
    void binConfigMatchesTheReadme() {
        LlamaConfig c = bin.config();
        assertThat(c.dim()).isEqualTo(64);
        assertThat(c.hiddenDim()).isEqualTo(172);
        assertThat(c.layers()).isEqualTo(5);
        assertThat(c.heads()).isEqualTo(8);
        assertThat(c.kvHeads()).isEqualTo(4);
        assertThat(c.headDim()).isEqualTo(8);
        assertThat(c.vocabSize()).isEqualTo(512);
        assertThat(c.contextLength()).isEqualTo(512);
        assertThat(c.tiedEmbeddings()).isTrue();
        assertThat(bin.weights().output()).isSameAs(bin.weights().tokenEmbedding());
    }

    @Test
    void onceUponATime64StepsEqualsRunC() {
        assertThat(Stories260K.runc(bin, "Once upon a time", 64))
                .isEqualTo(Stories260K.reference("runc_greedy_once_upon_a_time_64.txt"));
    }

    @Test
    void noPrompt256StepsEqualsRunC() {
        assertThat(Stories260K.runc(bin, "", 256)).isEqualTo(Stories260K.reference("runc_greedy_noprompt_256.txt"));
    }

    /** The GGUF file holds the same weights and tokenizer: the same stories. */
    @Test
    void theGgufFileTellsTheSameStories() {
        assertThat(gguf.config().layers()).isEqualTo(5);
        assertThat(gguf.config().kvHeads()).isEqualTo(4);
        assertThat(Stories260K.runc(gguf, "Once upon a time", 64))
                .isEqualTo(Stories260K.reference("runc_greedy_once_upon_a_time_64.txt"));
        assertThat(Stories260K.runc(gguf, "", 256)).isEqualTo(Stories260K.reference("runc_greedy_noprompt_256.txt"));
    }

    /** The llama2.c tokenizer file, respelled, is the GGUF's vocabulary. */
    @Test
    void theLlama2cTokenizerSpellsTokensAsTheGgufDoes() {
        assertThat(bin.vocabulary().tokens()).containsExactly(gguf.vocabulary().tokens());
        assertThat(bin.vocabulary().scores()).containsExactly(gguf.vocabulary().scores());
        assertThat(bin.vocabulary().tokenTypes()).containsExactly(gguf.vocabulary().tokenTypes());
        assertThat(bin.vocabulary().bos()).isEqualTo(gguf.vocabulary().bos());
        assertThat(bin.vocabulary().eos()).isEqualTo(gguf.vocabulary().eos());
    }

    /**
     * A budget larger than the sequence evicts nothing, so neither way of counting positions,
     * nor small prefill chunks, nor a turn split into chunks (policy updates mid-turn) may change
     * the story. FD-KVC's threshold (tau) and eq. 9 bias act below the budget once a turn has
     * been scored, so with mid-turn updates it runs with both off; with one turn (the update
     * comes after the reply) it runs with its defaults.
     */
    @ParameterizedTest
    @CsvSource({
            "fdkvc,  '',              cache,    512, 64",
            "fdkvc,  '',              original, 512, 64",
            "fdkvc,  'tau=0;beta=0',  cache,    100, 7",
            "fdkvc,  'tau=0;beta=0',  original, 40,  40",
            "window, '',              cache,    33,  1",
            "h2o,    '',              original, 64,  16",
            "tova,   '',              cache,    20,  5",
            "full,   '',              original, 50,  3",
    })
    void budgetLargerThanTheSequenceChangesNothing(String policy, String params, String positions, int maxTurnTokens,
                                                   int batch) {
        Map<String, String> p = new java.util.LinkedHashMap<>();
        for (String kv : params.split(";")) if (!kv.isBlank()) p.put(kv.split("=")[0], kv.split("=")[1]);
        var spec = PolicyRegistry.spec(policy, 300, p);
        assertThat(Stories260K.runc(bin, "", 256, spec, PositionMode.parse(positions), maxTurnTokens, batch))
                .isEqualTo(Stories260K.reference("runc_greedy_noprompt_256.txt"));
    }
}
