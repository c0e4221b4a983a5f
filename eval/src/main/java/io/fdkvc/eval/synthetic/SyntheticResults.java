package io.fdkvc.eval.synthetic;

import io.fdkvc.eval.report.MetricResult;
import io.fdkvc.eval.stats.Bootstrap;
import io.fdkvc.eval.stats.Interval;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Everything a synthetic run measured: per scenario, policy and dialogue the metrics of
 * docs/evaluation.md, and per turn the curves behind the plots. {@link #table()} turns them into
 * tidy rows with bootstrap intervals.
 */
public final class SyntheticResults {
    public static final String LATE_ALIGNMENT = "late_turn_alignment";
    public static final String LATE_ALIGNMENT_PAST = "late_turn_alignment_past";
    public static final String ADAPTATION = "adaptation_turns";
    public static final String ADAPTATION_CENSORED = "adaptation_censored";
    public static final String DIVERSITY = "topic_diversity";
    public static final String RETENTION = "current_topic_retention";
    /** Per-dialogue metrics, in the order of the tables. */
    public static final List<String> METRICS = List.of(LATE_ALIGNMENT, LATE_ALIGNMENT_PAST, ADAPTATION,
            ADAPTATION_CENSORED, DIVERSITY, RETENTION);
    /** Prefix of the paired relative improvement of fdkvc's late-turn alignment over another policy. */
    public static final String IMPROVEMENT_VS = "alignment_improvement_vs_";
    /** Prefix of the adaptation speed-up of fdkvc over H2O: mean(h2o turns) / mean(fdkvc turns). */
    public static final String SPEEDUP_VS = "adaptation_speedup_vs_";
    /** The scenario name of rows averaged over scenarios. */
    public static final String COMPOSITE = "composite";
    public static final String FDKVC = "fdkvc";
    /** The two H2O variants FD-KVC is compared with for adaptation. */
    public static final List<String> H2O = List.of("h2o", "h2o-paper");

    /** The per-turn curves a run keeps. */
    public enum Curve { ALIGNMENT, PAST_MASS_ON_CURRENT, RETENTION }

    private final EvalConfig cfg;
    private final int turns;
    /** [metric][scenario][policy][dialogue] */
    private final double[][][][] perDialogue;
    /** [curve][scenario][policy][dialogue * T + turn] */
    private final double[][][][] curves;
    /** [scenario][dialogue * T + turn]: each dialogue's topic schedule (the same for every policy) */
    private final int[][] turnLabels;
    double seconds;
    private List<MetricResult> table;

    SyntheticResults(EvalConfig cfg) {
        this.cfg = cfg;
        this.turns = cfg.generator().turns();
        int ns = cfg.scenarios().size(), np = cfg.policies().size(), nd = cfg.dialogues();
        perDialogue = new double[METRICS.size()][ns][np][nd];
        curves = new double[Curve.values().length][ns][np][nd * turns];
        turnLabels = new int[ns][nd * turns];
    }

    public EvalConfig config() {
        return cfg;
    }

    /** Wall-clock seconds of the simulation (generation and every policy, all threads). */
    public double seconds() {
        return seconds;
    }

    void record(int s, int p, int i, Dialogue dlg, Trajectory tr) {
        Metrics.Adaptation a = Metrics.adaptation(dlg.turnLabel, tr.pastMassOnCurrent, turns, Metrics.ADAPTATION_THRESHOLD);
        perDialogue[0][s][p][i] = Metrics.lateMean(tr.alignment, turns);
        perDialogue[1][s][p][i] = Metrics.lateMean(tr.alignmentPast, turns);
        perDialogue[2][s][p][i] = a.meanTurns();
        perDialogue[3][s][p][i] = a.censoredShare();
        perDialogue[4][s][p][i] = tr.diversity;
        perDialogue[5][s][p][i] = Metrics.lateMean(tr.retention, turns);
        System.arraycopy(tr.alignment, 0, curves[0][s][p], i * turns, turns);
        System.arraycopy(tr.pastMassOnCurrent, 0, curves[1][s][p], i * turns, turns);
        System.arraycopy(tr.retention, 0, curves[2][s][p], i * turns, turns);
        if (p == 0) System.arraycopy(dlg.turnLabel, 0, turnLabels[s], i * turns, turns);
    }

    /** The per-dialogue values of a metric (a copy); NaN where undefined. */
    public double[] values(String metric, Scenario s, String policy) {
        return perDialogue[metricIndex(metric)][scenario(s)][policy(policy)].clone();
    }

    /**
     * Per-dialogue composite: for dialogue index i, the mean of the metric over the run's
     * scenarios that define it (late alignment and retention: all; diversity and adaptation: those
     * with topic changes), NaN values skipped.
     */
    public double[] compositeValues(String metric, String policy) {
        int m = metricIndex(metric), p = policy(policy);
        double[] out = new double[cfg.dialogues()];
        for (int i = 0; i < out.length; i++) {
            double sum = 0;
            int k = 0;
            for (int s = 0; s < cfg.scenarios().size(); s++) {
                if (!inComposite(metric, cfg.scenarios().get(s))) continue;
                double v = perDialogue[m][s][p][i];
                if (Double.isNaN(v)) continue;
                sum += v;
                k++;
            }
            out[i] = k == 0 ? Double.NaN : sum / k;
        }
        return out;
    }

    /** Whether a scenario enters the composite of a metric. */
    public static boolean inComposite(String metric, Scenario s) {
        return switch (metric) {
            case ADAPTATION, ADAPTATION_CENSORED, DIVERSITY -> s.hasTopicChanges();
            default -> true;
        };
    }

    /** Whether a metric is defined on a scenario (adaptation needs topic changes). */
    public static boolean defined(String metric, Scenario s) {
        return !(metric.equals(ADAPTATION) || metric.equals(ADAPTATION_CENSORED)) || s.hasTopicChanges();
    }

    /** Mean over dialogues of a per-turn curve, NaN where no dialogue defines it. */
    public double[] curve(Curve c, Scenario s, String policy) {
        double[] flat = curves[c.ordinal()][scenario(s)][policy(policy)];
        double[] out = new double[turns];
        for (int t = 0; t < turns; t++) {
            double sum = 0;
            int k = 0;
            for (int i = 0; i < cfg.dialogues(); i++) {
                double v = flat[i * turns + t];
                if (Double.isNaN(v)) continue;
                sum += v;
                k++;
            }
            out[t] = k == 0 ? Double.NaN : sum / k;
        }
        return out;
    }

    /**
     * Adaptation curve: the mean over every topic change (of every dialogue) of the attention
     * mass of the retained past on the new topic, k turns after the change, k = 0..T-1, while the
     * new topic lasts; NaN where no change lasts that long.
     */
    public double[] adaptationCurve(Scenario s, String policy) {
        int si = scenario(s);
        double[] flat = curves[Curve.PAST_MASS_ON_CURRENT.ordinal()][si][policy(policy)];
        int[] label = turnLabels[si];
        double[] sum = new double[turns];
        int[] count = new int[turns];
        for (int i = 0; i < cfg.dialogues(); i++) {
            int o = i * turns;
            for (int st = 1; st < turns; st++) {
                if (label[o + st] == label[o + st - 1]) continue;
                for (int t = st; t < turns && label[o + t] == label[o + st]; t++) {
                    double v = flat[o + t];
                    if (Double.isNaN(v)) continue;
                    sum[t - st] += v;
                    count[t - st]++;
                }
            }
        }
        double[] out = new double[turns];
        for (int k = 0; k < turns; k++) out[k] = count[k] == 0 ? Double.NaN : sum[k] / count[k];
        return out;
    }

    /** Tidy rows with 95% bootstrap intervals: per scenario, composite, and FD-KVC's comparisons. */
    public synchronized List<MetricResult> table() {
        if (table != null) return table;
        // Each row is an independent, separately seeded bootstrap: computed in parallel, kept in order.
        List<java.util.function.Supplier<MetricResult>> jobs = new ArrayList<>();
        List<String> names = cfg.policies().stream().map(p -> p.name()).toList();
        for (Scenario s : cfg.scenarios()) {
            for (String p : names) {
                for (String m : METRICS) {
                    if (!defined(m, s)) continue;
                    jobs.add(() -> row(s.id(), p, m, Bootstrap.mean(values(m, s, p), seed(s.id(), p, m))));
                }
            }
        }
        boolean composite = cfg.scenarios().size() > 1;
        if (composite) {
            for (String p : names) {
                for (String m : METRICS) {
                    if (cfg.scenarios().stream().noneMatch(s -> inComposite(m, s))) continue;
                    jobs.add(() -> row(COMPOSITE, p, m, Bootstrap.mean(compositeValues(m, p), seed(COMPOSITE, p, m))));
                }
            }
        }
        if (names.contains(FDKVC)) {
            List<String> scenarioIds = new ArrayList<>();
            for (Scenario s : cfg.scenarios()) scenarioIds.add(s.id());
            if (composite) scenarioIds.add(COMPOSITE);
            for (String sid : scenarioIds) {
                Scenario s = sid.equals(COMPOSITE) ? null : Scenario.fromId(sid, "scenario");
                for (String q : names) {
                    if (q.equals(FDKVC)) continue;
                    jobs.add(() -> {
                        double[] a = s == null ? compositeValues(LATE_ALIGNMENT, FDKVC) : values(LATE_ALIGNMENT, s, FDKVC);
                        double[] b = s == null ? compositeValues(LATE_ALIGNMENT, q) : values(LATE_ALIGNMENT, s, q);
                        return row(sid, FDKVC, IMPROVEMENT_VS + q, Bootstrap.relativeImprovement(a, b, seed(sid, q, IMPROVEMENT_VS)));
                    });
                }
                boolean changes = s == null ? cfg.scenarios().stream().anyMatch(Scenario::hasTopicChanges) : s.hasTopicChanges();
                if (!changes) continue;
                for (String q : H2O) {
                    if (!names.contains(q)) continue;
                    jobs.add(() -> {
                        double[] a = s == null ? compositeValues(ADAPTATION, q) : values(ADAPTATION, s, q);
                        double[] b = s == null ? compositeValues(ADAPTATION, FDKVC) : values(ADAPTATION, s, FDKVC);
                        return row(sid, FDKVC, SPEEDUP_VS + q, Bootstrap.ratio(a, b, seed(sid, q, SPEEDUP_VS)));
                    });
                }
            }
        }
        table = java.util.stream.IntStream.range(0, jobs.size()).parallel().mapToObj(i -> jobs.get(i).get()).toList();
        return table;
    }

    /** The row of (scenario, policy, metric) in {@link #table()}, or null. */
    public MetricResult find(String scenario, String policy, String metric) {
        for (MetricResult r : table()) {
            if (r.scenario().equals(scenario) && r.policy().equals(policy) && r.metric().equals(metric)) return r;
        }
        return null;
    }

    private static MetricResult row(String scenario, String policy, String metric, Interval iv) {
        return new MetricResult(scenario, policy, metric, iv.mean(), iv.low(), iv.high(), iv.n());
    }

    /** A bootstrap seed per row: reproducible, and different rows do not share resamples by accident. */
    private long seed(String scenario, String policy, String metric) {
        return DialogueGenerator.mix(cfg.seed() ^ ((long) (scenario + '|' + policy + '|' + metric).hashCode() << 17));
    }

    private int metricIndex(String metric) {
        int m = METRICS.indexOf(metric);
        if (m < 0) throw new IllegalArgumentException("unknown metric " + metric);
        return m;
    }

    private int scenario(Scenario s) {
        int i = cfg.scenarioIndex(s);
        if (i < 0) throw new IllegalArgumentException("scenario " + s.id() + " was not run");
        return i;
    }

    private int policy(String name) {
        int i = cfg.policyIndex(name);
        if (i < 0) throw new IllegalArgumentException("policy " + name + " was not run");
        return i;
    }

    @Override
    public String toString() {
        return "SyntheticResults" + Arrays.asList(cfg.scenarios(), cfg.policies().size(), cfg.dialogues());
    }
}
