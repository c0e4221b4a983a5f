package io.fdkvc.eval.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.math.VectorMath;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class DialogueGeneratorTest {
    private static final GeneratorConfig C = GeneratorConfig.DEFAULTS;

    @Property(tries = 30)
    void theSameSeedGivesTheSameDialogue(@ForAll long seed, @ForAll Scenario scenario) {
        Dialogue a = DialogueGenerator.generate(C, scenario, seed);
        Dialogue b = new Dialogue(C);
        DialogueGenerator.fill(b, Scenario.values()[(scenario.ordinal() + 1) % 5], seed ^ 1); // dirty the buffer first
        DialogueGenerator.fill(b, scenario, seed);
        assertThat(b.keys).isEqualTo(a.keys);
        assertThat(b.values).isEqualTo(a.values);
        assertThat(b.queries).isEqualTo(a.queries);
        assertThat(b.topic).isEqualTo(a.topic);
        assertThat(b.turnLabel).isEqualTo(a.turnLabel);
        assertThat(b.entryLabel).isEqualTo(a.entryLabel);
    }

    @Property(tries = 20)
    void differentSeedsGiveDifferentDialogues(@ForAll long seed, @ForAll Scenario scenario) {
        Dialogue a = DialogueGenerator.generate(C, scenario, seed);
        Dialogue b = DialogueGenerator.generate(C, scenario, seed + 1);
        assertThat(b.keys).isNotEqualTo(a.keys);
    }

    @Test
    void dialogueSeedsAreDistinctAcrossScenariosAndIndices() {
        Set<Long> seen = new HashSet<>();
        for (Scenario s : Scenario.values()) {
            for (int i = 0; i < 1000; i++) seen.add(DialogueGenerator.dialogueSeed(1, s, i));
        }
        assertThat(seen).hasSize(5000);
        assertThat(DialogueGenerator.dialogueSeed(1, Scenario.TOPIC_SHIFT, 7)).isEqualTo(DialogueGenerator.dialogueSeed(1, Scenario.TOPIC_SHIFT, 7));
        assertThat(DialogueGenerator.dialogueSeed(2, Scenario.TOPIC_SHIFT, 7)).isNotEqualTo(DialogueGenerator.dialogueSeed(1, Scenario.TOPIC_SHIFT, 7));
    }

    @Test
    void schedulesFollowTheScenarioTable() {
        int[] l = new int[24];
        SplittableRandom r = new SplittableRandom(3);
        DialogueGenerator.schedule(Scenario.TOPIC_SHIFT, 24, r, l);
        for (int t = 0; t < 24; t++) assertThat(l[t]).isEqualTo(t < 12 ? 0 : 1);
        DialogueGenerator.schedule(Scenario.TOPIC_RETURN, 24, r, l);
        for (int t = 0; t < 24; t++) assertThat(l[t]).isEqualTo(t >= 8 && t < 16 ? 1 : 0);
        DialogueGenerator.schedule(Scenario.GRADUAL_DRIFT, 24, r, l);
        for (int t = 0; t < 24; t++) assertThat(l[t]).isEqualTo(t < 12 ? 0 : 1); // t/23 < 0.5 iff t <= 11
        DialogueGenerator.schedule(Scenario.STABLE_TOPIC, 24, r, l);
        for (int t = 0; t < 24; t++) assertThat(l[t]).isZero();
    }

    @Property(tries = 50)
    void mixedTopicsComeInSegmentsOfTwoToFourTurnsOnAnotherTopic(@ForAll long seed, @ForAll @IntRange(min = 3, max = 60) int turns) {
        int[] l = new int[turns];
        DialogueGenerator.schedule(Scenario.MIXED_TOPICS, turns, new SplittableRandom(seed), l);
        int start = 0;
        for (int t = 1; t <= turns; t++) {
            if (t == turns || l[t] != l[t - 1]) {
                int len = t - start;
                if (t < turns) assertThat(len).isBetween(2, 4); // the last segment may be cut by the end
                else assertThat(len).isBetween(1, 4);
                start = t;
            }
            if (t < turns) assertThat(l[t]).isBetween(0, Scenario.MIXED_TOPIC_COUNT - 1);
        }
    }

    @Property(tries = 20)
    void vectorsHaveTheDocumentedNorms(@ForAll long seed, @ForAll Scenario scenario) {
        Dialogue d = DialogueGenerator.generate(C, scenario, seed);
        int dim = C.dim();
        double kappa = Math.sqrt(C.sharpness() * Math.sqrt(dim));
        for (int p = 0; p < C.totalEntries(); p += 37) {
            assertThat(VectorMath.norm(d.keys, p * dim, dim)).isCloseTo(kappa, within(1e-4));
            assertThat(VectorMath.norm(d.values, p * dim, dim)).isCloseTo(1.0, within(1e-5));
        }
        for (int t = 0; t < C.turns(); t++) assertThat(VectorMath.norm(d.topic, t * dim, dim)).isCloseTo(1.0, within(1e-5));
        assertThat(VectorMath.norm(d.queries, 0, dim)).isCloseTo(kappa, within(1e-4));
    }

    /**
     * The generator's purpose: a full cache's attention prefers entries of the current topic. At
     * the last turn of topic-shift the mean query gives each topic-B entry more weight, on
     * average, than each topic-A entry (by the documented factor of about e^2; at least 3 here).
     */
    @Property(tries = 25)
    void fullCacheAttentionPrefersSameTopicEntries(@ForAll long seed) {
        Dialogue d = DialogueGenerator.generate(C, Scenario.TOPIC_SHIFT, seed);
        int dim = C.dim(), n = C.totalEntries(), last = C.turns() - 1;
        KvStream s = new KvStream(dim, dim, 0, n, false);
        for (int p = 0; p < n; p++) s.append(p, d.keys, p * dim, d.values, p * dim);
        float[] q = new float[dim];
        VectorMath.meanRows(java.util.Arrays.copyOfRange(d.queries, last * C.queries() * dim, (last + 1) * C.queries() * dim), C.queries(), dim, q);
        double[] w = new double[n];
        StreamAttention.weights(s, n, q, 0, false, w);
        double same = 0, other = 0;
        int ns = 0, no = 0;
        for (int p = 0; p < n; p++) {
            if (d.entryLabel[p] == d.turnLabel[last]) { same += w[p]; ns++; } else { other += w[p]; no++; }
        }
        assertThat(same / ns).isGreaterThan(3 * (other / no));
    }

    @Test
    void gradualDriftMovesTheTopicFromAToB() {
        Dialogue d = DialogueGenerator.generate(C, Scenario.GRADUAL_DRIFT, 11);
        int dim = C.dim(), last = C.turns() - 1;
        double first = cos(d.topic, 0, d.topic, last * dim, dim);
        double prev = 1;
        for (int t = 1; t <= last; t++) {
            double c = cos(d.topic, 0, d.topic, t * dim, dim);
            assertThat(c).isLessThan(prev + 1e-6); // moves away from A monotonically
            prev = c;
        }
        assertThat(first).isLessThan(0.5);
    }

    private static double cos(float[] a, int ao, float[] b, int bo, int dim) {
        return VectorMath.dot(a, ao, b, bo, dim) / (VectorMath.norm(a, ao, dim) * VectorMath.norm(b, bo, dim));
    }
}
