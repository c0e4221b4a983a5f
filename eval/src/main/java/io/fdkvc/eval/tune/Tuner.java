package io.fdkvc.eval.tune;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.eval.stats.Means;
import io.fdkvc.eval.synthetic.EvalConfig;
import io.fdkvc.eval.synthetic.GeneratorConfig;
import io.fdkvc.eval.synthetic.Progress;
import io.fdkvc.eval.synthetic.Scenario;
import io.fdkvc.eval.synthetic.SyntheticEvaluation;
import io.fdkvc.eval.synthetic.SyntheticResults;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The documented sweep that chooses FD-KVC's evaluation defaults (docs/evaluation.md, "Tuning"):
 * a coordinate search over gamma, alpha0, mu, tau, beta and wc (wrho = 1 - wc) that maximises
 * the composite late-turn alignment on tuning dialogues, then a one-at-a-time sensitivity sweep
 * around the chosen point. Every configuration sees the same dialogues (common random numbers),
 * and the tuning seed must differ from the evaluation seed.
 */
public final class Tuner {
    /** The grid of each tuned parameter. */
    public static final Map<String, double[]> GRID = grid();

    /** Smallest gain of the objective for the search to move (keeps it from chasing noise). */
    public static final double MIN_GAIN = 1e-4;

    private Tuner() {}

    // The first sweep (docs/evaluation.md) chose values on the edges of gamma, tau and beta, so
    // those grids were extended once: gamma down to 0.1, tau up to 0.9, beta up to 8.
    private static Map<String, double[]> grid() {
        Map<String, double[]> g = new LinkedHashMap<>();
        g.put("gamma", new double[]{0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0});
        g.put("alpha0", new double[]{0, 0.1, 0.25, 0.5, 1, 2});
        g.put("mu", new double[]{0, 0.5, 1, 2, 4, 8});
        g.put("tau", new double[]{0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9});
        g.put("beta", new double[]{0, 0.5, 1, 2, 4, 8});
        g.put("wc", new double[]{0, 0.25, 0.45, 0.55, 0.75, 1});
        return g;
    }

    /** The tuning run's settings. */
    public record Config(GeneratorConfig generator, List<Scenario> scenarios, int dialogues, long seed, int threads, int passes) {
        public Config {
            if (seed == EvalConfig.DEFAULT_SEED) {
                throw new ParameterException("seed", seed + " is the evaluation's seed; tune on other dialogues (e.g. the default, 1001)");
            }
            if (passes < 1) throw new ParameterException("passes", "must be >= 1, got " + passes);
        }
    }

    /** One evaluated point: its parameters and composite metrics. */
    public record Point(Map<String, Double> params, double alignment, double adaptation, double diversity) {}

    /** One row of the sensitivity sweep: the parameter, its value, the point. */
    public record Sensitivity(String parameter, double value, Point point) {}

    /**
     * @param spec      the spec's defaults, evaluated
     * @param best      the chosen point
     * @param baselines composite late alignment of reference policies on the same dialogues
     * @param path      every point the search accepted, in order
     */
    public record Result(Point spec, Point best, List<Sensitivity> sensitivity, Map<String, Double> baselines, List<Point> path,
                         int evaluations, double seconds) {}

    public static Result tune(Config cfg, Progress progress) {
        long start = System.nanoTime();
        int[] evals = {0};
        Map<String, Double> current = specDefaults();
        Point spec = evaluate(cfg, List.of(current), evals).getFirst();
        Point best = spec;
        List<Point> path = new ArrayList<>(List.of(spec));
        int lines = GRID.size();
        int totalSteps = (cfg.passes() + 1) * lines;
        int step = 0;
        for (int pass = 0; pass < cfg.passes(); pass++) {
            boolean moved = false;
            for (Map.Entry<String, double[]> e : GRID.entrySet()) {
                // one line of the grid at a time: its points share one pass over the dialogues
                List<Map<String, Double>> candidates = new ArrayList<>();
                for (double v : e.getValue()) if (v != current.get(e.getKey())) candidates.add(with(current, e.getKey(), v));
                for (Point p : evaluate(cfg, candidates, evals)) {
                    if (p.alignment() > best.alignment() + MIN_GAIN) {
                        best = p;
                        moved = true;
                    }
                }
                current = new LinkedHashMap<>(best.params());
                if (path.getLast() != best) path.add(best);
                progress.update(++step, totalSteps);
            }
            if (!moved) break;
        }
        List<Sensitivity> sens = new ArrayList<>();
        for (Map.Entry<String, double[]> e : GRID.entrySet()) {
            List<Map<String, Double>> points = new ArrayList<>();
            for (double v : e.getValue()) points.add(with(best.params(), e.getKey(), v));
            List<Point> evaluated = evaluate(cfg, points, evals);
            for (int i = 0; i < points.size(); i++) sens.add(new Sensitivity(e.getKey(), e.getValue()[i], evaluated.get(i)));
            progress.update(Math.min(++step, totalSteps), totalSteps);
        }
        Map<String, Double> baselines = new LinkedHashMap<>();
        List<PolicySpec> refs = new ArrayList<>();
        for (String b : List.of("h2o", "h2o-paper", "window", "tova", "full")) refs.add(PolicyRegistry.spec(b, cfg.generator().budget()));
        SyntheticResults r = run(cfg, refs);
        for (PolicySpec b : refs) baselines.put(b.name(), Means.skippingNaN(composite(r, SyntheticResults.LATE_ALIGNMENT, b.name())));
        progress.update(totalSteps, totalSteps);
        return new Result(spec, best, sens, baselines, path, evals[0], (System.nanoTime() - start) / 1e9);
    }

    /** The spec's defaults of the tuned parameters. */
    public static Map<String, Double> specDefaults() {
        Map<String, Double> m = new LinkedHashMap<>();
        Map<String, Object> d = PolicyRegistry.spec(SyntheticResults.FDKVC, 1).parameterValues();
        for (String k : GRID.keySet()) m.put(k, ((Number) d.get(k)).doubleValue());
        return m;
    }

    private static Map<String, Double> with(Map<String, Double> base, String k, double v) {
        Map<String, Double> m = new LinkedHashMap<>(base);
        m.put(k, v);
        return m;
    }

    /** The FD-KVC parameters of a point: wrho follows wc. */
    public static Map<String, Object> policyParams(Map<String, Double> point) {
        Map<String, Object> m = new LinkedHashMap<>(point);
        m.put("wrho", 1 - point.get("wc"));
        return m;
    }

    /** Evaluates FD-KVC at each point, all on the same dialogues in one pass; in input order. */
    private static List<Point> evaluate(Config cfg, List<Map<String, Double>> points, int[] evals) {
        if (points.isEmpty()) return List.of();
        evals[0] += points.size();
        List<PolicySpec> specs = new ArrayList<>();
        for (int i = 0; i < points.size(); i++) {
            PolicySpec s = PolicyRegistry.spec(SyntheticResults.FDKVC, cfg.generator().budget(), policyParams(points.get(i)));
            specs.add(new PolicySpec(SyntheticResults.FDKVC + "#" + i, s.budget(), s.params(), s.kind())); // distinct names in one run
        }
        SyntheticResults r = run(cfg, specs);
        List<Point> out = new ArrayList<>();
        for (int i = 0; i < points.size(); i++) {
            String name = specs.get(i).name();
            out.add(new Point(java.util.Collections.unmodifiableMap(new LinkedHashMap<>(points.get(i))),
                    Means.skippingNaN(composite(r, SyntheticResults.LATE_ALIGNMENT, name)),
                    Means.skippingNaN(composite(r, SyntheticResults.ADAPTATION, name)),
                    Means.skippingNaN(composite(r, SyntheticResults.DIVERSITY, name))));
        }
        return out;
    }

    private static SyntheticResults run(Config cfg, List<PolicySpec> specs) {
        return SyntheticEvaluation.run(new EvalConfig(cfg.generator(), cfg.scenarios(), cfg.dialogues(), specs, cfg.seed(), cfg.threads()),
                Progress.NONE);
    }

    private static double[] composite(SyntheticResults r, String metric, String policy) {
        if (r.config().scenarios().size() == 1) return r.values(metric, r.config().scenarios().get(0), policy);
        return r.compositeValues(metric, policy);
    }
}
