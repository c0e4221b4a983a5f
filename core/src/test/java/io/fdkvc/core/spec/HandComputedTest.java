package io.fdkvc.core.spec;

import static io.fdkvc.core.spec.Fixtures.at;
import static io.fdkvc.core.spec.Fixtures.driver;
import static io.fdkvc.core.spec.Fixtures.entry;
import static io.fdkvc.core.spec.Fixtures.rows;
import static io.fdkvc.core.spec.Fixtures.turn;
import static io.fdkvc.core.spec.Fixtures.v;
import static io.fdkvc.core.spec.Fixtures.weightSum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.reference.CoreDriver;
import io.fdkvc.core.reference.SpecReference.TurnOutput;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * One small trace per equation of the spec and per baseline, every expected number worked out by
 * hand below (e = 2.718281828459045, d = 4 so 1/sqrt(d) = 1/2). Inputs are small integers, so every
 * float32 dot product is exact and the expected values hold to double precision; only eq. 9's
 * logit bias is stored as a float (1e-7 relative), hence the looser tolerance on modulated weights.
 */
class HandComputedTest {
    static final double E = Math.exp(1);
    static final double TIGHT = 1e-12;
    static final double FLOAT_BIAS = 1e-6;

    static final float[] X = v(1, 0, 0, 0);
    static final float[] Y = v(0, 1, 0, 0);
    static final float[] ZERO = v(0, 0, 0, 0);

    @Nested
    @DisplayName("FD-KVC, one test per equation")
    class Equations {

        @Test
        void eq1_cumulativeAttentionOfTheMeanQuery() {
            CoreDriver p = driver("fdkvc", 10, Map.of("tau", 0.0));
            // turn 0: C is empty -> step 6 only: c = 1 for each new entry
            TurnOutput t0 = p.turn(turn(rows(X), null, entry(v(2, 0, 0, 0)), entry(ZERO)));
            assertThat(at(t0, 0).c()).isEqualTo(1.0);
            assertThat(at(t0, 1).c()).isEqualTo(1.0);
            // turn 1: rows (2,0,0,0) and (0,0,0,0), mean qbar = (1,0,0,0)
            //   logits qbar.k/sqrt(4): A = 2/2 = 1, B = 0
            //   a_A = e/(e+1) = 0.7310585786300049, a_B = 1/(e+1) = 0.2689414213699951
            //   c_A = 1.7310585786300049, c_B = 1.2689414213699951
            //   (averaging the rows' own softmaxes instead would give a_A = (e^2/(e^2+1) + 1/2)/2 = 0.6904)
            TurnOutput t1 = p.turn(turn(rows(v(2, 0, 0, 0), ZERO), null));
            assertThat(at(t1, 0).c()).isCloseTo(1.7310585786300049, within(TIGHT));
            assertThat(at(t1, 1).c()).isCloseTo(1.2689414213699951, within(TIGHT));
        }

        @Test
        void eq2_recencyDecaysByGammaEachTurn() {
            // gamma = 0.5, alpha0 = 1, mu = 0 (alpha stays 1)
            CoreDriver p = driver("fdkvc", 10, Map.of("gamma", 0.5, "alpha0", 1.0, "mu", 0.0, "tau", 0.0));
            // turn 0: rho_A = alpha * max(0, cos(e_A, qbar)) = 1 * cos((1,0,0,0), (1,0,0,0)) = 1
            assertThat(at(p.turn(turn(rows(X), null, entry(X))), 0).rho()).isCloseTo(1.0, within(TIGHT));
            // turn 1: rho = 0.5 * 1 = 0.5; eq. 4 adds nothing: with one entry min cos = max cos, r = 0/(0+eps) = 0
            assertThat(at(p.turn(turn(rows(Y), null)), 0).rho()).isCloseTo(0.5, within(TIGHT));
            // turn 2: rho = 0.5 * 0.5 = 0.25
            assertThat(at(p.turn(turn(rows(Y), null)), 0).rho()).isCloseTo(0.25, within(TIGHT));

            // fdkvc-no-decay pins gamma = 1: rho stays 1
            CoreDriver noDecay = driver("fdkvc-no-decay", 10, Map.of("alpha0", 1.0, "mu", 0.0, "tau", 0.0));
            noDecay.turn(turn(rows(X), null, entry(X)));
            noDecay.turn(turn(rows(Y), null));
            assertThat(at(noDecay.turn(turn(rows(Y), null)), 0).rho()).isCloseTo(1.0, within(TIGHT));
        }

        @Test
        void eq3_cosineWithTheQueryEmbedding_zeroNormGivesZero() {
            // alpha0 = 1, mu = 0: alpha = 1; every key 0 (attention is irrelevant here)
            CoreDriver p = driver("fdkvc", 10, Map.of("alpha0", 1.0, "mu", 0.0, "tau", 0.0));
            // turn 0: zero query embedding -> cos = 0 for all -> rho = 1 * max(0, 0) = 0
            TurnOutput t0 = p.turn(turn(rows(X), ZERO,
                    entry(ZERO, v(1, 0, 0, 0)), entry(ZERO, v(0, 0, 1, 0)), entry(ZERO, ZERO), entry(ZERO, v(-1, -1, 0, 0))));
            for (long pos = 0; pos < 4; pos++) assertThat(at(t0, pos).rho()).isEqualTo(0.0);
            // turn 1: ebar_q = (1,1,0,0), |ebar_q| = sqrt 2
            //   cos_0 = 1/sqrt2 = 0.7071067811865475, cos_1 = 0 (orthogonal), cos_2 = 0 (zero norm),
            //   cos_3 = -2/(sqrt2 * sqrt2) = -1;  min = -1, max - min = 1.7071067811865475
            //   r_0 = 1.7071067811865475/(1.7071067811865475 + 1e-8) = 0.9999999941421357
            //   r_1 = r_2 = 1/(1.7071067811865475 + 1e-8) = 0.5857864341954475,  r_3 = 0
            //   rho = 0.85 * 0 + 1 * r
            TurnOutput t1 = p.turn(turn(rows(X), v(1, 1, 0, 0)));
            assertThat(at(t1, 0).rho()).isCloseTo(0.9999999941421357, within(1e-9));
            assertThat(at(t1, 1).rho()).isCloseTo(0.5857864341954475, within(1e-9));
            assertThat(at(t1, 2).rho()).isCloseTo(0.5857864341954475, within(1e-9));
            assertThat(at(t1, 3).rho()).isCloseTo(0.0, within(1e-12));
        }

        /**
         * gamma = 0.8, alpha0 = 0.5, mu = 2, tau = 0, wc = 0.3, wrho = 0.7. Keys A = (2,0,0,0),
         * B = D = 0; embeddings A = X, B = D = Y.
         * <pre>
         * turn 0 (qbar = X, ebar = X): rho_A = 0.5*cos(X,X) = 0.5, rho_B = 0.5*max(0, 0) = 0; alpha stays 0.5
         * turn 1 (qbar = X, ebar = Y, D arrives):
         *   eq 1: logits A 1, B 0: c_A = 1 + e/(e+1) = 1.7310585786300048, c_B = 1 + 1/(e+1) = 1.2689414213699952
         *   eq 2: rho_A = 0.4, rho_B = 0
         *   eq 3,4: cos A 0, B 1 -> r_A = 0, r_B = 1/(1+1e-8) = 0.99999999
         *           rho_A = 0.4, rho_B = 0.5 * 0.99999999 = 0.499999995
         *   eq 5: chat_B = 1.2689414213699952/1.7310585786300048 = 0.7330436052454455
         *         h_A = 0.3*1 + 0.7*0.4 = 0.58, h_B = 0.3*0.7330436052454455 + 0.7*0.499999995 = 0.5699130780736337
         *   eq 6: max h = 0.58, hhat_A = 1 -> 0, hhat_B = 0.9826087552993684 -> 0.017088789308394334
         *         L = (0 + 0.017088789308394334)/2 = 0.008544394654197167
         *   eq 7: alpha = 0.5/(1 + 2*0.008544394654197167) = 0.4915991654376534
         *   step 6: rho_D = 0.4915991654376534 * cos(Y, Y) = 0.4915991654376534 (the new alpha), c_D = 1
         *   step 7: max c still c_A: h_D = 0.3/1.7310585786300048 + 0.7*0.4915991654376534 = 0.5174237763309019
         * turn 2 (qbar = X, ebar = X): cos A 1, B 0, D 0 -> r_A = 0.99999999, r_B = r_D = 0, with alpha from turn 1:
         *   rho_A = 0.8*0.4 + 0.4915991654376534*0.99999999 = 0.8115991605216619
         *   rho_B = 0.8*0.499999995 = 0.399999996, rho_D = 0.8*0.4915991654376534 = 0.39327933235012275
         * </pre>
         */
        private TurnOutput[] twoChannelTrace() {
            CoreDriver p = driver("fdkvc", 10,
                    Map.of("gamma", 0.8, "alpha0", 0.5, "mu", 2.0, "tau", 0.0, "wc", 0.3, "wrho", 0.7));
            TurnOutput t0 = p.turn(turn(rows(X), X, entry(v(2, 0, 0, 0), X), entry(ZERO, Y)));
            TurnOutput t1 = p.turn(turn(rows(X), Y, entry(ZERO, Y)));
            TurnOutput t2 = p.turn(turn(rows(X), X));
            return new TurnOutput[] {t0, t1, t2};
        }

        @Test
        void eq4_normalisedSimilarityReinforcesTheDecayedRecency() {
            TurnOutput[] t = twoChannelTrace();
            assertThat(at(t[0], 0).rho()).isCloseTo(0.5, within(TIGHT));
            assertThat(at(t[0], 1).rho()).isEqualTo(0.0);
            assertThat(at(t[1], 0).rho()).isCloseTo(0.4, within(TIGHT));
            assertThat(at(t[1], 1).rho()).isCloseTo(0.499999995, within(TIGHT));
        }

        @Test
        void eq5_hMixesNormalisedAttentionAndRecency() {
            TurnOutput[] t = twoChannelTrace();
            // turn 0: chat = 1 for both; h_A = 0.3 + 0.7*0.5 = 0.65, h_B = 0.3 + 0 = 0.3
            assertThat(at(t[0], 0).h()).isCloseTo(0.65, within(TIGHT));
            assertThat(at(t[0], 1).h()).isCloseTo(0.3, within(TIGHT));
            assertThat(at(t[1], 0).h()).isCloseTo(0.58, within(TIGHT));
            assertThat(at(t[1], 1).h()).isCloseTo(0.5699130780736337, within(TIGHT));
            assertThat(at(t[1], 2).h()).isCloseTo(0.5174237763309019, within(TIGHT));
        }

        @Test
        void eq6_convergenceLoss() {
            TurnOutput[] t = twoChannelTrace();
            assertThat(t[0].loss()).as("step 4 did not run on an empty cache").isEqualTo(0.0);
            assertThat(t[1].loss()).isCloseTo(0.008544394654197167, within(TIGHT));
        }

        @Test
        void eq6_maxHNotPositiveGivesHhatZero() {
            // recency only (wc = 0) with alpha0 = 0: rho = 0 and h = 0 everywhere, max h = 0 ->
            // hhat = 0, L = 0, alpha = 0/(1 + 2*0) = 0 (not NaN from 0/0)
            CoreDriver p = driver("fdkvc-recency-only", 10, Map.of("alpha0", 0.0, "tau", 0.0));
            p.turn(turn(rows(X), null, entry(X), entry(Y)));
            TurnOutput t1 = p.turn(turn(rows(X), null));
            assertThat(t1.loss()).isEqualTo(0.0);
            assertThat(t1.alpha()).isEqualTo(0.0);
            assertThat(t1.entries()).allSatisfy(e -> assertThat(e.h()).isEqualTo(0.0));
        }

        @Test
        void eq7_alphaAdaptsAndIsCarriedAcrossTurns() {
            TurnOutput[] t = twoChannelTrace();
            assertThat(t[0].alpha()).as("alpha0 at the first turn").isCloseTo(0.5, within(TIGHT));
            assertThat(t[1].alpha()).isCloseTo(0.4915991654376534, within(TIGHT));
            // the new alpha serves step 6 of this turn ...
            assertThat(at(t[1], 2).rho()).isCloseTo(0.4915991654376534, within(TIGHT));
            // ... and step 3 of the next one (alpha0 = 0.5 there would give rho_A = 0.82)
            assertThat(at(t[2], 0).rho()).isCloseTo(0.8115991605216619, within(1e-9));
            assertThat(at(t[2], 1).rho()).isCloseTo(0.399999996, within(1e-9));
            assertThat(at(t[2], 2).rho()).isCloseTo(0.39327933235012275, within(1e-9));
        }

        /**
         * wc = 1, wrho = 0, tau = 0.6. Keys A = (4,0,0,0), B = 0, C = (-2,0,0,0).
         * <pre>
         * turn 0: c = 1, h = chat = 1 for all: nothing under 0.6
         * turn 1, qbar = (2,0,0,0): logits 2*4/2 = 4, 0, 2*(-2)/2 = -2, S = e^4 + 1 + e^-2 = 55.7334...
         *   a = 0.9796292071670795, 0.017942534803329194, 0.0024282580295913376
         *   c = 1.9796292071670796, 1.0179425348033293, 1.0024282580295913
         *   h = chat = 1, 0.5142086867166612, 0.5063717257759104; threshold 0.6 * 1 = 0.6
         *   -> B and C removed, in position order [1, 2] (by score it would be [2, 1])
         *   L (before the removal) = (0 + 0.51420868*0.48579132 + 0.50637172*0.49362827)/3 = 0.16658583811080813
         * </pre>
         */
        @Test
        void eq8_thresholdEvictionInPositionOrder_sinksExempt() {
            Map<String, Object> params = Map.of("wc", 1.0, "wrho", 0.0, "tau", 0.6);
            CoreDriver p = driver("fdkvc", 10, params);
            TurnOutput t0 = p.turn(turn(rows(X), null, entry(v(4, 0, 0, 0)), entry(ZERO), entry(v(-2, 0, 0, 0))));
            assertThat(t0.evicted()).isEmpty();
            TurnOutput t1 = p.turn(turn(rows(v(2, 0, 0, 0)), null));
            assertThat(t1.evicted()).containsExactly(1L, 2L);
            assertThat(t1.positions()).containsExactly(0L);
            assertThat(t1.loss()).isCloseTo(0.16658583811080813, within(1e-12));
            assertThat(at(t1, 0).c()).isCloseTo(1.9796292071670796, within(TIGHT));

            // sinks = 2: positions 0 and 1 are never evicted, only C goes
            CoreDriver s = driver("fdkvc", 10, Map.of("wc", 1.0, "wrho", 0.0, "tau", 0.6, "sinks", 2));
            s.turn(turn(rows(X), null, entry(v(4, 0, 0, 0)), entry(ZERO), entry(v(-2, 0, 0, 0))));
            TurnOutput s1 = s.turn(turn(rows(v(2, 0, 0, 0)), null));
            assertThat(s1.evicted()).containsExactly(2L);
            assertThat(s1.positions()).containsExactly(0L, 1L);
            assertThat(at(s1, 1).h()).isCloseTo(0.5142086867166612, within(TIGHT));
        }

        /**
         * beta = 1, alpha0 = 0.5. Keys A = (2,0,0,0), B = 0; embeddings A = X, B = Y; qbar = ebar = X.
         * <pre>
         * rho_A = 0.5, rho_B = 0 -> rhohat 1, 0 -> factors (0.5+0.5)^1 = 1 and 0.5^1 = 0.5
         * logits A 1, B 0: w_A = e/(e+0.5) = 0.8446375965030364, w_B = 0.5/(e+0.5) = 0.15536240349696362
         * beta = 2: factors 1, 0.25: w_A = e/(e+0.25) = 0.9157761915991026
         * logit bias of B = beta*ln(0.5) = -0.6931471805599453
         * </pre>
         */
        @Test
        void eq9_modulationByRelativeRecency() {
            CoreDriver p = driver("fdkvc", 10, Map.of("beta", 1.0, "alpha0", 0.5));
            TurnOutput t0 = p.turn(turn(rows(X), null, entry(v(2, 0, 0, 0), X), entry(ZERO, Y)));
            assertThat(p.policy().modulatesAttention()).isTrue();
            assertThat(at(t0, 0).weight()).isCloseTo(0.8446375965030364, within(FLOAT_BIAS));
            assertThat(at(t0, 1).weight()).isCloseTo(0.15536240349696362, within(FLOAT_BIAS));
            assertThat(weightSum(t0)).isCloseTo(1.0, within(1e-12));
            assertThat(p.stream().logitBias()[0]).isCloseTo(0f, org.assertj.core.data.Offset.offset(1e-7f));
            assertThat((double) p.stream().logitBias()[1]).isCloseTo(-0.6931471805599453, within(1e-6));

            // an entry of the turn in progress (appended, not scored yet) has factor 1:
            // C = (2,0,0,0): logits 1, 0, 1, factors 1, 0.5, 1 -> e, 0.5, e over 2e + 0.5
            KvStream s = p.stream();
            s.append(2, v(2, 0, 0, 0), 0, null, 0, X, 0);
            double[] w = new double[3];
            StreamAttention.weights(s, 3, X, 0, true, w);
            assertThat(w[0]).isCloseTo(0.4578880957995513, within(FLOAT_BIAS));
            assertThat(w[1]).isCloseTo(0.0842238084008974, within(FLOAT_BIAS));
            assertThat(w[2]).isCloseTo(0.4578880957995513, within(FLOAT_BIAS));

            CoreDriver b2 = driver("fdkvc", 10, Map.of("beta", 2.0, "alpha0", 0.5));
            TurnOutput u0 = b2.turn(turn(rows(X), null, entry(v(2, 0, 0, 0), X), entry(ZERO, Y)));
            assertThat(at(u0, 0).weight()).isCloseTo(0.9157761915991026, within(FLOAT_BIAS));
            assertThat(weightSum(u0)).isCloseTo(1.0, within(1e-12));
        }

        @Test
        void eq9_maxRhoNotPositiveGivesFactorOne() {
            // alpha0 = 0: every rho is 0, max rho <= 0 -> factor 1: plain softmax e/(e+1)
            CoreDriver p = driver("fdkvc", 10, Map.of("beta", 1.0, "alpha0", 0.0));
            TurnOutput t0 = p.turn(turn(rows(X), null, entry(v(2, 0, 0, 0), X), entry(ZERO, Y)));
            assertThat(at(t0, 0).weight()).isCloseTo(E / (E + 1), within(FLOAT_BIAS));
            assertThat(at(t0, 1).weight()).isCloseTo(1 / (E + 1), within(FLOAT_BIAS));
            assertThat(p.stream().logitBias()[0]).isEqualTo(0f);
            assertThat(p.stream().logitBias()[1]).isEqualTo(0f);
        }

        @Test
        void eq9_betaZeroIsUnmodulated() {
            CoreDriver p = driver("fdkvc-no-modulation", 10, Map.of("alpha0", 0.5));
            TurnOutput t0 = p.turn(turn(rows(X), null, entry(v(2, 0, 0, 0), X), entry(ZERO, Y)));
            assertThat(at(t0, 0).weight()).isCloseTo(E / (E + 1), within(1e-12));
        }
    }

    @Nested
    @DisplayName("FD-KVC budget eviction (step 7)")
    class BudgetEviction {

        @Test
        void tieIsBrokenByPosition_lowerGoesFirst() {
            // three identical entries: c = 1, rho and h equal -> the lowest positions go first
            TurnOutput t = driver("fdkvc", 2, Map.of()).turn(turn(rows(X), null, entry(X), entry(X), entry(X)));
            assertThat(t.evicted()).containsExactly(0L);
            assertThat(t.positions()).containsExactly(1L, 2L);

            TurnOutput one = driver("fdkvc", 1, Map.of()).turn(turn(rows(X), null, entry(X), entry(X), entry(X)));
            assertThat(one.evicted()).containsExactly(0L, 1L);
            assertThat(one.positions()).containsExactly(2L);

            // position 0 is a sink: the next lowest goes
            TurnOutput sink = driver("fdkvc", 2, Map.of("sinks", 1)).turn(turn(rows(X), null, entry(X), entry(X), entry(X)));
            assertThat(sink.evicted()).containsExactly(1L);
            assertThat(sink.positions()).containsExactly(0L, 2L);
        }

        /**
         * wc = wrho = 0.5, alpha0 = 0.6, budget 1. A: key (2,0,0,0), embedding Y; N: key 0, embedding X.
         * <pre>
         * turn 0 (ebar = X): rho_A = 0.6*max(0, 0) = 0, c_A = 1, h_A = 0.5
         * turn 1 (ebar = X): eq 1 over one entry: a_A = 1, c_A = 2; rho_A = 0 (r = 0 for a single entry)
         *   step 4: h_A = 0.5 = max h -> L = 0 -> alpha = 0.6
         *   step 6: c_N = 1, rho_N = 0.6 * cos(X, X) = 0.6
         *   step 7: max c = 2: h_A = 0.5*1 + 0.5*0 = 0.5, h_N = 0.5*0.5 + 0.5*0.6 = 0.55
         *   budget 1: A (lowest h) goes; N keeps h = 0.55 (recomputed without A it would be 0.5 + 0.3 = 0.8)
         * </pre>
         */
        @Test
        void lowestHGoesAndScoresAreNotRecomputed() {
            CoreDriver p = driver("fdkvc", 1, Map.of("wc", 0.5, "wrho", 0.5, "alpha0", 0.6, "tau", 0.0));
            TurnOutput t0 = p.turn(turn(rows(X), X, entry(v(2, 0, 0, 0), Y)));
            assertThat(at(t0, 0).h()).isCloseTo(0.5, within(TIGHT));
            TurnOutput t1 = p.turn(turn(rows(X), X, entry(ZERO, X)));
            assertThat(t1.evicted()).containsExactly(0L);
            assertThat(at(t1, 1).c()).isEqualTo(1.0);
            assertThat(at(t1, 1).rho()).isCloseTo(0.6, within(TIGHT));
            assertThat(at(t1, 1).h()).isCloseTo(0.55, within(TIGHT));
        }
    }

    @Nested
    @DisplayName("sinks by position (fdkvc) and by order (streaming) when positions do not start at 0")
    class SinkDefinitions {

        private KvStream streamWith(long... positions) {
            KvStream s = new KvStream(4, 0, 4, 16, false);
            for (long p : positions) s.append(p, X, 0, null, 0, X, 0);
            return s;
        }

        @Test
        void fdkvcSinksAreThePositionsBelowSinks() {
            // spec: "sinks: leading entries (position < sinks) never evicted"; positions 10..13 are
            // all >= 2, so none is a sink: four identical entries, budget 2 -> 10 and 11 go (ties by position)
            var policy = io.fdkvc.core.policy.PolicyRegistry.spec("fdkvc", 2, Map.of("sinks", 1)).newPolicy();
            KvStream s = streamWith(10, 11, 12, 13);
            policy.endTurn(s, CoreDriver.toTurn(turn(rows(X), null), 4));
            assertThat(s.evicted().toArray()).containsExactly(10L, 11L);
        }

        @Test
        void streamingSinksAreTheFirstEntries() {
            // spec: "the first `sinks` (default 4) entries plus the B - sinks most recent":
            // positions 10..14, sinks 1, budget 2 -> keep 10 and 14
            var policy = io.fdkvc.core.policy.PolicyRegistry.spec("streaming", 2, Map.of("sinks", 1)).newPolicy();
            KvStream s = streamWith(10, 11, 12, 13, 14);
            policy.endTurn(s, CoreDriver.toTurn(turn(rows(X), null), 4));
            assertThat(s.evicted().toArray()).containsExactly(11L, 12L, 13L);
            assertThat(java.util.Arrays.copyOf(s.positions(), s.size())).containsExactly(10L, 14L);
        }
    }

    @Nested
    @DisplayName("baselines")
    class Baselines {

        @Test
        void full_neverEvicts() {
            CoreDriver p = driver("full", 1, Map.of());
            p.turn(turn(rows(X), null, entry(X), entry(Y)));
            TurnOutput t1 = p.turn(turn(rows(X), null, entry(v(2, 0, 0, 0))));
            assertThat(t1.evicted()).isEmpty();
            assertThat(t1.positions()).containsExactly(0L, 1L, 2L);
            // unmodulated weights of qbar = X: logits 1/2, 0, 1 -> e^0.5, 1, e over their sum
            double sum = Math.exp(0.5) + 1 + E;
            assertThat(at(t1, 0).weight()).isCloseTo(Math.exp(0.5) / sum, within(1e-12));
            assertThat(at(t1, 2).weight()).isCloseTo(E / sum, within(1e-12));
            assertThat(t1.entries()).allSatisfy(e -> assertThat(e.c() + e.rho() + e.h()).isEqualTo(0.0));
        }

        @Test
        void window_keepsTheBudgetMostRecent_oldestEvictedFirst() {
            CoreDriver p = driver("window", 2, Map.of());
            TurnOutput t0 = p.turn(turn(rows(X), null, entry(X), entry(X), entry(X)));
            assertThat(t0.evicted()).containsExactly(0L);
            TurnOutput t1 = p.turn(turn(rows(X), null, entry(Y), entry(Y)));
            assertThat(t1.evicted()).containsExactly(1L, 2L);
            assertThat(t1.positions()).containsExactly(3L, 4L);
        }

        @Test
        void streaming_keepsTheSinksPlusTheMostRecent() {
            CoreDriver p = driver("streaming", 3, Map.of("sinks", 1));
            // positions 0..4, budget 3, sinks 1: keep 0 and the 2 most recent (3, 4); 1 then 2 go
            TurnOutput t0 = p.turn(turn(rows(X), null, entry(X), entry(X), entry(X), entry(X), entry(X)));
            assertThat(t0.evicted()).containsExactly(1L, 2L);
            assertThat(t0.positions()).containsExactly(0L, 3L, 4L);
            TurnOutput t1 = p.turn(turn(rows(X), null, entry(X)));
            assertThat(t1.evicted()).containsExactly(3L);
            assertThat(t1.positions()).containsExactly(0L, 4L, 5L);
        }

        @Test
        void streaming_defaultsToFourSinks() {
            // budget 5, default sinks 4: keep 0..3 plus the most recent
            TurnOutput t = driver("streaming", 5, Map.of()).turn(turn(rows(X), null,
                    entry(X), entry(X), entry(X), entry(X), entry(X), entry(X), entry(X)));
            assertThat(t.positions()).containsExactly(0L, 1L, 2L, 3L, 6L);
            assertThat(t.evicted()).containsExactly(4L, 5L);
        }

        /**
         * budget 3: floor(3/2) = 1 recent entry plus 2 of highest accumulated attention.
         * Keys A = (2,0,0,0), B = C = D = E = F = 0.
         * <pre>
         * turn 0: A, B, C fit; accumulated attention 0
         * turn 1: rows (1,0,0,0) and (-1,0,0,0) over C_{t-1} = {A, B, C}; D arrives with 0
         *   row 1 logits 1, 0, 0: e/(e+2) = 0.5761168847658291, 1/(e+2) = 0.21194155761708547 (B, C)
         *   row 2 logits -1, 0, 0: e^-1/(e^-1+2) = 0.15536240349696362, 1/(e^-1+2) = 0.4223187982515182
         *   acc A = 0.7314792882627927, B = C = 0.6342603558686036, D = 0
         *   recent: D; of A, B, C keep 2: A and, B = C tied, the lower position goes first: B evicted
         * turn 2: row (1,0,0,0) over {A, C, D}: 0.5761168847658291, 0.21194155761708547 twice; E, F arrive
         *   acc A = 1.3075961730286219, C = 0.8462019134856891, D = 0.21194155761708547, E = F = 0
         *   recent: F; of A, C, D, E keep A, C: D and E go, reported in position order [3, 4]
         * </pre>
         */
        @Test
        void h2o_recentHalfPlusHighestAccumulatedAttention() {
            CoreDriver p = driver("h2o", 3, Map.of());
            assertThat(p.turn(turn(rows(X), null, entry(v(2, 0, 0, 0)), entry(ZERO), entry(ZERO))).evicted()).isEmpty();
            TurnOutput t1 = p.turn(turn(rows(X, v(-1, 0, 0, 0)), null, entry(ZERO)));
            assertThat(t1.evicted()).containsExactly(1L);
            assertThat(t1.positions()).containsExactly(0L, 2L, 3L);
            assertThat(at(t1, 0).c()).isCloseTo(0.7314792882627927, within(1e-12));
            assertThat(at(t1, 2).c()).isCloseTo(0.6342603558686036, within(1e-12));
            assertThat(at(t1, 3).c()).isEqualTo(0.0);
            TurnOutput t2 = p.turn(turn(rows(X), null, entry(ZERO), entry(ZERO)));
            assertThat(t2.evicted()).containsExactly(3L, 4L);
            assertThat(t2.positions()).containsExactly(0L, 2L, 5L);
            assertThat(at(t2, 0).c()).isCloseTo(1.3075961730286219, within(1e-12));
            assertThat(at(t2, 2).c()).isCloseTo(0.8462019134856891, within(1e-12));
        }

        /**
         * budget 2. Keys A = (2,0,0,0), B = (-2,0,0,0), C = 0, D = E = F = 0.
         * <pre>
         * turn 1: rows (-1,0,0,0), (1,0,0,0); the last one decides: logits A 1, B -1
         *   w_A = e/(e+e^-1) = 0.8807970779778824, w_B = 0.11920292202211756; C (new) is kept first
         *   -> B goes (the first row would have evicted A)
         * turn 2: last row (1,0,0,0) over {A, C}: logits 1, 0: w_A = 0.7310585786300049, w_C = 0.2689414213699951
         *   D, E, F arrive: they alone exceed B = 2, so both old entries go, lowest weight first (C, A),
         *   then the oldest of the new ones (D)
         * </pre>
         */
        @Test
        void tova_lastRowWeights_newEntriesKeptFirst() {
            CoreDriver p = driver("tova", 2, Map.of());
            p.turn(turn(rows(X), null, entry(v(2, 0, 0, 0)), entry(v(-2, 0, 0, 0))));
            TurnOutput t1 = p.turn(turn(rows(v(-1, 0, 0, 0), X), null, entry(ZERO)));
            assertThat(t1.evicted()).containsExactly(1L);
            assertThat(t1.positions()).containsExactly(0L, 2L);
            assertThat(at(t1, 0).c()).isCloseTo(0.8807970779778824, within(1e-12));
            assertThat(at(t1, 2).c()).isEqualTo(0.0);
            TurnOutput t2 = p.turn(turn(rows(X), null, entry(ZERO), entry(ZERO), entry(ZERO)));
            assertThat(t2.evicted()).containsExactly(2L, 0L, 3L);
            assertThat(t2.positions()).containsExactly(4L, 5L);
        }

        /**
         * window = 2, kernel = 3, budget 4. Keys A = (2,0,0,0), B = (-4,0,0,0), C = (-2,0,0,0), D = 0.
         * <pre>
         * turn 1: rows r0 = (-4,0,0,0), r1 = r2 = (1,0,0,0); the window is r1, r2; E arrives
         *   each row: logits 1, -2, -1, 0 over S = e + e^-2 + e^-1 + 1 = 4.2215
         *   importance (two rows) = 1.2878285197759447, 0.06411720656016999, 0.17428863748406517, 0.4737656361798203
         *   max-pool, kernel 3, clipped: A = max(A,B) = 1.28783, B = max(A,B,C) = 1.28783,
         *                               C = max(B,C,D) = 0.47377, D = max(C,D) = 0.47377
         *   lowest: C and D tied, the lower position goes first -> C evicted
         *   (without pooling B would go; with r0 in the window B's logit 8 dominates and D would go)
         * </pre>
         */
        @Test
        void snapkv_windowedAttentionMaxPooled() {
            CoreDriver p = driver("snapkv", 4, Map.of("window", 2, "kernel", 3));
            p.turn(turn(rows(X), null, entry(v(2, 0, 0, 0)), entry(v(-4, 0, 0, 0)), entry(v(-2, 0, 0, 0)), entry(ZERO)));
            TurnOutput t1 = p.turn(turn(rows(v(-4, 0, 0, 0), X, X), null, entry(ZERO)));
            assertThat(t1.evicted()).containsExactly(2L);
            assertThat(t1.positions()).containsExactly(0L, 1L, 3L, 4L);
        }
    }
}
