package io.fdkvc.eval.dialogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.fdkvc.core.InputException;
import io.fdkvc.eval.report.MetricResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DialogueEvaluationTest {
    @TempDir
    Path dir;

    static String turn(String service, String text, int... refs) {
        StringBuilder r = new StringBuilder();
        for (int j : refs) r.append(r.isEmpty() ? "" : ", ").append("{'turn': ").append(j).append(", 'values': ['v']}");
        return "{'speaker': 'USER', 'utterance': '" + text + "', 'service': '" + service + "', 'services': ['" + service + "'], 'refs': [" + r + "]}";
    }

    /** d1: four 2-token turns, turn 3 needs turns 0 and 2; d2: three 1-token turns, turn 2 needs turn 0. */
    Path corpus() {
        return Fixtures.gz(dir, "mini-sgd.jsonl.gz",
                "{'dialogue_id': 'd1', 'turns': [" + turn("A", "alpha beta") + ", " + turn("A", "gamma delta") + ", "
                        + turn("B", "epsilon zeta") + ", " + turn("A", "alpha zeta", 0, 2) + "]}",
                "{'dialogue_id': 'd2', 'turns': [" + turn("A", "one") + ", " + turn("A", "two") + ", " + turn("A", "three", 0) + "]}");
    }

    static MetricResult row(List<MetricResult> rows, String policy, String metric) {
        return rows.stream().filter(r -> r.policy().equals(policy) && r.metric().equals(metric)).findFirst()
                .orElseThrow(() -> new AssertionError("no row " + policy + " " + metric + " in " + rows));
    }

    @Test
    void windowRecallOnASmallCorpusMatchesTheHandCount() throws Exception {
        DialogueOptions o = DialogueOptions.defaults(Dataset.SGD, corpus())
                .withPolicies(List.of("window", "full", "fdkvc", "h2o", "h2o-paper"), Map.of())
                .withBudgetTokens(4).withSweep(List.of(0.5)).withEmbeddingCache(dir.resolve("cache")).withThreads(2);
        List<Double> progress = new ArrayList<>();
        Path out = dir.resolve("out");
        DialogueResults r = DialogueEvaluation.run(o, out, progress::add, new Fixtures.BagOfWords(32));

        // 4 tokens: d1 turn 3 finds turns {1, 2}: 1 of 2 references; d2 turn 2 finds {0, 1}: 1 of 1
        MetricResult w = row(r.results(), "window", "needed_context_recall");
        assertThat(w.mean()).isCloseTo(0.75, within(1e-12));
        assertThat(w.n()).isEqualTo(2);
        assertThat(w.ciLow()).isLessThanOrEqualTo(0.75);
        assertThat(w.ciHigh()).isGreaterThanOrEqualTo(0.75);
        assertThat(w.scenario()).isEqualTo("sgd");
        // 50% of each dialogue: 4 of 8 tokens (d1, as above), 2 of 3 (d2: turns {0, 1})
        assertThat(row(r.results(), "window", "needed_context_recall@50%").mean()).isCloseTo(0.75, within(1e-12));
        assertThat(row(r.results(), "full", "needed_context_recall").mean()).isEqualTo(1.0);
        // only d1 has a reference of a returning segment (turn 3 comes back to A) and none reaches 6 turns
        assertThat(row(r.results(), "window", "needed_context_recall_return").mean()).isEqualTo(0.5);
        assertThat(row(r.results(), "window", "needed_context_recall_far").n()).isZero();
        assertThat(row(r.results(), "fdkvc vs h2o", "needed_context_recall_relative_improvement").n()).isEqualTo(2);
        assertThat(row(r.results(), "fdkvc vs h2o-paper", "needed_context_recall_relative_improvement").n()).isEqualTo(2);

        Path png = out.resolve("dialogue-sgd-sweep.png");
        assertThat(Files.readAllBytes(png)).startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
        assertThat(r.markdown()).contains("](dialogue-sgd-sweep.png)").contains("| window | 0.750");
        assertThat(progress).isSorted().last().isEqualTo(1.0);
    }

    @Test
    void langChain4jMemoriesAndFdkvcDialogueAreRowsWithTheSameColumnsAsEveryPolicy() throws Exception {
        DialogueOptions o = DialogueOptions.defaults(Dataset.SGD, corpus()).withBudgetTokens(4).withSweep(List.of(0.2, 0.5))
                .withEmbeddingCache(dir.resolve("cache")).withThreads(2);
        assertThat(o.policies()).contains("fdkvc-dialogue", LangChain4jMemory.TOKEN_WINDOW, LangChain4jMemory.MESSAGE_WINDOW);
        DialogueResults r = DialogueEvaluation.run(o, dir.resolve("out"), f -> {}, new Fixtures.BagOfWords(32));
        java.util.Set<String> windowMetrics = new java.util.TreeSet<>();
        for (MetricResult m : r.results()) if (m.policy().equals("window")) windowMetrics.add(m.metric());
        assertThat(windowMetrics).contains("needed_value_recall_any", "needed_value_recall_any@20%", "needed_context_recall_system@50%");
        for (String p : List.of(LangChain4jMemory.TOKEN_WINDOW, LangChain4jMemory.MESSAGE_WINDOW, "fdkvc-dialogue")) {
            java.util.Set<String> mine = new java.util.TreeSet<>();
            for (MetricResult m : r.results()) if (m.policy().equals(p)) mine.add(m.metric());
            assertThat(mine).as(p).isEqualTo(windowMetrics);
        }
        // the token window drops the oldest until 4 tokens fit, like the window: 0.75 as counted above
        assertThat(row(r.results(), LangChain4jMemory.TOKEN_WINDOW, "needed_context_recall").mean()).isCloseTo(0.75, within(1e-12));
        // the CSV carries them like every row
        String csv = io.fdkvc.eval.report.ResultsCsv.format(r.results());
        assertThat(csv).contains("," + LangChain4jMemory.TOKEN_WINDOW + ",needed_context_recall,")
                .contains("," + LangChain4jMemory.MESSAGE_WINDOW + ",needed_value_recall_any@20%,")
                .contains(",fdkvc-dialogue vs window,needed_context_recall_relative_improvement@50%,");
        assertThat(r.markdown()).contains("| " + LangChain4jMemory.TOKEN_WINDOW + " |").contains("Budget sweep: needed_value_recall_any");
        assertThat(Files.exists(dir.resolve("out").resolve("dialogue-sgd-sweep-needed_value_recall_any.png"))).isTrue();
    }

    @Test
    void aPolicyThatCannotMeetTheBudgetIsReportedWithDialogueAndBudget() {
        // streaming keeps its 4 sink utterances whatever they cost: 4 tokens cannot hold 5 of them
        DialogueOptions o = DialogueOptions.defaults(Dataset.SGD, corpus()).withPolicies(List.of("streaming"), Map.of())
                .withBudgetTokens(5).withSweep(List.of(0.5)).withEmbeddingCache(dir.resolve("cache")).withThreads(1);
        assertThatThrownBy(() -> DialogueEvaluation.run(o, dir.resolve("out"), p -> {}, new Fixtures.BagOfWords(8)))
                .isInstanceOf(InputException.class).hasMessageContaining("policy streaming at a budget of")
                .hasMessageContaining("on dialogue d");
    }

    @Test
    void theDefaultBudgetIsAShareOfTheMedianDialogue() {
        List<EmbeddedDialogue> ds = List.of(Fixtures.orthogonal("a", new int[] {10}), Fixtures.orthogonal("b", new int[] {20}),
                Fixtures.orthogonal("c", new int[] {30}), Fixtures.orthogonal("d", new int[] {100}));
        // median 25 tokens, 30% = 7.5 -> 8
        assertThat(DialogueEvaluation.headlineBudget(ds, null)).isEqualTo(8);
        assertThat(DialogueEvaluation.headlineBudget(ds.subList(0, 3), null)).isEqualTo(6);
        assertThat(DialogueEvaluation.headlineBudget(ds, 17)).isEqualTo(17);
    }

    @Test
    void theSampleIsSeededAndKeepsFileOrder() {
        List<Dialogue> all = new ArrayList<>();
        for (int i = 0; i < 50; i++) all.add(new Dialogue("d" + i, List.of(Utterance.of("USER", "x", null))));
        List<Dialogue> a = DialogueEvaluation.sample(all, 10, 7);
        assertThat(a).hasSize(10).doesNotHaveDuplicates();
        assertThat(a).isEqualTo(DialogueEvaluation.sample(all, 10, 7));
        assertThat(a).isNotEqualTo(DialogueEvaluation.sample(all, 10, 8));
        List<Integer> idx = a.stream().map(all::indexOf).toList();
        assertThat(idx).isSorted();
        assertThat(DialogueEvaluation.sample(all, 0, 7)).isSameAs(all);
    }

    @Test
    void shareBudgetsRoundUpButNotAtExactProducts() {
        EmbeddedDialogue d200 = Fixtures.orthogonal("x", new int[] {100, 100});
        assertThat(Budget.share(0.3).of(d200)).isEqualTo(60);
        assertThat(Budget.share(0.1).of(Fixtures.orthogonal("y", new int[] {1, 2}))).isEqualTo(1);
        assertThat(Budget.share(0.35).of(Fixtures.orthogonal("z", new int[] {5, 5}))).isEqualTo(4);
        assertThat(Budget.percent(0.3)).isEqualTo("30%");
        assertThat(Budget.percent(0.125)).isEqualTo("12.5%");
    }
}
