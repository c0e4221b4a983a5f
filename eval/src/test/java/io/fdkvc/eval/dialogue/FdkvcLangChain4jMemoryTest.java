package io.fdkvc.eval.dialogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.eval.report.MetricResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** FdkvcChatMemory as a row of the dialogue evaluation. */
class FdkvcLangChain4jMemoryTest {
    @TempDir
    Path dir;

    /** Alternating USER / SYSTEM utterances with random unit embeddings, costs and words. */
    static EmbeddedDialogue alternating(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        int dim = 8;
        float[] e = new float[n * dim];
        int[] tokens = new int[n];
        List<Utterance> turns = new ArrayList<>();
        String[] words = {"paris", "rome", "hotel", "7pm", "train", "sushi", "june"};
        for (int i = 0; i < n; i++) {
            double norm = 0;
            for (int k = 0; k < dim; k++) {
                e[i * dim + k] = (float) r.nextGaussian();
                norm += e[i * dim + k] * e[i * dim + k];
            }
            for (int k = 0; k < dim; k++) e[i * dim + k] /= (float) Math.sqrt(norm);
            tokens[i] = 1 + r.nextInt(10);
            String text = "u" + i + " " + words[r.nextInt(words.length)] + " " + words[r.nextInt(words.length)];
            turns.add(Utterance.of(i % 2 == 0 ? "USER" : "SYSTEM", text, null));
        }
        return new EmbeddedDialogue(new Dialogue("a", turns), dim, e, tokens);
    }

    @Provide
    Arbitrary<String> policies() {
        return Arbitraries.of("fdkvc-dialogue", "window", "fdkvc", "tova", "h2o");
    }

    /**
     * Fed the evaluation's numbers, the memory runs the very policy state of the policy's row.
     * Without packing (so without the memory's refill) what it shows is what that policy keeps
     * plus the current exchange (the last user turn and what follows), never more; with packing
     * it may also refill from the transcript. Either way it stays within the budget and shows the
     * whole exchange whenever the exchange fits.
     */
    @Property(tries = 150)
    void theRowIsThePolicysCachePlusTheCurrentExchange(@ForAll("policies") String policy, @ForAll long seed,
                                                        @ForAll @IntRange(min = 1, max = 24) int n,
                                                        @ForAll @IntRange(min = 1, max = 40) int budget, @ForAll boolean packing) {
        EmbeddedDialogue d = alternating(seed, n);
        boolean[][] row = DialogueSimulator.run(d, FdkvcLangChain4jMemory.factory(policy, packing).open(d, budget, 0.05));
        boolean[][] pol = DialogueSimulator.run(d, new PolicyMemory.Factory(PolicyRegistry.template(policy, java.util.Map.of()), packing).open(d, budget, 0.05));
        for (int t = 1; t < n; t++) {
            int lastUser = (t - 1) % 2 == 0 ? t - 1 : t - 2; // turns alternate from a user turn
            int exchange = 0;
            for (int j = lastUser; j < t; j++) exchange += d.tokens()[j];
            int cost = 0;
            for (int j = 0; j < t; j++) {
                if (!row[t][j]) continue;
                cost += d.tokens()[j];
                if (!packing) {
                    assertThat(pol[t][j] || j >= lastUser).as("turn %d shown at %d: kept by the policy or in the exchange", j, t).isTrue();
                }
            }
            assertThat(cost).isLessThanOrEqualTo(budget);
            if (exchange <= budget) {
                for (int j = lastUser; j < t; j++) assertThat(row[t][j]).as("exchange turn %d at %d", j, t).isTrue();
            }
        }
    }

    @Test
    void theRowCarriesTheSameColumnsAsEveryPolicy() throws Exception {
        DialogueEvaluationTest fixture = new DialogueEvaluationTest();
        fixture.dir = dir;
        DialogueOptions o = DialogueOptions.defaults(Dataset.SGD, fixture.corpus()).withBudgetTokens(4).withSweep(List.of(0.2, 0.5))
                .withEmbeddingCache(dir.resolve("cache")).withThreads(2);
        assertThat(o.policies()).contains(FdkvcLangChain4jMemory.LABEL);
        DialogueResults r = DialogueEvaluation.run(o, dir.resolve("out"), f -> {}, new Fixtures.BagOfWords(32));
        TreeSet<String> window = new TreeSet<>();
        TreeSet<String> mine = new TreeSet<>();
        for (MetricResult m : r.results()) {
            if (m.policy().equals("window")) window.add(m.metric());
            if (m.policy().equals(FdkvcLangChain4jMemory.LABEL)) mine.add(m.metric());
        }
        assertThat(mine).isEqualTo(window).isNotEmpty();
        String csv = io.fdkvc.eval.report.ResultsCsv.format(r.results());
        assertThat(csv).contains("," + FdkvcLangChain4jMemory.LABEL + ",needed_context_recall,")
                .contains("," + FdkvcLangChain4jMemory.LABEL + " vs window,");
        assertThat(r.markdown()).contains("| " + FdkvcLangChain4jMemory.LABEL + " |");
    }
}
