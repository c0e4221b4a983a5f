package io.fdkvc.eval.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import org.junit.jupiter.api.Test;

class SimulatorTest {
    private static final GeneratorConfig C = GeneratorConfig.DEFAULTS;

    @Test
    void fullKeepsEverythingSoItsRetentionIsTheCurrentTopicsShareOfAllTurnsSoFar() {
        Dialogue d = DialogueGenerator.generate(C, Scenario.TOPIC_SHIFT, 5);
        Trajectory tr = new Trajectory(C.turns());
        new Simulator(C).run(d, PolicyRegistry.spec("full", C.budget()), tr);
        assertThat(tr.finalSize).isEqualTo(C.totalEntries());
        assertThat(tr.diversity).isEqualTo(1.0);
        for (int t = 0; t < 24; t++) {
            double expected = t < 12 ? 1.0 : (t - 11) / (double) (t + 1); // turns 12..t on B out of 0..t
            assertThat(tr.retention[t]).isCloseTo(expected, within(1e-12));
        }
        assertThat(tr.pastMassOnCurrent[0]).isNaN(); // no past at the first turn
        assertThat(tr.alignmentPast[0]).isNaN();
    }

    /**
     * With full, the retained past at turn t is exactly the entries of turns 0..t-1: the past's
     * attention mass and read-out, computed directly here, must match the simulator's (which
     * derives them from the softmax over the past plus the turn).
     */
    @Test
    void thePastReadOutMatchesADirectComputation() {
        Dialogue d = DialogueGenerator.generate(C, Scenario.TOPIC_SHIFT, 8);
        Trajectory tr = new Trajectory(C.turns());
        new Simulator(C).run(d, PolicyRegistry.spec("full", C.budget()), tr);
        int dim = C.dim(), n = C.entriesPerTurn();
        for (int t : new int[]{1, 12, 13, 23}) {
            int past = t * n;
            io.fdkvc.core.cache.KvStream s = new io.fdkvc.core.cache.KvStream(dim, dim, 0, past, false);
            for (int p = 0; p < past; p++) s.append(p, d.keys, p * dim, d.values, p * dim);
            float[] q = new float[dim];
            io.fdkvc.core.math.VectorMath.meanRows(java.util.Arrays.copyOfRange(d.queries, t * C.queries() * dim, (t + 1) * C.queries() * dim),
                    C.queries(), dim, q);
            double[] w = new double[past];
            io.fdkvc.core.cache.StreamAttention.weights(s, past, q, 0, false, w);
            double mass = 0;
            double[] o = new double[dim];
            for (int p = 0; p < past; p++) {
                if (d.entryLabel[p] == d.turnLabel[t]) mass += w[p];
                for (int j = 0; j < dim; j++) o[j] += w[p] * d.values[p * dim + j];
            }
            double dot = 0, no = 0, nt = 0;
            for (int j = 0; j < dim; j++) {
                dot += o[j] * d.topic[t * dim + j];
                no += o[j] * o[j];
                nt += d.topic[t * dim + j] * d.topic[t * dim + j];
            }
            assertThat(tr.pastMassOnCurrent[t]).as("turn " + t).isCloseTo(mass, within(1e-6));
            assertThat(tr.alignmentPast[t]).as("turn " + t).isCloseTo(dot / Math.sqrt(no * nt), within(1e-5));
        }
        assertThat(tr.pastMassOnCurrent[12]).isEqualTo(0.0); // no B entry in the past at the switch
    }

    @Test
    void windowHoldsTheLastFourTurnsSoItsCompositionFollowsByHand() {
        Dialogue d = DialogueGenerator.generate(C, Scenario.TOPIC_SHIFT, 6);
        Trajectory tr = new Trajectory(C.turns());
        new Simulator(C).run(d, PolicyRegistry.spec("window", C.budget()), tr);
        // B = 64 = 4 turns of 16: after turn 12 one of the four held turns is on B, then two, three, four
        assertThat(tr.retention[12]).isEqualTo(0.25);
        assertThat(tr.retention[13]).isEqualTo(0.5);
        assertThat(tr.retention[14]).isEqualTo(0.75);
        assertThat(tr.retention[15]).isEqualTo(1.0);
        assertThat(tr.retention[23]).isEqualTo(1.0);
        assertThat(tr.diversity).isEqualTo(0.5);
        // at turn 12 the past (turns 8..11) holds nothing of B
        assertThat(tr.pastMassOnCurrent[12]).isEqualTo(0.0);
        assertThat(Metrics.adaptation(d.turnLabel, tr.pastMassOnCurrent, 24, 0.5).meanTurns()).isGreaterThanOrEqualTo(1.0);
    }

    @Provide
    Arbitrary<String> policies() {
        return Arbitraries.of(PolicyRegistry.names());
    }

    @Property(tries = 40)
    void boundedPoliciesRespectTheBudgetAndMetricsStayInRange(@ForAll("policies") String policy, @ForAll Scenario scenario, @ForAll long seed) {
        Dialogue d = DialogueGenerator.generate(C, scenario, seed);
        Trajectory tr = new Trajectory(C.turns());
        PolicySpec spec = PolicyRegistry.spec(policy, C.budget());
        new Simulator(C).run(d, spec, tr);
        if (!spec.newPolicy().unbounded()) assertThat(tr.finalSize).isLessThanOrEqualTo(C.budget());
        for (int t = 0; t < C.turns(); t++) {
            assertThat(tr.alignment[t]).isBetween(-1.0 - 1e-9, 1.0 + 1e-9);
            assertThat(tr.retention[t]).isBetween(0.0, 1.0);
            if (t > 0) assertThat(tr.pastMassOnCurrent[t]).isBetween(0.0, 1.0 + 1e-9);
        }
        assertThat(tr.diversity).isBetween(0.0, 1.0);
        if (scenario == Scenario.STABLE_TOPIC) assertThat(tr.diversity).isEqualTo(1.0);
    }

    @Test
    void resultsDoNotDependOnTheNumberOfThreads() {
        GeneratorConfig g = C.withTurns(9);
        List<PolicySpec> specs = EvalPolicies.build(List.of("fdkvc", "h2o", "h2o-paper", "window"), g.budget(), Map.of(), EvalPolicies.Defaults.SPEC);
        SyntheticResults one = SyntheticEvaluation.run(new EvalConfig(g, List.of(Scenario.values()), 7, specs, 3, 1), Progress.NONE);
        SyntheticResults two = SyntheticEvaluation.run(new EvalConfig(g, List.of(Scenario.values()), 7, specs, 3, 3), Progress.NONE);
        assertThat(two.table()).isEqualTo(one.table());
    }

    @Test
    void aDialogueDoesNotDependOnHowManyDialoguesRun() {
        GeneratorConfig g = C.withTurns(6);
        List<PolicySpec> specs = List.of(PolicyRegistry.spec("h2o", g.budget()));
        SyntheticResults few = SyntheticEvaluation.run(new EvalConfig(g, List.of(Scenario.MIXED_TOPICS), 3, specs, 9, 2), Progress.NONE);
        SyntheticResults more = SyntheticEvaluation.run(new EvalConfig(g, List.of(Scenario.MIXED_TOPICS), 5, specs, 9, 2), Progress.NONE);
        double[] a = few.values(SyntheticResults.LATE_ALIGNMENT, Scenario.MIXED_TOPICS, "h2o");
        double[] b = more.values(SyntheticResults.LATE_ALIGNMENT, Scenario.MIXED_TOPICS, "h2o");
        assertThat(java.util.Arrays.copyOf(b, 3)).isEqualTo(a);
    }

    @Test
    void progressReachesTheTotal() {
        GeneratorConfig g = C.withTurns(4);
        int[] last = {0, 0};
        SyntheticEvaluation.run(new EvalConfig(g, List.of(Scenario.TOPIC_SHIFT, Scenario.STABLE_TOPIC), 4,
                List.of(PolicyRegistry.spec("window", g.budget())), 1, 2), (done, total) -> {
            synchronized (last) {
                last[0] = Math.max(last[0], done);
                last[1] = total;
            }
        });
        assertThat(last).containsExactly(8, 8);
    }
}
