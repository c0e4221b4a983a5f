package io.fdkvc.eval.fidelity;

import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.eval.stats.Bootstrap;
import io.fdkvc.eval.stats.Interval;
import io.fdkvc.eval.stats.Means;
import java.util.ArrayList;
import java.util.List;

/**
 * Every student's scores on every conversation, and their aggregates: the mean over
 * conversations (equal weight) with its 95% percentile-bootstrap interval over conversations,
 * paired differences against {@code window} at the same budget and positions (the same
 * conversations resampled for both), and the per-turn KL curve.
 *
 * @param scores  {@code scores[conversation][student]}
 * @param seconds wall time of the run
 */
public record FidelityResults(List<TokenizedConversation> conversations, List<Student> students, ConversationScore[][] scores,
                              double seconds) {
    /** The metrics, as results.csv names them. */
    public enum Metric {
        KL("kl"), TOP1("top1"), NLL("nll"), NLL_FULL("nll_full"), PROBE_NLL_INCREASE("probe_nll_increase");

        public final String id;

        Metric(String id) { this.id = id; }

        double of(ConversationScore s) {
            return switch (this) {
                case KL -> s.kl();
                case TOP1 -> s.top1();
                case NLL -> s.nll();
                case NLL_FULL -> s.nllFull();
                case PROBE_NLL_INCREASE -> s.probeNllIncrease();
            };
        }
    }

    /** The policy the paired differences are taken against. */
    public static final String REFERENCE = "window";
    /** Seed of every bootstrap of the report. */
    public static final long BOOTSTRAP_SEED = 1;

    /**
     * One aggregate: a metric of a student (or its difference against {@link #REFERENCE}, metric
     * {@code <metric>_minus_window}).
     */
    public record Row(String policy, int budget, String positions, String metric, Interval value) {}

    /** One student's values of {@code m} over the conversations (NaN where undefined). */
    public double[] values(int student, Metric m) {
        double[] v = new double[scores.length];
        for (int c = 0; c < scores.length; c++) v[c] = m.of(scores[c][student]);
        return v;
    }

    public Interval interval(int student, Metric m) {
        return Bootstrap.mean(values(student, m), BOOTSTRAP_SEED);
    }

    /** The index of {@code policy}'s student at {@code budget} and {@code positions}, or -1. */
    public int find(String policy, int budget, PositionMode positions) {
        for (int s = 0; s < students.size(); s++) {
            Student st = students.get(s);
            if (st.policy().equals(policy) && st.budget() == budget && st.positions() == positions) return s;
        }
        return -1;
    }

    /** Student minus {@link #REFERENCE} at the same budget and positions, per conversation; null without a reference. */
    public Interval differenceToReference(int student, Metric m) {
        Student st = students.get(student);
        int ref = find(REFERENCE, st.budget(), st.positions());
        if (ref < 0 || ref == student) return null;
        double[] a = values(student, m), b = values(ref, m), d = new double[a.length];
        for (int i = 0; i < a.length; i++) d[i] = a[i] - b[i];
        return Bootstrap.mean(d, BOOTSTRAP_SEED);
    }

    /** Mean KL per dialogue turn over the conversations that have the turn (NaN for turn 0). */
    public double[] turnCurve(int student) {
        int turns = 0;
        for (TokenizedConversation c : conversations) turns = Math.max(turns, c.turns());
        double[] curve = new double[turns];
        for (int t = 0; t < turns; t++) {
            double[] v = new double[scores.length];
            for (int c = 0; c < scores.length; c++) {
                double[] tk = scores[c][student].turnKl();
                v[c] = t < tk.length ? tk[t] : Double.NaN;
            }
            curve[t] = Means.skippingNaN(v);
        }
        return curve;
    }

    /** The tidy rows of results.csv: every metric of every student, then the differences against window. */
    public List<Row> rows() {
        List<Row> out = new ArrayList<>();
        for (int s = 0; s < students.size(); s++) {
            Student st = students.get(s);
            for (Metric m : Metric.values()) out.add(new Row(st.policy(), st.budget(), st.positions().label(), m.id, interval(s, m)));
        }
        for (int s = 0; s < students.size(); s++) {
            Student st = students.get(s);
            for (Metric m : List.of(Metric.KL, Metric.TOP1, Metric.PROBE_NLL_INCREASE)) {
                Interval d = differenceToReference(s, m);
                if (d != null) out.add(new Row(st.policy(), st.budget(), st.positions().label(), m.id + "_minus_" + REFERENCE, d));
            }
        }
        return out;
    }

    /** Predictions measured per conversation, summed. */
    public long predictions() {
        long n = 0;
        for (ConversationScore[] row : scores) if (row.length > 0) n += row[0].predictions();
        return n;
    }
}
