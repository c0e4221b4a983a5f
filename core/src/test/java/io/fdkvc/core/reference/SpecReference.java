package io.fdkvc.core.reference;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * An independent reference implementation of /work/shared/spec/fdkvc-algorithm.md, written from
 * the spec text only (never from the policies in core/src/main). Plain double-precision Java over a
 * list of entries, one method per step, the spec's wording quoted next to the code.
 *
 * <p>Besides the policy's outputs, each turn reports whether one of its discrete decisions
 * (threshold, budget ranking, eviction order) was a <em>near tie</em>: two scores within
 * {@link #NEAR_TIE} (relative) of each other that are not equal for a structural reason, or an
 * ill-conditioned normalisation in eq. 4. A float32 implementation may legitimately decide such a
 * case either way, so a differential test stops comparing at the first such turn.
 *
 * <p>Structural ties are the ones any deterministic implementation reproduces bit for bit, and
 * they are resolved by position as the spec says: two entries whose scores come from identical
 * inputs. The cumulative attention c of two entries is structurally equal when both are new this
 * turn (c = 1) or they arrived in the same turn with bit-identical keys (same logits every turn);
 * rho when they arrived in the same turn with bit-identical embeddings (or zero ones), or when both
 * are exactly 0 by construction: inserted with a zero vector or a clearly negative cosine (step 6)
 * and at the minimum cosine in every turn since (r = 0 in eq. 4), or alpha0 = 0.
 * Coincidentally equal doubles (e.g. parallel but different vectors) are near ties.
 */
public final class SpecReference {

    /** Relative gap below which two different scores are a near tie for a float32 implementation. */
    public static final double NEAR_TIE = 1e-5;
    /**
     * Absolute gap below which two FD-KVC scores are a near tie: rho carries the absolute error of
     * a float32 cosine (about 1e-7), so a score near 0 (a cosine near 0) has no reliable sign.
     */
    public static final double NEAR_TIE_ABS = 1e-6;
    /** eq. 4: a cosine spread below this amplifies float32 cosine errors beyond the test tolerance. */
    public static final double MIN_COS_SPREAD = 1e-2;
    /** The absolute error of a float32 cosine (as above, about 1e-7). */
    public static final double COS_ERR = 1e-7;

    // ---------------------------------------------------------------- inputs and outputs

    /** One new entry of a turn; a null embedding means "the key" (trace format). */
    public record NewEntry(float[] key, float[] embedding) {
        public float[] embeddingOrKey() {
            return embedding == null ? key : embedding;
        }
    }

    /** One turn: query rows (n x d), the optional query embedding (null: the mean query), new entries. */
    public record TurnInput(float[][] queries, float[] queryEmbedding, List<NewEntry> entries) {}

    /** One entry of the cache after a turn. */
    public record EntryState(long position, double c, double rho, double h, double weight) {}

    /**
     * The state after one turn: the cache in position order, alpha, loss, evicted positions in
     * removal order, the near tie, if any, that made a decision of this turn float-sensitive, and
     * {@code lossSlack}: what eq. 4's cosine errors, kept in rho over the turns and normalised by
     * eq. 6, add to the loss's float32 error (see {@code fdkvcTurn}; 0 where none).
     */
    public record TurnOutput(List<EntryState> entries, double alpha, double loss, List<Long> evicted, String nearTie, double lossSlack) {
        public TurnOutput(List<EntryState> entries, double alpha, double loss, List<Long> evicted, String nearTie) {
            this(entries, alpha, loss, evicted, nearTie, 0);
        }

        /** Whether a near tie (reason in {@link #nearTie()}, null when none) made this turn float-sensitive. */
        public boolean hasNearTie() {
            return nearTie != null;
        }

        public List<Long> positions() {
            return entries.stream().map(EntryState::position).toList();
        }
    }

    // ---------------------------------------------------------------- parameters (spec tables)

    /** The spec's defaults for FD-KVC ("Hyper-parameters and defaults"). */
    public static Map<String, Double> fdkvcDefaults() {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("gamma", 0.85);
        m.put("alpha0", 0.5);
        m.put("mu", 2.0);
        m.put("tau", 0.05);
        m.put("beta", 1.0);
        m.put("wc", 0.45);
        m.put("wrho", 0.55);
        m.put("sinks", 0.0);
        return m;
    }

    /** The values each FD-KVC variant pins ("Special cases of the formula"). */
    public static Map<String, Double> pinned(String name) {
        return switch (name) {
            case "fdkvc" -> Map.of();
            case "h2o-paper" -> Map.of("wc", 1.0, "wrho", 0.0, "beta", 0.0, "tau", 0.0);
            case "fdkvc-no-decay" -> Map.of("gamma", 1.0);
            case "fdkvc-no-reinforce" -> Map.of("alpha0", 0.0);
            case "fdkvc-fixed-lr" -> Map.of("mu", 0.0);
            case "fdkvc-no-modulation" -> Map.of("beta", 0.0);
            case "fdkvc-no-threshold" -> Map.of("tau", 0.0);
            case "fdkvc-recency-only" -> Map.of("wc", 0.0, "wrho", 1.0);
            default -> throw new IllegalArgumentException("not an FD-KVC variant: " + name);
        };
    }

    public static boolean isFdkvcVariant(String name) {
        // the spec's variants only: fdkvc-dialogue and fdkvc-fidelity are extensions with their own parameters
        return Traces.FDKVC_VARIANTS.contains(name);
    }

    private static final double EPS = 1e-8;

    private enum Kind { FDKVC, FULL, WINDOW, STREAMING, H2O, TOVA, SNAPKV }

    private final Kind kind;
    private final int budget;
    // FD-KVC
    private double gamma, alpha0, mu, tau, beta, wc, wrho;
    private int sinks;
    private double alpha;
    /** A bound on the absolute float32 error any cached rho carries: eq. 4's cosine errors, decayed by eq. 2 like rho itself. */
    private double rhoErr;
    // snapkv
    private int window = 32, kernel = 7;

    private final List<E> cache = new ArrayList<>();
    private long nextPosition;
    private int dim = -1;
    private int turnIndex = -1;

    /** One cache entry. {@code c} doubles as h2o's accumulated attention and tova's/snapkv's score. */
    private static final class E {
        final long pos;
        final double[] k;
        final double[] e;
        final int turn; // the turn the entry arrived in
        final String keyClass; // bit pattern of the key
        final String embeddingClass; // bit pattern of the embedding, "0" for a zero one
        double c, rho, h;
        boolean rhoExactZero; // rho = 0 for a structural reason (see the class comment)
        String poolSource; // snapkv: the key of the entry whose importance the max-pool took

        E(long pos, float[] k, float[] e, int turn) {
            this.pos = pos;
            this.k = toDouble(k);
            this.e = toDouble(e);
            this.turn = turn;
            this.keyClass = java.util.Arrays.toString(k);
            this.embeddingClass = dot(this.e, this.e) == 0 ? "0" : java.util.Arrays.toString(e);
        }
    }

    private SpecReference(String name, int budget, Map<String, ? extends Number> params) {
        this.budget = budget;
        Map<String, Double> p = new HashMap<>();
        if (isFdkvcVariant(name)) {
            kind = Kind.FDKVC;
            p.putAll(fdkvcDefaults());
            p.putAll(pinned(name));
        } else {
            kind = switch (name) {
                case "full" -> Kind.FULL;
                case "window" -> Kind.WINDOW;
                case "streaming" -> Kind.STREAMING;
                case "h2o" -> Kind.H2O;
                case "tova" -> Kind.TOVA;
                case "snapkv" -> Kind.SNAPKV;
                default -> throw new IllegalArgumentException("no reference for policy " + name);
            };
            if (kind == Kind.STREAMING) p.put("sinks", 4.0); // spec: "the first `sinks` (default 4)"
            if (kind == Kind.SNAPKV) {
                p.put("window", 32.0); // "the turn's last `window` (32) query rows"
                p.put("kernel", 7.0); //  "max-pooled over neighbouring positions (kernel 7)"
            }
        }
        for (Map.Entry<String, ? extends Number> e : params.entrySet()) p.put(e.getKey(), e.getValue().doubleValue());
        if (kind == Kind.FDKVC) {
            gamma = p.get("gamma");
            alpha0 = p.get("alpha0");
            mu = p.get("mu");
            tau = p.get("tau");
            beta = p.get("beta");
            wc = p.get("wc");
            wrho = p.get("wrho");
            sinks = (int) (double) p.get("sinks");
            alpha = alpha0; // "The learning rate alpha carried from the previous turn (alpha0 at the first)."
        } else if (kind == Kind.STREAMING) {
            sinks = (int) (double) p.get("sinks");
        } else if (kind == Kind.SNAPKV) {
            window = (int) (double) p.get("window");
            kernel = (int) (double) p.get("kernel");
        }
    }

    /** A reference for a registry policy name (every name but {@code random}). */
    public static SpecReference of(String name, int budget, Map<String, ? extends Number> params) {
        return new SpecReference(name, budget, params);
    }

    // ---------------------------------------------------------------- one turn

    public TurnOutput turn(TurnInput in) {
        int d = in.queries()[0].length;
        if (dim < 0) dim = d;
        turnIndex++;
        double[][] q = new double[in.queries().length][];
        for (int r = 0; r < q.length; r++) q[r] = toDouble(in.queries()[r]);
        double[] qbar = mean(q); // "their mean qbar_t"
        // "ebar_q = qbar_t" by default; the trace format: queryEmbedding defaults to the mean of the rows
        double[] eq = in.queryEmbedding() == null ? qbar : toDouble(in.queryEmbedding());
        List<E> fresh = new ArrayList<>();
        for (NewEntry ne : in.entries()) {
            fresh.add(new E(nextPosition++, ne.key(), ne.embeddingOrKey(), turnIndex));
        }
        Step s = new Step();
        switch (kind) {
            case FDKVC -> fdkvcTurn(qbar, eq, fresh, s);
            case FULL -> cache.addAll(fresh);
            case WINDOW -> windowTurn(fresh, 0, s);
            case STREAMING -> windowTurn(fresh, sinks, s);
            case H2O -> h2oTurn(q, fresh, s);
            case TOVA -> tovaOrSnapTurn(new double[][] {q[q.length - 1]}, 1, fresh, s);
            case SNAPKV -> tovaOrSnapTurn(q, kernel, fresh, s);
        }
        double[] w = attentionAfterTurn(qbar);
        List<EntryState> out = new ArrayList<>();
        for (int i = 0; i < cache.size(); i++) {
            E e = cache.get(i);
            out.add(new EntryState(e.pos, e.c, e.rho, e.h, w[i]));
        }
        boolean fd = kind == Kind.FDKVC;
        return new TurnOutput(out, fd ? alpha : 0, fd ? s.loss : 0, s.evicted, s.nearTie, fd ? s.lossSlack : 0);
    }

    private static final class Step {
        final List<Long> evicted = new ArrayList<>();
        double loss, lossSlack;
        String nearTie;
    }

    // ---------------------------------------------------------------- FD-KVC, Algorithm 1

    private void fdkvcTurn(double[] qbar, double[] eq, List<E> fresh, Step s) {
        // "If C is empty, go straight to step 6."
        if (!cache.isEmpty()) {
            // 1. a_i = softmax_i(qbar_t . k_i / sqrt(d)) over i in C;  c_i += a_i.   (eq 1)
            double[] a = softmax(logits(qbar, cache));
            for (int i = 0; i < cache.size(); i++) cache.get(i).c += a[i];

            // 2. rho_i *= gamma.   (eq 2)
            for (E e : cache) e.rho *= gamma;
            rhoErr *= gamma;

            // 3. cos_i = cos(e_i, ebar_q) (0 when a norm is 0);
            //    r_i = (cos_i - min_j cos_j) / (max_j cos_j - min_j cos_j + eps);  rho_i += alpha * r_i.  (eq 3,4)
            double[] cos = new double[cache.size()];
            double minCos = Double.POSITIVE_INFINITY, maxCos = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < cache.size(); i++) {
                cos[i] = cosine(cache.get(i).e, eq);
                minCos = Math.min(minCos, cos[i]);
                maxCos = Math.max(maxCos, cos[i]);
            }
            double spread = maxCos - minCos;
            // eps = 1e-8 is below the resolution of a float32 cosine: a spread that is not exactly 0
            // for a structural reason (all embeddings alike) but small makes r float-sensitive
            boolean oneClass = cache.stream().map(x -> x.embeddingClass).distinct().count() == 1
                    || dot(eq, eq) == 0;
            if (alpha > 0 && !oneClass && spread < MIN_COS_SPREAD) s.nearTie = "eq. 4 cosine spread " + spread;
            String minClass = null;
            for (int i = 0; i < cache.size(); i++) if (cos[i] == minCos) minClass = cache.get(i).embeddingClass;
            for (int i = 0; i < cache.size(); i++) {
                double r = (cos[i] - minCos) / (spread + EPS);
                cache.get(i).rho += alpha * r;
                // r = 0 exactly for the entries at the minimum, in any implementation, unless another
                // cosine is within float32 resolution of the minimum (or equal to it by coincidence)
                if (alpha > 0 && cos[i] != minCos) cache.get(i).rhoExactZero = false;
                boolean coincident = cos[i] == minCos && !oneClass && !cache.get(i).embeddingClass.equals(minClass);
                if (alpha > 0 && (coincident || cos[i] != minCos && cos[i] - minCos <= 1e-6)) s.nearTie = "eq. 4 minimum";
            }

            // 4. chat_i = c_i / max_j c_j;  h_i = wc*chat_i + wrho*rho_i;   (eq 5)
            double maxC = 0;
            for (E e : cache) maxC = Math.max(maxC, e.c);
            double maxH = Double.NEGATIVE_INFINITY;
            for (E e : cache) {
                double chat = e.c / maxC;
                e.h = wc * chat + wrho * e.rho;
                maxH = Math.max(maxH, e.h);
            }
            //    hhat_i = h_i / max_j h_j (0 if max h <= 0);  L = mean_i hhat_i (1 - hhat_i);   (eq 6)
            double sum = 0;
            for (E e : cache) {
                double hhat = maxH <= 0 ? 0 : e.h / maxH;
                sum += hhat * (1 - hhat);
            }
            double loss = sum / cache.size();
            if (maxH > 0 && maxH < NEAR_TIE_ABS) s.nearTie = "eq. 6 max h at float32 noise level";
            s.loss = loss;
            // The loss normalises h by its maximum, so eq. 4's error reaches it unscaled by alpha:
            // each r carries about 2 COS_ERR / spread (two float32 cosines over the spread), and rho
            // keeps every turn's share of that, decayed by gamma like rho itself (rhoErr). Each hhat
            // carries twice its h's share (h_i and max h), and L = mean hhat (1 - hhat) moves by at
            // most the largest hhat error: 2 wrho rhoErr / max h. One turn's term alone reaches 4e-5
            // at MIN_COS_SPREAD, past the comparison's 1e-5 (the trace that found it: 3e-5 relative
            // at a spread of 0.0145); the accumulation was found by CI (fdkvc-fixed-lr, turn 2: loss
            // off by 1.41e-6 at 1.05e-3, past the one-turn bound).
            if (alpha > 0 && !oneClass) rhoErr += 2 * alpha * COS_ERR / (spread + EPS);
            if (wrho > 0 && maxH > 0) s.lossSlack = 2 * wrho * rhoErr / maxH;
            //    alpha <- alpha0 / (1 + mu*L)   (eq 7)
            alpha = alpha0 / (1 + mu * loss);

            // 5. Remove every non-sink entry with h_i < tau * max_j h_j.   (eq 8)
            //    (evicted: "threshold removals (eq. 8) in position order")
            double threshold = tau * maxH;
            List<E> kept = new ArrayList<>();
            for (E e : cache) {
                boolean sink = e.pos < sinks;
                if (!sink && threshold > 0 && Math.abs(e.h - threshold) <= NEAR_TIE * maxH + NEAR_TIE_ABS) {
                    s.nearTie = "eq. 8 threshold";
                }
                if (!sink && e.h < threshold) {
                    s.evicted.add(e.pos);
                } else {
                    kept.add(e);
                }
            }
            cache.clear();
            cache.addAll(kept);
        }

        // 6. Insert each new entry j with c_j = 1 and rho_j = alpha * max(0, cos(e_j, ebar_q)).
        for (E e : fresh) {
            e.c = 1;
            double cos = cosine(e.e, eq);
            e.rho = alpha * Math.max(0, cos);
            // rho = 0 whatever the float rounding: a zero vector (cosine 0 by definition) or a
            // cosine clearly below 0
            e.rhoExactZero = alpha == 0 || e.embeddingClass.equals("0") || dot(eq, eq) == 0 || cos < -1e-5;
            cache.add(e);
        }

        // 7. Compute chat and h over the whole cache, new entries included (these are the turn's scores).
        double maxC = 0;
        for (E e : cache) maxC = Math.max(maxC, e.c);
        for (E e : cache) e.h = wc * (e.c / maxC) + wrho * e.rho;
        //    If |C| > B, remove the |C| - B non-sink entries of lowest h; ties: the lower position goes
        //    first. The scores are not recomputed during this removal.
        if (cache.size() > budget) {
            List<E> candidates = new ArrayList<>();
            for (E e : cache) if (e.pos >= sinks) candidates.add(e);
            candidates.sort(Comparator.comparingDouble((E e) -> e.h).thenComparingLong(e -> e.pos));
            int excess = cache.size() - budget;
            checkOrder(candidates, excess, e -> e.h, NEAR_TIE_ABS, this::sameH, s);
            removeInOrder(candidates.subList(0, excess), s);
        }
    }

    // ---------------------------------------------------------------- baselines

    /**
     * window: "the B most recent entries"; streaming: "the first `sinks` entries plus the B - sinks
     * most recent". Evicted oldest first (trace format).
     */
    private void windowTurn(List<E> fresh, int sinkCount, Step s) {
        cache.addAll(fresh);
        int excess = cache.size() - budget;
        if (excess <= 0) return;
        List<E> victims = new ArrayList<>();
        for (int i = 0; i < cache.size() && victims.size() < excess; i++) {
            if (i < sinkCount) continue; // the first `sinks` entries of the stream
            victims.add(cache.get(i));
        }
        removeInOrder(victims, s);
    }

    /**
     * h2o: "accumulated attention of every query row (column sums of the turn's attention matrix over
     * C_{t-1}, new entries start at 0); keep the floor(B/2) most recent plus the B - floor(B/2) other
     * entries of highest accumulated attention (ties: the lower position goes first)". Evicted in
     * position order (trace format).
     */
    private void h2oTurn(double[][] q, List<E> fresh, Step s) {
        if (!cache.isEmpty()) {
            for (double[] row : q) {
                double[] a = softmax(logits(row, cache));
                for (int i = 0; i < cache.size(); i++) cache.get(i).c += a[i];
            }
        }
        for (E e : fresh) e.c = 0;
        cache.addAll(fresh);
        int excess = cache.size() - budget;
        if (excess <= 0) return;
        int recent = budget / 2;
        List<E> others = new ArrayList<>(cache.subList(0, cache.size() - recent));
        // lowest accumulated attention is evicted first; ties: the lower position goes first
        others.sort(Comparator.comparingDouble((E e) -> e.c).thenComparingLong(e -> e.pos));
        checkBoundary(others, excess, e -> e.c, 0, this::sameC, s);
        List<E> victims = new ArrayList<>(others.subList(0, excess));
        victims.sort(Comparator.comparingLong(e -> e.pos));
        removeInOrder(victims, s);
    }

    /**
     * tova (rows = the last query row, kernel 1) and snapkv (rows = all, of which the last `window`
     * are used, max-pooled with `kernel` over the entries of C_{t-1} in position order, clipped at
     * the ends). Scores are the attention over C_{t-1}; the turn's entries score 0 and are kept
     * before any older one; where they alone exceed B the oldest of them go first. Evicted from the
     * lowest score up (ties: lower position first), then the turn's entries oldest first.
     */
    private void tovaOrSnapTurn(double[][] q, int poolKernel, List<E> fresh, Step s) {
        int m = cache.size();
        if (m > 0) {
            int rows = kind == Kind.SNAPKV ? Math.min(window, q.length) : 1;
            double[] importance = new double[m];
            for (int r = q.length - rows; r < q.length; r++) {
                double[] a = softmax(logits(q[r], cache));
                for (int i = 0; i < m; i++) importance[i] += a[i];
            }
            int half = poolKernel / 2;
            for (int i = 0; i < m; i++) {
                double max = Double.NEGATIVE_INFINITY;
                int source = -1;
                for (int j = Math.max(0, i - half); j <= Math.min(m - 1, i + half); j++) {
                    if (importance[j] > max) {
                        max = importance[j];
                        source = j;
                    }
                }
                cache.get(i).c = max;
                cache.get(i).poolSource = cache.get(source).keyClass;
            }
        }
        for (E e : fresh) e.c = 0;
        List<E> old = new ArrayList<>(cache);
        cache.addAll(fresh);
        int excess = cache.size() - budget;
        if (excess <= 0) return;
        old.sort(Comparator.comparingDouble((E e) -> e.c).thenComparingLong(e -> e.pos));
        int fromOld = Math.min(excess, old.size());
        checkOrder(old, fromOld, e -> e.c, 0, kind == Kind.TOVA ? (x, y) -> x.keyClass.equals(y.keyClass) : this::samePooled, s);
        List<E> victims = new ArrayList<>(old.subList(0, fromOld));
        victims.addAll(fresh.subList(0, excess - fromOld)); // the oldest of the turn's entries
        removeInOrder(victims, s);
    }

    // ---------------------------------------------------------------- eq. 9 and helpers

    /**
     * The attention weight of the mean query over the cache after the turn; for FD-KVC with eq. 9:
     * w_i * (0.5 + 0.5*rhohat_i)^beta renormalised, rhohat_i = rho_i / max_j rho_j over the cache
     * (factor 1 for all when max rho <= 0). Every entry has been scored after the turn.
     */
    private double[] attentionAfterTurn(double[] qbar) {
        double[] w = softmax(logits(qbar, cache));
        if (kind != Kind.FDKVC || cache.isEmpty()) return w;
        double maxRho = Double.NEGATIVE_INFINITY;
        for (E e : cache) maxRho = Math.max(maxRho, e.rho);
        if (maxRho <= 0) return w;
        double sum = 0;
        for (int i = 0; i < w.length; i++) {
            double rhohat = cache.get(i).rho / maxRho;
            w[i] *= Math.pow(0.5 + 0.5 * rhohat, beta);
            sum += w[i];
        }
        for (int i = 0; i < w.length; i++) w[i] /= sum;
        return w;
    }

    private void removeInOrder(List<E> victims, Step s) {
        for (E v : victims) {
            s.evicted.add(v.pos);
            cache.remove(v);
        }
    }

    private interface Structural {
        boolean tied(E a, E b);
    }

    /**
     * The first {@code count} of {@code sorted} (ascending score, then position) are removed in that
     * order: flag a near tie between one of them and any entry after it.
     */
    private static void checkOrder(List<E> sorted, int count, ToDoubleFunction<E> score, double abs, Structural same, Step s) {
        for (int i = 0; i < count; i++) {
            for (int j = i + 1; j < sorted.size() && close(sorted.get(i), sorted.get(j), score, abs); j++) {
                if (!structuralTie(sorted.get(i), sorted.get(j), score, same)) {
                    s.nearTie = "eviction order";
                }
            }
        }
    }

    /** Only the set of the first {@code count} matters: flag a near tie across the boundary. */
    private static void checkBoundary(List<E> sorted, int count, ToDoubleFunction<E> score, double abs, Structural same, Step s) {
        for (int i = count - 1; i >= 0 && i < sorted.size(); i--) {
            boolean anyClose = false;
            for (int j = count; j < sorted.size() && close(sorted.get(i), sorted.get(j), score, abs); j++) {
                anyClose = true;
                if (!structuralTie(sorted.get(i), sorted.get(j), score, same)) s.nearTie = "eviction set";
            }
            if (!anyClose) break;
        }
    }

    private static boolean close(E a, E b, ToDoubleFunction<E> score, double abs) {
        double x = score.applyAsDouble(a), y = score.applyAsDouble(b);
        return Math.abs(x - y) <= NEAR_TIE * Math.max(Math.abs(x), Math.abs(y)) + abs;
    }

    private static boolean structuralTie(E a, E b, ToDoubleFunction<E> score, Structural same) {
        return score.applyAsDouble(a) == score.applyAsDouble(b) && same.tied(a, b);
    }

    /** c equal by construction: both new this turn (c = 1), or same arrival turn and same key. */
    private boolean sameC(E a, E b) {
        boolean aNew = a.turn == turnIndex, bNew = b.turn == turnIndex;
        if (aNew || bNew) return aNew && bNew;
        return a.turn == b.turn && a.keyClass.equals(b.keyClass);
    }

    /** rho equal by construction (see the class comment). */
    private boolean sameRho(E a, E b) {
        if (alpha0 == 0) return true;
        boolean aNew = a.turn == turnIndex, bNew = b.turn == turnIndex;
        if (a.rhoExactZero && b.rhoExactZero) return true;
        return a.turn == b.turn && a.embeddingClass.equals(b.embeddingClass);
    }

    private boolean sameH(E a, E b) {
        return (wc == 0 || sameC(a, b)) && (wrho == 0 || sameRho(a, b));
    }

    private boolean samePooled(E a, E b) {
        return a.poolSource.equals(b.poolSource);
    }

    private double[] logits(double[] query, List<E> entries) {
        double[] z = new double[entries.size()];
        for (int i = 0; i < z.length; i++) z[i] = dot(query, entries.get(i).k) / Math.sqrt(dim);
        return z;
    }

    static double[] softmax(double[] z) {
        double max = Double.NEGATIVE_INFINITY;
        for (double v : z) max = Math.max(max, v);
        double[] out = new double[z.length];
        double sum = 0;
        for (int i = 0; i < z.length; i++) {
            out[i] = Math.exp(z[i] - max);
            sum += out[i];
        }
        for (int i = 0; i < z.length; i++) out[i] /= sum;
        return out;
    }

    static double cosine(double[] a, double[] b) {
        double na = Math.sqrt(dot(a, a)), nb = Math.sqrt(dot(b, b));
        if (na == 0 || nb == 0) return 0; // "(0 when a norm is 0)"
        return dot(a, b) / (na * nb);
    }

    static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) s += a[i] * b[i];
        return s;
    }

    static double[] mean(double[][] rows) {
        double[] m = new double[rows[0].length];
        for (double[] r : rows) for (int i = 0; i < m.length; i++) m[i] += r[i];
        for (int i = 0; i < m.length; i++) m[i] /= rows.length;
        return m;
    }

    static double[] toDouble(float[] v) {
        double[] d = new double[v.length];
        for (int i = 0; i < v.length; i++) d[i] = v[i];
        return d;
    }
}
