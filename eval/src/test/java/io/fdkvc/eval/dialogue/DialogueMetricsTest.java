package io.fdkvc.eval.dialogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class DialogueMetricsTest {

    /** cached[t][j] from a list of the turns cached at each arrival. */
    static boolean[][] cache(int n, int[]... held) {
        boolean[][] c = new boolean[n][n];
        for (int t = 0; t < held.length; t++) for (int j : held[t]) c[t][j] = true;
        return c;
    }

    static Utterance sgd(String topic, int... refs) {
        return new Utterance("USER", "x", topic, refs, 0);
    }

    // Topics A A B B A A A A; turn 2 needs 0, turn 4 needs 1, turn 7 needs 0 and 6.
    static final Dialogue SGD = new Dialogue("s", List.of(sgd("A"), sgd("A"), sgd("B", 0), sgd("B"),
            sgd("A", 1), sgd("A"), sgd("A"), sgd("A", 0, 6)));
    static final int[] SGD_TOKENS = {1, 2, 3, 4, 1, 2, 3, 4};
    static final boolean[][] SGD_CACHE = cache(8, new int[] {}, new int[] {0}, new int[] {0, 1}, new int[] {1, 2},
            new int[] {2, 3}, new int[] {3, 4}, new int[] {4, 5}, new int[] {5, 6});

    @Test
    void neededContextRecallCountsEachReferenceOnce() {
        // (2<-0) held, (4<-1) not, (7<-0) not, (7<-6) held
        assertThat(DialogueMetrics.neededContextRecall(SGD, SGD_CACHE, DialogueMetrics.RefScope.ALL)).isEqualTo(0.5);
        // only 7<-0 reaches six turns back
        assertThat(DialogueMetrics.neededContextRecall(SGD, SGD_CACHE, DialogueMetrics.RefScope.FAR)).isEqualTo(0.0);
        // the dialogue returns to A at turn 4: references of turns 4..7 are 4<-1, 7<-0, 7<-6
        assertThat(DialogueMetrics.neededContextRecall(SGD, SGD_CACHE, DialogueMetrics.RefScope.RETURN)).isCloseTo(1.0 / 3, within(1e-12));
    }

    @Test
    void valueRecallAnyCreditsAnyMentionAndTheSystemScopeKeepsSystemTurns() {
        // turn 3 (USER) needs value a said at turns 2 and 0, value b said at turn 1;
        // turn 4 (SYSTEM) needs value c said at turns 3 and 1 and has ref 3.
        List<Utterance> turns = List.of(
                new Utterance("USER", "x", null, null, 0), new Utterance("SYSTEM", "x", null, null, 0),
                new Utterance("USER", "x", null, null, 0),
                new Utterance("USER", "x", null, new int[] {1, 2}, 0, new int[][] {{2, 0}, {1}}),
                new Utterance("SYSTEM", "x", null, new int[] {3}, 0, new int[][] {{3, 1}}));
        Dialogue d = new Dialogue("v", turns);
        boolean[][] cached = new boolean[5][5];
        cached[3][0] = true; // an older mention of a: a counts, b does not -> turn 3: 1 of 2
        cached[4][1] = true; // an older mention of c -> turn 4: 1 of 1; its ref (turn 3) is not held
        assertThat(DialogueMetrics.neededValueRecallAny(d, cached, false)).isEqualTo(2.0 / 3);
        assertThat(DialogueMetrics.neededValueRecallAny(d, cached, true)).isEqualTo(1.0);
        // refs: turn 3 needs 1 and 2 (neither held), turn 4 needs 3 (not held)
        assertThat(DialogueMetrics.neededContextRecall(d, cached, DialogueMetrics.RefScope.ALL)).isEqualTo(0.0);
        assertThat(DialogueMetrics.neededContextRecall(d, cached, DialogueMetrics.RefScope.SYSTEM)).isEqualTo(0.0);
        cached[4][3] = true;
        assertThat(DialogueMetrics.neededContextRecall(d, cached, DialogueMetrics.RefScope.SYSTEM)).isEqualTo(1.0);
        assertThat(DialogueMetrics.neededContextRecall(d, cached, DialogueMetrics.RefScope.ALL)).isEqualTo(1.0 / 3);
        // no needs anywhere: undefined
        assertThat(DialogueMetrics.neededValueRecallAny(new Dialogue("e", List.of(turns.get(0))), new boolean[1][1], false)).isNaN();
    }

    @Test
    void returnTurnsAreTheSegmentsThatComeBackToAnEarlierTopic() {
        assertThat(DialogueMetrics.returnTurns(SGD)).containsExactly(false, false, false, false, true, true, true, true);
        Dialogue abcb = new Dialogue("r", List.of(sgd("A"), sgd("B"), sgd("C"), sgd("B"), sgd("A"), sgd("A"), sgd("C")));
        assertThat(DialogueMetrics.returnTurns(abcb)).containsExactly(false, false, false, true, true, true, true);
    }

    @Test
    void precisionWeighsCachedTokensAndDiversityCountsTopics() {
        // per turn 1..7: 1, 0, 3/5, 0, 1/5, 1, 1
        assertThat(DialogueMetrics.currentTopicPrecision(SGD, SGD_CACHE, SGD_TOKENS)).isCloseTo(3.8 / 7, within(1e-12));
        // per turn 1..7: 1, 1, 1, 1/2, 1, 1/2, 1/2
        assertThat(DialogueMetrics.topicDiversity(SGD, SGD_CACHE)).isCloseTo(5.5 / 7, within(1e-12));
    }

    @Test
    void cacheFillComparesWhatIsHeldWithWhatCouldBe() {
        // budget 7; per turn 1..7: 1/1, 3/3, 5/6, 7/7, 5/7, 3/7, 5/7
        assertThat(DialogueMetrics.cacheFill(SGD, SGD_CACHE, SGD_TOKENS, 7)).isCloseTo(239.0 / 294, within(1e-12));
        // an unbounded cache that keeps everything fills what was said
        boolean[][] all = new boolean[8][8];
        for (int t = 0; t < 8; t++) for (int j = 0; j < t; j++) all[t][j] = true;
        assertThat(DialogueMetrics.cacheFill(SGD, all, SGD_TOKENS, Long.MAX_VALUE)).isEqualTo(1.0);
        assertThat(DialogueMetrics.cacheFill(SGD, new boolean[8][8], SGD_TOKENS, 7)).isZero();
    }

    @Test
    void unlabelledTurnsCountOnlyAsOffTopicCacheContent() {
        Dialogue d = new Dialogue("m", List.of(Utterance.of("USER", "a", "hotel"), Utterance.of("SYSTEM", "b", null),
                Utterance.of("USER", "c", "taxi"), Utterance.of("SYSTEM", "d", "hotel")));
        boolean[][] c = cache(4, new int[] {}, new int[] {0}, new int[] {0, 1}, new int[] {0, 1});
        int[] tokens = {1, 1, 1, 1};
        // turn 1 has no topic; turn 2 (taxi): 0 of 2; turn 3 (hotel): 1 of 2
        assertThat(DialogueMetrics.currentTopicPrecision(d, c, tokens)).isEqualTo(0.25);
        // seen {hotel}, {hotel}, {hotel, taxi}; held {hotel} each time
        assertThat(DialogueMetrics.topicDiversity(d, c)).isCloseTo(2.5 / 3, within(1e-12));
    }

    @Test
    void postShiftShareIsReadThreeTurnsAfterTheLastShift() {
        int[] shifts = {-1, 0, 1, 0, 0, 0, 1, 1, 0};
        List<Utterance> turns = new ArrayList<>();
        for (int s : shifts) turns.add(new Utterance(null, "x", null, null, s));
        Dialogue d = new Dialogue("t", turns);
        int[] tokens = {1, 1, 2, 2, 2, 2, 1, 1, 1};
        boolean[][] c = new boolean[9][9];
        c[5][0] = c[5][2] = c[5][4] = true; // 1 + 2 + 2 tokens, 2 + 2 of them from turn 2 on
        // the shift at 6 is followed by one at 7; the one at 7 has no third turn after it
        assertThat(DialogueMetrics.postShiftShare(d, c, tokens)).isCloseTo(0.8, within(1e-12));
        // an empty cache at turn 5 leaves no case
        assertThat(DialogueMetrics.postShiftShare(d, new boolean[9][9], tokens)).isNaN();
    }

    @Test
    void aDialogueWithoutCasesHasNoValue() {
        Dialogue noRefs = new Dialogue("n", List.of(sgd("A"), sgd("A")));
        assertThat(DialogueMetrics.neededContextRecall(noRefs, new boolean[2][2], DialogueMetrics.RefScope.ALL)).isNaN();
        assertThat(DialogueMetrics.currentTopicPrecision(noRefs, new boolean[2][2], new int[] {1, 1})).isNaN();
        assertThat(DialogueMetrics.topicDiversity(noRefs, new boolean[2][2])).isZero();
    }

    // ---- invariants over random dialogues and caches

    record Case(Dialogue d, boolean[][] cached, int[] tokens) {}

    @Provide
    Arbitrary<Case> cases() {
        return Arbitraries.integers().between(1, 14).flatMap(n -> Combinators.combine(
                Arbitraries.of("A", "B", "C").list().ofSize(n),
                Arbitraries.integers().between(0, 1 << 20).list().ofSize(n),
                Arbitraries.integers().between(1, 9).array(int[].class).ofSize(n),
                Arbitraries.longs().list().ofSize(n)).as((topics, refMasks, tokens, cacheMasks) -> {
                    List<Utterance> turns = new ArrayList<>();
                    boolean[][] c = new boolean[n][n];
                    for (int t = 0; t < n; t++) {
                        List<Integer> refs = new ArrayList<>();
                        for (int j = 0; j < t; j++) {
                            if ((refMasks.get(t) >> j & 1) == 1) refs.add(j);
                            c[t][j] = (cacheMasks.get(t) >> j & 1) == 1;
                        }
                        int[] r = refs.stream().mapToInt(Integer::intValue).toArray();
                        turns.add(new Utterance("USER", "x", topics.get(t), r, t == 0 ? -1 : (refMasks.get(t) & 1)));
                    }
                    return new Case(new Dialogue("p", turns), c, tokens);
                }));
    }

    @Property
    void everyMetricIsAShareOrUndefined(@ForAll("cases") Case k) {
        for (Metric m : Metric.values()) {
            double v = DialogueMetrics.value(m, k.d(), k.cached(), k.tokens(), Long.MAX_VALUE);
            if (!Double.isNaN(v)) assertThat(v).as(m.id()).isBetween(0.0, 1.0);
        }
    }

    @Property
    void keepingEverythingRecallsEveryReferenceAndEveryTopic(@ForAll("cases") Case k) {
        int n = k.d().size();
        boolean[][] all = new boolean[n][n];
        boolean[][] none = new boolean[n][n];
        for (int t = 0; t < n; t++) for (int j = 0; j < t; j++) all[t][j] = true;
        double recall = DialogueMetrics.neededContextRecall(k.d(), all, DialogueMetrics.RefScope.ALL);
        double lost = DialogueMetrics.neededContextRecall(k.d(), none, DialogueMetrics.RefScope.ALL);
        if (Double.isNaN(recall)) {
            assertThat(lost).isNaN();
        } else {
            assertThat(recall).isEqualTo(1.0);
            assertThat(lost).isEqualTo(0.0);
        }
        double diversity = DialogueMetrics.topicDiversity(k.d(), all);
        if (n > 1) assertThat(diversity).isEqualTo(1.0);
    }

    @Property
    void moreCachedReferencesNeverLowerRecall(@ForAll("cases") Case k) {
        int n = k.d().size();
        boolean[][] more = new boolean[n][n];
        for (int t = 0; t < n; t++) for (int j = 0; j < t; j++) more[t][j] = k.cached()[t][j] || (t + j) % 2 == 0;
        double base = DialogueMetrics.neededContextRecall(k.d(), k.cached(), DialogueMetrics.RefScope.ALL);
        double up = DialogueMetrics.neededContextRecall(k.d(), more, DialogueMetrics.RefScope.ALL);
        if (!Double.isNaN(base)) assertThat(up).isGreaterThanOrEqualTo(base);
    }
}
