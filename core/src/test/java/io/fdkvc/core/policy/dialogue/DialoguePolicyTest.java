package io.fdkvc.core.policy.dialogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.Turn;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.assertj.core.api.Assertions;

/** fdkvc-dialogue: hand-computed cases of each term, and invariants over random costed dialogues. */
class DialoguePolicyTest {
    private static final float[] KEY = {1f};

    private static Policy policy(int budget, Map<String, ?> params) {
        return PolicyRegistry.spec("fdkvc-dialogue", budget, params).newPolicy();
    }

    private static List<Long> kept(KvStream s) {
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < s.size(); i++) out.add(s.position(i));
        return out;
    }

    @Test
    void noveltyKeepsTheLatestMentionAndDropsTheRepeatedOne() {
        // embeddings e0 = (0,0,1), e1 = (1,0,0), e2 = (1,0,0): newest first, novelty(e2) = 1,
        // novelty(e1) = 0 (e2 says it again), novelty(e0) = 1. Budget 2 (unit costs), no recent
        // share: e1 goes, where a window would drop e0.
        KvStream s = new KvStream(1, 0, 3, 4, false);
        float[][] e = {{0, 0, 1}, {1, 0, 0}, {1, 0, 0}};
        for (int i = 0; i < 3; i++) s.append(i, KEY, 0, null, 0, e[i], 0);
        Policy p = policy(2, Map.of("recent", 0.0, "wc", 0.0, "wrho", 0.0, "wnovel", 1.0, "wspeaker", 0.0));
        p.endTurn(s, Turn.of(new float[] {1f}, 1, 1, new float[] {0, 1, 0}));
        assertThat(kept(s)).containsExactly(0L, 2L);
        assertThat(s.h()[0]).isEqualTo(1.0);
        assertThat(s.h()[1]).isEqualTo(1.0);
    }

    @Test
    void relevanceDecaysAndAccumulatesByHand() {
        // gamma 0.5, only rho. Turn 1 appends e0 = (1,0), e1 = (0,1) with query (1,0): rho = 1, 0.
        // Turn 2 appends e2 = (1,1)/.. with query (0,1): rho0 = 0.5 * 1 + 0 = 0.5,
        // rho1 = 0.5 * 0 + 1 = 1, rho2 = cos((1,1), (0,1)) = 1/sqrt 2. Budget 2, recent 0: e0 goes.
        KvStream s = new KvStream(1, 0, 2, 4, false);
        Policy p = policy(2, Map.of("recent", 0.0, "gamma", 0.5, "wc", 0.0, "wrho", 1.0, "wnovel", 0.0, "wspeaker", 0.0));
        s.append(0, KEY, 0, null, 0, new float[] {1, 0}, 0);
        s.append(1, KEY, 0, null, 0, new float[] {0, 1}, 0);
        p.endTurn(s, Turn.of(new float[] {1f}, 1, 1, new float[] {1, 0}));
        assertThat(s.rho()[0]).isEqualTo(1.0, Assertions.within(1e-6));
        assertThat(s.rho()[1]).isEqualTo(0.0, Assertions.within(1e-6));
        s.append(2, KEY, 0, null, 0, new float[] {1, 1}, 0);
        p.endTurn(s, Turn.of(new float[] {1f}, 1, 1, new float[] {0, 1}));
        assertThat(kept(s)).containsExactly(1L, 2L);
        assertThat(s.rho()[0]).isEqualTo(1.0, Assertions.within(1e-6));
        assertThat(s.rho()[1]).isEqualTo(1 / Math.sqrt(2), Assertions.within(1e-6));
    }

    @Test
    void recentShareIsProtectedAndTheSpeakerTermReadsTheLayout() {
        // Three utterances of 3 tokens, budget 6, recent 0.5: the newest (cost 3 <= 3) is protected.
        // Of the other two, the one whose speaker matches the query's next speaker wins with wspeaker only.
        KvStream s = new KvStream(1, 0, DialogueFeatures.DIMENSION, 4, false);
        float[] user = DialogueFeatures.of("hello there friend", DialogueFeatures.Speaker.USER);
        float[] assistant = DialogueFeatures.of("hello there friend", DialogueFeatures.Speaker.ASSISTANT);
        s.append(0, KEY, 0, null, 0, assistant, 0, 3);
        s.append(1, KEY, 0, null, 0, user, 0, 3);
        s.append(2, KEY, 0, null, 0, user, 0, 3);
        float[] query = DialogueFeatures.of("hello", DialogueFeatures.next(DialogueFeatures.Speaker.USER));
        Policy p = policy(6, Map.of("recent", 0.5, "wc", 0.0, "wrho", 0.0, "wnovel", 0.0, "wspeaker", 1.0));
        p.endTurn(s, Turn.of(new float[] {1f}, 1, 1, query));
        assertThat(kept(s)).containsExactly(0L, 2L);
        assertThat(s.h()[0]).isEqualTo(1.0);
    }

    @Test
    void attentionChannelDecaysByHand() {
        // Keys 1-d: k0 = 1, k1 = -1; mean query 2 (scale 1/sqrt 1): softmax(2, -2) = (e^4/(e^4+1), 1/(e^4+1)).
        KvStream s = new KvStream(1, 0, 1, 4, false);
        s.append(0, new float[] {1f}, 0, null, 0, new float[] {1f}, 0);
        s.append(1, new float[] {-1f}, 0, null, 0, new float[] {1f}, 0);
        Policy p = policy(10, Map.of("gamma", 0.5));
        p.endTurn(s, Turn.of(new float[] {2f}, 1, 1, new float[] {1f}));
        assertThat(s.c()[0]).isEqualTo(0.0);
        s.append(2, new float[] {1f}, 0, null, 0, new float[] {1f}, 0);
        p.endTurn(s, Turn.of(new float[] {2f}, 1, 1, new float[] {1f}));
        double w0 = Math.exp(4) / (Math.exp(4) + 1);
        assertThat(s.c()[0]).isEqualTo(w0, Assertions.within(1e-6));
        assertThat(s.c()[1]).isEqualTo(1 - w0, Assertions.within(1e-6));
        assertThat(s.c()[2]).isEqualTo(0.0);
    }

    @Test
    void badParametersNameThemselves() {
        Assertions.assertThatThrownBy(() -> policy(8, Map.of("recent", 1.5))).isInstanceOf(ParameterException.class).hasMessageContaining("recent");
        Assertions.assertThatThrownBy(() -> policy(8, Map.of("gamma", 0.0))).isInstanceOf(ParameterException.class).hasMessageContaining("gamma");
        Assertions.assertThatThrownBy(() -> policy(8, Map.of("wnovel", -1.0))).isInstanceOf(ParameterException.class).hasMessageContaining("wnovel");
    }

    record Dialogue(List<String> texts, int[] costs, int budget, double recent, double wspeaker, boolean packing) {}

    @Provide
    Arbitrary<Dialogue> dialogues() {
        Arbitrary<String> word = Arbitraries.of("book", "table", "sushi", "bistro", "7", "pm", "march", "3rd", "san", "jose", "hotel", "the", "yes", "two");
        Arbitrary<String> text = word.list().ofMinSize(0).ofMaxSize(6).map(w -> String.join(" ", w));
        return Arbitraries.integers().between(1, 30).flatMap(n -> Combinators.combine(
                text.list().ofSize(n),
                Arbitraries.integers().between(1, 12).array(int[].class).ofSize(n),
                Arbitraries.integers().between(12, 60),
                Arbitraries.of(0.0, 0.3, 0.5, 1.0),
                Arbitraries.of(0.0, 0.5),
                Arbitraries.of(true, false)).as(Dialogue::new));
    }

    private static List<List<Long>> play(Dialogue d) {
        Policy p = policy(d.budget(), Map.of("recent", d.recent(), "wspeaker", d.wspeaker()));
        p.setPacking(d.packing());
        KvStream s = new KvStream(2, 0, DialogueFeatures.DIMENSION, d.budget() + 1, false);
        List<List<Long>> history = new ArrayList<>();
        for (int t = 0; t < d.texts().size(); t++) {
            DialogueFeatures.Speaker sp = t % 2 == 0 ? DialogueFeatures.Speaker.USER : DialogueFeatures.Speaker.ASSISTANT;
            float[] f = DialogueFeatures.of(d.texts().get(t), sp);
            float[] key = {(float) Math.sin(t), (float) Math.cos(t)};
            s.append(t, key, 0, null, 0, f, 0, d.costs()[t]);
            float[] q = DialogueFeatures.of(d.texts().get(t), DialogueFeatures.next(sp));
            p.endTurn(s, Turn.of(new float[] {key[0] * 20, key[1] * 20}, 1, 2, q));
            assertThat(s.totalCost()).as("budget after turn " + t).isLessThanOrEqualTo(d.budget());
            // the newest entry always fits (cost <= 12 <= budget) and is kept when recent > 0
            if (d.recent() > 0 && d.costs()[t] <= d.recent() * d.budget()) assertThat(s.position(s.size() - 1)).isEqualTo(t);
            history.add(kept(s));
        }
        return history;
    }

    @Property(tries = 200)
    void neverExceedsTheBudgetAndIsDeterministic(@ForAll("dialogues") Dialogue d) {
        assertThat(play(d)).isEqualTo(play(d));
    }
}
