package io.fdkvc.core.reference;

import io.fdkvc.core.reference.SpecReference.NewEntry;
import io.fdkvc.core.reference.SpecReference.TurnInput;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/** jqwik generators of random traces: a policy with valid parameters, a budget and turns of vectors. */
public final class Traces {
    private Traces() {}

    /** A replayable trace. Params hold only what the test sets explicitly (pinned values omitted). */
    public record Trace(String policy, int budget, Map<String, Number> params, int dim, List<TurnInput> turns) {
        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder(policy + " budget=" + budget + " " + params + " d=" + dim + "\n");
            for (int i = 0; i < turns.size(); i++) {
                TurnInput t = turns.get(i);
                sb.append(" turn ").append(i).append(": queries=").append(Arrays.deepToString(t.queries()))
                        .append(" qEmb=").append(Arrays.toString(t.queryEmbedding())).append(" entries=[");
                for (NewEntry e : t.entries()) {
                    sb.append("{k=").append(Arrays.toString(e.key()));
                    if (e.embedding() != null) sb.append(" e=").append(Arrays.toString(e.embedding()));
                    sb.append("}");
                }
                sb.append("]\n");
            }
            return sb.toString();
        }
    }

    /** How the keys and embeddings of a trace are drawn. */
    public enum Mode {
        /** independent uniform vectors, now and then the zero vector */
        RANDOM,
        /** a pool of 1 to 3 vectors (identical keys: exact ties), the zero vector among them now and then */
        POOL
    }

    public static final List<String> FDKVC_VARIANTS = List.of("fdkvc", "h2o-paper", "fdkvc-no-decay",
            "fdkvc-no-reinforce", "fdkvc-fixed-lr", "fdkvc-no-modulation", "fdkvc-no-threshold", "fdkvc-recency-only");
    public static final List<String> BASELINES = List.of("full", "window", "streaming", "h2o", "tova", "snapkv");

    /** Uniform components in [-1, 1]. */
    public static Arbitrary<float[]> uniformVector(int d) {
        return Arbitraries.floats().between(-1f, 1f).ofScale(5).array(float[].class).ofSize(d);
    }

    /** Uniform vectors, the zero vector one time in twenty. */
    public static Arbitrary<float[]> anyVector(int d) {
        return Arbitraries.frequencyOf(Tuple.of(19, uniformVector(d)), Tuple.of(1, Arbitraries.just(new float[d])));
    }

    static Arbitrary<Arbitrary<float[]>> keySources(int d, Mode mode) {
        if (mode == Mode.RANDOM) return Arbitraries.just(anyVector(d));
        return anyVector(d).list().ofMinSize(1).ofMaxSize(3).map(pool -> Arbitraries.of(pool));
    }

    public static Arbitrary<TurnInput> turn(int d, Arbitrary<float[]> keys, int maxEntries, int maxRows) {
        Arbitrary<float[][]> queries = anyVector(d).array(float[][].class).ofMinSize(1).ofMaxSize(maxRows);
        Arbitrary<float[]> queryEmbedding = anyVector(d).injectNull(0.5);
        Arbitrary<NewEntry> entry = Combinators.combine(keys, keys.injectNull(0.5)).as(NewEntry::new);
        return Combinators.combine(queries, queryEmbedding, entry.list().ofMaxSize(maxEntries)).as(TurnInput::new);
    }

    /** Valid parameters for {@code name} (without the values the variant pins). */
    public static Arbitrary<Map<String, Number>> params(String name, int budget) {
        if (SpecReference.isFdkvcVariant(name)) {
            Arbitrary<Double> gamma = Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.just(1.0)),
                    Tuple.of(4, Arbitraries.doubles().between(0.0, false, 1.0, true).ofScale(3)));
            Arbitrary<Double> alpha0 = Arbitraries.doubles().between(0, 2).ofScale(3);
            Arbitrary<Double> mu = Arbitraries.doubles().between(0, 5).ofScale(3);
            Arbitrary<Double> tau = Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.just(0.0)),
                    Tuple.of(4, Arbitraries.doubles().between(0, 0.95).ofScale(3)));
            Arbitrary<Double> beta = Arbitraries.doubles().between(0, 3).ofScale(3);
            Arbitrary<Double> wc = Arbitraries.doubles().between(0, 1).ofScale(3);
            Arbitrary<Integer> sinks = Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.just(0)),
                    Tuple.of(1, Arbitraries.integers().between(0, budget - 1)));
            Map<String, Double> pinned = SpecReference.pinned(name);
            return Combinators.combine(gamma, alpha0, mu, tau, beta, wc, sinks).as((g, a, m, t, b, w, s) -> {
                Map<String, Number> p = new LinkedHashMap<>();
                p.put("gamma", g);
                p.put("alpha0", a);
                p.put("mu", m);
                p.put("tau", t);
                p.put("beta", b);
                p.put("wc", w);
                p.put("wrho", 1.0 - w);
                p.put("sinks", s);
                p.keySet().removeAll(pinned.keySet());
                if (pinned.containsKey("wc")) p.remove("wrho");
                if (pinned.containsKey("wrho")) p.remove("wc");
                return p;
            });
        }
        return switch (name) {
            case "streaming" -> Arbitraries.integers().between(0, budget - 1).map(s -> Map.<String, Number>of("sinks", s));
            case "fdkvc-fidelity" -> Combinators.combine(Arbitraries.integers().between(0, budget - 1),
                    Arbitraries.doubles().between(0, 1).ofScale(3), Arbitraries.integers().between(1, 8))
                    .as((s, r, w) -> Map.<String, Number>of("sinks", s, "recent", r, "window", w));
            case "snapkv" -> Combinators.combine(
                    Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.just(32)), Tuple.of(3, Arbitraries.integers().between(1, 8))),
                    Arbitraries.integers().between(0, 4).map(k -> 2 * k + 1))
                    .as((w, k) -> Map.<String, Number>of("window", w, "kernel", k));
            case "random" -> Arbitraries.longs().map(seed -> Map.<String, Number>of("seed", seed));
            default -> Arbitraries.just(Map.of());
        };
    }

    /**
     * The same traces with keys and queries multiplied by 1, 30 or 1000: logits up to about 4000,
     * far past where a softmax without the max subtracted overflows.
     */
    public static Arbitrary<Trace> scaled(Arbitrary<Trace> traces) {
        return Combinators.combine(traces, Arbitraries.of(1f, 30f, 1000f)).as((t, f) -> {
            List<TurnInput> turns = t.turns().stream().map(in -> new TurnInput(
                    Arrays.stream(in.queries()).map(q -> times(q, f)).toArray(float[][]::new),
                    in.queryEmbedding(),
                    in.entries().stream().map(e -> new NewEntry(times(e.key(), f), e.embeddingOrKey())).toList())).toList();
            return new Trace(t.policy(), t.budget(), t.params(), t.dim(), turns);
        });
    }

    private static float[] times(float[] v, float f) {
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) out[i] = v[i] * f;
        return out;
    }

    /** d in 2..16, 1..12 turns of 0..10 entries and 1..6 query rows, budget 1..20. */
    public static Arbitrary<Trace> traces(List<String> names) {
        return Combinators.combine(Arbitraries.of(names).withoutEdgeCases(), Arbitraries.integers().between(1, 20),
                Arbitraries.integers().between(2, 16), Arbitraries.of(Mode.class))
                .flatAs((name, budget, d, mode) -> keySources(d, mode).flatMap(keys -> Combinators.combine(
                        params(name, budget), turn(d, keys, 10, 6).list().ofMinSize(1).ofMaxSize(12))
                        .as((p, turns) -> new Trace(name, budget, p, d, turns))));
    }
}
