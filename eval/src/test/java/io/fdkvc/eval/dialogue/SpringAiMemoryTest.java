package io.fdkvc.eval.dialogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.eval.report.MetricResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Spring AI's memories as rows of the dialogue evaluation. */
class SpringAiMemoryTest {
    @TempDir
    Path dir;

    /** The Spring memory keeps, turn by turn, exactly what the LangChain4j memory keeps: they share their selection. */
    @Property(tries = 100)
    void theSpringMemoryKeepsWhatTheLangChain4jMemoryKeeps(@ForAll long seed, @ForAll @IntRange(min = 1, max = 24) int n,
                                                           @ForAll @IntRange(min = 1, max = 40) int budget) {
        EmbeddedDialogue d = FdkvcLangChain4jMemoryTest.alternating(seed, n);
        boolean[][] spring = DialogueSimulator.run(d, SpringAiMemory.fdkvc().open(d, budget, 0.05));
        boolean[][] lc4j = DialogueSimulator.run(d, FdkvcLangChain4jMemory.factory().open(d, budget, 0.05));
        assertThat(spring).isDeepEqualTo(lc4j);
    }

    /** MessageWindowChatMemory with 3 messages on alternating turns: the last three, cut forward to a user turn. */
    @Test
    void theMessageWindowKeepsTheLastMessagesFromAUserTurn() {
        EmbeddedDialogue d = FdkvcLangChain4jMemoryTest.alternating(1, 7);
        boolean[][] kept = DialogueSimulator.run(d, SpringAiMemory.messageWindow(10).open(d, 30, 0.05)); // 30 / 10 = 3 messages
        // before turn 6 the memory holds turns 0..5; the last three are 3 (system), 4 (user), 5: it starts at 4
        assertThat(kept[6]).containsExactly(false, false, false, false, true, true, false);
        // before turn 5: turns 2 (user), 3, 4 fit as they are
        assertThat(kept[5]).containsExactly(false, false, true, true, true, false, false);
    }

    @Test
    void bothRowsAreInTheEvaluationAndTheFdkvcRowsAreEqual() throws Exception {
        DialogueEvaluationTest fixture = new DialogueEvaluationTest();
        fixture.dir = dir;
        DialogueOptions o = DialogueOptions.defaults(Dataset.SGD, fixture.corpus()).withBudgetTokens(4).withSweep(List.of(0.2, 0.5))
                .withEmbeddingCache(dir.resolve("cache")).withThreads(2);
        assertThat(o.policies()).contains(SpringAiMemory.MESSAGE_WINDOW, SpringAiMemory.FDKVC);
        DialogueResults r = DialogueEvaluation.run(o, dir.resolve("out"), f -> {}, new Fixtures.BagOfWords(32));
        Map<String, String> spring = new TreeMap<>();
        Map<String, String> lc4j = new TreeMap<>();
        List<String> window = new ArrayList<>();
        for (MetricResult m : r.results()) {
            String key = m.scenario() + " " + m.metric();
            String value = m.mean() + " [" + m.ciLow() + ", " + m.ciHigh() + "] n=" + m.n();
            if (m.policy().equals(SpringAiMemory.FDKVC)) spring.put(key, value);
            if (m.policy().equals(FdkvcLangChain4jMemory.LABEL)) lc4j.put(key, value);
            if (m.policy().equals(SpringAiMemory.MESSAGE_WINDOW)) window.add(m.metric());
        }
        assertThat(spring).isNotEmpty().isEqualTo(lc4j);
        assertThat(window).isNotEmpty();
        assertThat(r.markdown()).contains("| " + SpringAiMemory.FDKVC + " |").contains("| " + SpringAiMemory.MESSAGE_WINDOW + " |");
    }
}
