package io.fdkvc.eval.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class MetricsTest {
    private static final double NaN = Double.NaN;

    @Test
    void lateThirdStartsAtTMinusFloorTOver3() {
        assertThat(Metrics.lateFrom(24)).isEqualTo(16);
        assertThat(Metrics.lateFrom(3)).isEqualTo(2);
        assertThat(Metrics.lateFrom(10)).isEqualTo(7);
    }

    @Test
    void lateMeanAveragesTheLastThirdSkippingNaN() {
        double[] v = new double[24];
        for (int t = 0; t < 24; t++) v[t] = t;
        assertThat(Metrics.lateMean(v, 24)).isEqualTo((16 + 17 + 18 + 19 + 20 + 21 + 22 + 23) / 8.0);
        v[23] = NaN;
        assertThat(Metrics.lateMean(v, 24)).isEqualTo((16 + 17 + 18 + 19 + 20 + 21 + 22) / 7.0);
        assertThat(Metrics.lateMean(new double[]{1, NaN, NaN}, 3)).isNaN();
    }

    @Test
    void adaptationCountsTurnsUntilHalfTheMassIsOnTheNewTopic() {
        int[] labels = {0, 0, 0, 1, 1, 1, 1};
        double[] mass = {NaN, 0.9, 0.9, 0.0, 0.3, 0.6, 0.9};
        Metrics.Adaptation a = Metrics.adaptation(labels, mass, 7, 0.5);
        // change at turn 3, first mass >= 0.5 at turn 5
        assertThat(a.meanTurns()).isEqualTo(2.0);
        assertThat(a.changes()).isEqualTo(1);
        assertThat(a.censored()).isZero();
        assertThat(a.censoredShare()).isZero();
    }

    @Test
    void adaptationIsCensoredAtTheSegmentLength() {
        int[] labels = {0, 0, 1, 1, 1, 1};
        double[] mass = {NaN, 1, 0, 0.2, 0.49, 0.1};
        Metrics.Adaptation a = Metrics.adaptation(labels, mass, 6, 0.5);
        assertThat(a.meanTurns()).isEqualTo(4.0); // turns 2..5: never, censored at e - s = 6 - 2
        assertThat(a.censored()).isEqualTo(1);
        assertThat(a.censoredShare()).isEqualTo(1.0);
    }

    @Test
    void adaptationAveragesOverSeveralChangesEachEndingAtTheNext() {
        // changes at 2 (segment [2,4)), at 4 (segment [4,7)) and at 7 (segment [7,8))
        int[] labels = {0, 0, 1, 1, 0, 0, 0, 2};
        double[] mass = {NaN, 1, 0.0, 0.2, 0.7, 0.9, 0.9, 0.1};
        Metrics.Adaptation a = Metrics.adaptation(labels, mass, 8, 0.5);
        // change at 2: never within [2,4) -> censored 2; change at 4: reached at once -> 0;
        // change at 7: never within [7,8) -> censored 1
        assertThat(a.changes()).isEqualTo(3);
        assertThat(a.censored()).isEqualTo(2);
        assertThat(a.meanTurns()).isCloseTo((2 + 0 + 1) / 3.0, within(1e-12));
    }

    @Test
    void adaptationIsUndefinedWithoutChangesAndNaNMassNeverCounts() {
        assertThat(Metrics.adaptation(new int[]{0, 0, 0}, new double[]{NaN, 1, 1}, 3, 0.5).meanTurns()).isNaN();
        Metrics.Adaptation a = Metrics.adaptation(new int[]{0, 1}, new double[]{NaN, NaN}, 2, 0.5);
        assertThat(a.meanTurns()).isEqualTo(1.0);
        assertThat(a.censored()).isEqualTo(1);
    }

    @Test
    void diversityIsDistinctLabelsHeldOverDistinctLabelsSeen() {
        int[] labelOfPosition = {0, 0, 1, 1, 2, 2};
        int[] turnLabel = {0, 1, 2};
        assertThat(Metrics.diversity(labelOfPosition, new long[]{1, 4}, 2, turnLabel, 3)).isCloseTo(2.0 / 3, within(1e-12));
        assertThat(Metrics.diversity(labelOfPosition, new long[]{0, 1, 2, 3, 4, 5}, 6, turnLabel, 3)).isEqualTo(1.0);
        assertThat(Metrics.diversity(labelOfPosition, new long[]{5}, 1, turnLabel, 3)).isCloseTo(1.0 / 3, within(1e-12));
        // labels seen count only the dialogue's turns so far
        assertThat(Metrics.diversity(labelOfPosition, new long[]{0}, 1, new int[]{0, 0}, 2)).isEqualTo(1.0);
    }

    @Test
    void shareAndMassCountOnlyTheLabel() {
        int[] labelOfPosition = {0, 1, 1, 0, 1};
        long[] positions = {0, 2, 3, 4};
        assertThat(Metrics.share(labelOfPosition, positions, 4, 1)).isEqualTo(0.5);
        assertThat(Metrics.share(labelOfPosition, positions, 4, 0)).isEqualTo(0.5);
        assertThat(Metrics.share(labelOfPosition, positions, 0, 0)).isNaN();
        double[] w = {0.1, 0.2, 0.3, 0.4};
        assertThat(Metrics.massOn(w, labelOfPosition, positions, 4, 1)).isCloseTo(0.6, within(1e-12));
        assertThat(Metrics.massOn(w, labelOfPosition, positions, 4, 0)).isCloseTo(0.4, within(1e-12));
    }

    @Test
    void distinctCountsValues() {
        assertThat(Metrics.distinct(new int[]{2, 0, 2, 1, 0}, 5)).isEqualTo(3);
        assertThat(Metrics.distinct(new int[]{2, 0, 2, 1, 0}, 1)).isEqualTo(1);
        assertThat(Metrics.distinct(new int[0], 0)).isZero();
    }
}
