package io.fdkvc.eval.fidelity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The metrics on a two-turn toy worked out by hand: a vocabulary of two tokens, a conversation of
 * four tokens [a | b b a] (turn 0 is one token, turn 1 three), the teacher's and the student's
 * logits chosen so that every probability is a simple fraction.
 */
class FidelityMetricsTest {
    private static final float LN3 = (float) Math.log(3);

    /** Teacher rows for the four positions: p = (1/2, 1/2), (3/4, 1/4), (1/2, 1/2), (3/4, 1/4). */
    private static TeacherRows teacher(int position) {
        TeacherRows t = new TeacherRows(2, 1);
        t.set(position % 2 == 0 ? new float[]{0, 0} : new float[]{LN3, 0}, 1);
        return t;
    }

    @Test
    void twoTurnToyByHand() {
        // tokens: 0 | 1 1 0 ; the probe is token 2 (the second b); predictions at positions 0, 1, 2
        // (position 3 has no next token); position 0 belongs to turn 0 and is not measured
        float[][] student = {{LN3, 0}, {LN3, 0}, {0, LN3}};
        int[] next = {1, 1, 0};
        int[] turn = {0, 1, 1};
        int[] probe = {-1, 0, -1};
        Fidelity f = new Fidelity(2, 1);
        for (int p = 0; p < 3; p++) f.add(teacher(p), 0, student[p], 0, next[p], turn[p], turn[p] > 0, probe[p]);

        // position 1: p = q = (3/4, 1/4): KL 0, argmax agree, NLL(b) = ln 4 for both
        // position 2: p = (1/2, 1/2), q = (1/4, 3/4): KL = 1/2 ln 2 + 1/2 ln (2/3) = 1/2 ln (4/3);
        //             argmax 0 (first of a tie) against 1: disagree; NLL(a): student ln 4, full ln 2
        ConversationScore s = ConversationScore.of(f);
        assertThat(s.predictions()).isEqualTo(2);
        assertThat(s.kl()).isCloseTo(0.25 * Math.log(4.0 / 3), within(1e-7));
        assertThat(s.top1()).isEqualTo(0.5);
        assertThat(s.nll()).isCloseTo((Math.log(4) + Math.log(4)) / 2, within(1e-6));
        assertThat(s.nllFull()).isCloseTo((Math.log(4) + Math.log(2)) / 2, within(1e-6));
        // the probe (token 2, predicted at position 1): NLL ln 4 under both
        assertThat(s.probeNllIncrease()).isCloseTo(0, within(1e-6));
        assertThat(s.turnKl()[0]).isNaN();
        assertThat(s.turnKl()[1]).isCloseTo(0.25 * Math.log(4.0 / 3), within(1e-7));
    }

    @Test
    void aProbeInTheFirstTurnCountsThoughItsPositionsAreNotMeasured() {
        Fidelity f = new Fidelity(2, 1);
        // teacher p = (3/4, 1/4), student q = (1/2, 1/2), next token b: NLL ln 2 against ln 4
        f.add(teacher(1), 0, new float[]{0, 0}, 0, 1, 0, false, 0);
        f.add(teacher(1), 0, new float[]{LN3, 0}, 0, 1, 1, true, -1);
        ConversationScore s = ConversationScore.of(f);
        assertThat(s.probeNllIncrease()).isCloseTo(Math.log(2) - Math.log(4), within(1e-6));
        assertThat(s.predictions()).isEqualTo(1);
        assertThat(s.kl()).isZero();
    }

    @Test
    void equalLogitsGiveExactlyZero() {
        float[] logits = {0.3f, -1.7f, 2.25f, 0.001f, -40f};
        TeacherRows t = new TeacherRows(5, 1);
        t.set(logits.clone(), 1);
        assertThat(Fidelity.kl(t, 0, logits, 0, TeacherRows.logPartition(logits, 0, 5))).isEqualTo(0.0);
    }

    @Test
    void aggregatesAreMeansOverConversationsAndDifferencesArePaired() {
        var window = PolicyRegistry.spec("window", 4);
        var h2o = PolicyRegistry.spec("h2o", 4);
        List<Student> students = List.of(new Student("window", 4, PositionMode.CACHE, window), new Student("h2o", 4, PositionMode.CACHE, h2o));
        ConversationScore[][] scores = {
                {score(0.2, 1.0), score(0.1, 0.5)},
                {score(0.4, 3.0), score(0.1, Double.NaN)},
        };
        FidelityResults r = new FidelityResults(List.of(), students, scores, 0);
        assertThat(r.interval(0, FidelityResults.Metric.KL).mean()).isCloseTo(0.3, within(1e-12));
        assertThat(r.interval(1, FidelityResults.Metric.PROBE_NLL_INCREASE).mean()).isEqualTo(0.5);
        assertThat(r.interval(1, FidelityResults.Metric.PROBE_NLL_INCREASE).n()).isEqualTo(1);
        // h2o - window per conversation: -0.1 and -0.3
        assertThat(r.differenceToReference(1, FidelityResults.Metric.KL).mean()).isCloseTo(-0.2, within(1e-12));
        assertThat(r.differenceToReference(0, FidelityResults.Metric.KL)).isNull();
        String csv = FidelityReport.csv(r.rows());
        assertThat(csv).startsWith("policy,budget,positions,metric,mean,lo,hi,n\n");
        assertThat(csv).contains("\nh2o,4,cache,kl_minus_window,");
        assertThat(csv).contains("\nwindow,4,cache,kl,0.3");
    }

    private static ConversationScore score(double kl, double probe) {
        return new ConversationScore(kl, 1, 1, 1, probe, new double[]{Double.NaN, kl}, 10);
    }
}
