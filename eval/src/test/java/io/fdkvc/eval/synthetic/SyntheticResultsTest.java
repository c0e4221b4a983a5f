package io.fdkvc.eval.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.fdkvc.eval.report.MetricResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SyntheticResultsTest {
    private static SyntheticResults r;

    @BeforeAll
    static void run() {
        GeneratorConfig g = GeneratorConfig.DEFAULTS.withTurns(9);
        r = SyntheticEvaluation.run(new EvalConfig(g, List.of(Scenario.TOPIC_SHIFT, Scenario.STABLE_TOPIC), 6,
                EvalPolicies.build(List.of("fdkvc", "h2o", "h2o-paper", "full"), g.budget(), Map.of(), EvalPolicies.Defaults.SPEC), 4, 2),
                Progress.NONE);
    }

    @Test
    void everyIntervalContainsItsMean() {
        for (MetricResult m : r.table()) {
            if (Double.isNaN(m.mean())) continue;
            assertThat(m.ciLow()).as(m.toString()).isLessThanOrEqualTo(m.mean() + 1e-12);
            assertThat(m.ciHigh()).as(m.toString()).isGreaterThanOrEqualTo(m.mean() - 1e-12);
            assertThat(m.n()).isEqualTo(6);
        }
    }

    @Test
    void adaptationIsNotReportedForTheStableTopic() {
        assertThat(r.find("stable-topic", "h2o", SyntheticResults.ADAPTATION)).isNull();
        assertThat(r.find("topic-shift", "h2o", SyntheticResults.ADAPTATION)).isNotNull();
        assertThat(r.find("stable-topic", "h2o", SyntheticResults.DIVERSITY).mean()).isEqualTo(1.0);
    }

    @Test
    void theCompositeIsTheMeanOverScenariosPerDialogue() {
        double[] a = r.values(SyntheticResults.LATE_ALIGNMENT, Scenario.TOPIC_SHIFT, "h2o");
        double[] b = r.values(SyntheticResults.LATE_ALIGNMENT, Scenario.STABLE_TOPIC, "h2o");
        double[] c = r.compositeValues(SyntheticResults.LATE_ALIGNMENT, "h2o");
        for (int i = 0; i < c.length; i++) assertThat(c[i]).isCloseTo((a[i] + b[i]) / 2, within(1e-12));
        // diversity's composite only counts scenarios with topic changes
        assertThat(r.compositeValues(SyntheticResults.DIVERSITY, "h2o")).isEqualTo(r.values(SyntheticResults.DIVERSITY, Scenario.TOPIC_SHIFT, "h2o"));
        MetricResult comp = r.find(SyntheticResults.COMPOSITE, "h2o", SyntheticResults.LATE_ALIGNMENT);
        double mean = 0;
        for (double v : c) mean += v / c.length;
        assertThat(comp.mean()).isCloseTo(mean, within(1e-12));
    }

    @Test
    void improvementRowsAreRatiosOfTheMeansMinusOne() {
        double fd = r.find("topic-shift", "fdkvc", SyntheticResults.LATE_ALIGNMENT).mean();
        double h = r.find("topic-shift", "h2o", SyntheticResults.LATE_ALIGNMENT).mean();
        assertThat(r.find("topic-shift", "fdkvc", SyntheticResults.IMPROVEMENT_VS + "h2o").mean()).isCloseTo(fd / h - 1, within(1e-12));
        double at = r.find("topic-shift", "fdkvc", SyntheticResults.ADAPTATION).mean();
        double ah = r.find("topic-shift", "h2o-paper", SyntheticResults.ADAPTATION).mean();
        assertThat(r.find("topic-shift", "fdkvc", SyntheticResults.SPEEDUP_VS + "h2o-paper").mean()).isCloseTo(ah / at, within(1e-12));
        assertThat(r.find("stable-topic", "fdkvc", SyntheticResults.SPEEDUP_VS + "h2o")).isNull();
    }

    @Test
    void curvesAreMeansOverDialogues() {
        double[] curve = r.curve(SyntheticResults.Curve.RETENTION, Scenario.TOPIC_SHIFT, "full");
        // full keeps everything: after turn t >= 4 (T = 9, switch at 4) the B share is (t-3)/(t+1)
        for (int t = 4; t < 9; t++) assertThat(curve[t]).isCloseTo((t - 3) / (double) (t + 1), within(1e-12));
        double[] ad = r.adaptationCurve(Scenario.TOPIC_SHIFT, "full");
        assertThat(ad[0]).isEqualTo(0.0); // the past holds nothing of the new topic at the change
        assertThat(ad[5]).isNaN(); // the new topic lasts 5 turns (4..8): k = 0..4
    }
}
