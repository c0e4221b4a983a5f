package io.fdkvc.eval.dialogue;

import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.eval.dialogue.DialogueEvaluation.Contender;
import io.fdkvc.eval.dialogue.DialogueEvaluation.Evaluation;
import io.fdkvc.eval.stats.Means;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The grid search behind {@code fdkvc-dialogue}'s defaults ({@code fdkvc tune --dataset ...}):
 * every combination of the grid's values, with the references (packed window, LangChain4j's
 * token window, fdkvc-tuned, tova), scored on a train split at the budgets the goal names: the
 * default headline budget (30% of the median dialogue) and 20% and 30% of each dialogue's
 * tokens. Objective on SGD: the mean over those three budgets of the mean of
 * needed_context_recall and needed_value_recall_any; elsewhere the dataset's headline metric at
 * those budgets. Run it on train splits only (docs/evaluation-dialogues.md).
 */
public final class DialoguePolicyTuning {
    /** The default grid (docs/evaluation-dialogues.md): 3 x 3 x 2 x 3 x 4 x 2 = 432 points. */
    public static final Map<String, List<Double>> DEFAULT_GRID = grid(
            "recent", List.of(0.25, 0.5, 0.75),
            "gamma", List.of(0.3, 0.7, 1.0),
            "wc", List.of(0.0, 0.5),
            "wrho", List.of(0.0, 0.5, 1.0),
            "wnovel", List.of(0.0, 0.5, 1.0, 2.0),
            "wspeaker", List.of(0.0, 0.3));
    static final List<String> REFERENCES = List.of("window", LangChain4jMemory.TOKEN_WINDOW, DialogueOptions.TUNED, "tova", "fdkvc-dialogue");
    static final List<Double> SHARES = List.of(0.2, 0.3);

    private DialoguePolicyTuning() {}

    private static Map<String, List<Double>> grid(Object... kv) {
        Map<String, List<Double>> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            @SuppressWarnings("unchecked") List<Double> v = (List<Double>) kv[i + 1];
            m.put((String) kv[i], v);
        }
        return m;
    }

    /**
     * The default grid with the given axes replaced ({@code --grid NAME=V1,V2,...}); an axis that
     * is not a parameter of fdkvc-dialogue, or a value it refuses, is an error naming it.
     */
    public static Map<String, List<Double>> gridWith(Map<String, List<Double>> overrides) {
        Map<String, List<Double>> g = new LinkedHashMap<>(DEFAULT_GRID);
        for (Map.Entry<String, List<Double>> e : overrides.entrySet()) {
            if (!g.containsKey(e.getKey())) throw new InputException("--grid " + e.getKey() + ": not a parameter of fdkvc-dialogue (" + String.join(", ", g.keySet()) + ")");
            if (e.getValue().isEmpty()) throw new InputException("--grid " + e.getKey() + ": no values");
            for (double v : e.getValue()) PolicyRegistry.spec("fdkvc-dialogue", 1, Map.of(e.getKey(), v)); // refuses bad values by name
            g.put(e.getKey(), List.copyOf(e.getValue()));
        }
        return g;
    }

    /** One grid point's result. */
    public record Point(String label, Map<String, Double> params, double objective, double[] headline, double far, double fill) {}

    /** The result: every point and reference, best first, and the budgets' labels. */
    public record Result(List<Point> ranked, List<String> columns, int references) {}

    /** Runs the grid (and the references) on {@code ds}, best first. */
    public static Result tune(DialogueOptions o, List<EmbeddedDialogue> ds, Map<String, List<Double>> grid) {
        Dataset dataset = o.dataset();
        List<Contender> cs = new ArrayList<>();
        List<Map<String, Double>> params = new ArrayList<>();
        DialogueOptions refs = o.withPolicies(REFERENCES, Map.of());
        for (Contender c : DialogueEvaluation.contenders(refs, ds)) {
            cs.add(new Contender("(" + c.label() + ")", c.memory()));
            params.add(Map.of());
        }
        int nRefs = cs.size();
        List<String> names = new ArrayList<>(grid.keySet());
        int[] idx = new int[names.size()];
        while (true) {
            Map<String, Double> p = new LinkedHashMap<>();
            for (int k = 0; k < names.size(); k++) p.put(names.get(k), grid.get(names.get(k)).get(idx[k]));
            PolicySpec s = PolicyRegistry.spec("fdkvc-dialogue", Integer.MAX_VALUE, p);
            cs.add(Contender.policy(label(p), s, o.packing()));
            params.add(p);
            int k = names.size() - 1;
            while (k >= 0 && ++idx[k] == grid.get(names.get(k)).size()) idx[k--] = 0;
            if (k < 0) break;
        }
        Budget headline = Budget.tokens(DialogueEvaluation.headlineBudget(ds, o.budgetTokens()));
        Evaluation ev = DialogueEvaluation.evaluate(dataset, ds, cs, headline, SHARES, o.temperature(), o.threads(), f -> {});
        List<Metric> goal = dataset == Dataset.SGD ? List.of(Metric.NEEDED_CONTEXT_RECALL, Metric.NEEDED_VALUE_RECALL_ANY) : List.of(dataset.headline());
        List<String> columns = new ArrayList<>();
        for (int b = 0; b < ev.budgets().size(); b++) for (Metric m : goal) columns.add(ev.name(m, b) + (b == 0 ? "@" + headline.label().replace(" tokens", "t") : ""));
        List<Point> points = new ArrayList<>();
        for (int c = 0; c < cs.size(); c++) {
            double[] cols = new double[columns.size()];
            int k = 0;
            double sum = 0;
            for (int b = 0; b < ev.budgets().size(); b++) {
                for (Metric m : goal) {
                    cols[k] = Means.skippingNaN(ev.values(c, b, m));
                    sum += cols[k++];
                }
            }
            double far = dataset == Dataset.SGD ? Means.skippingNaN(ev.values(c, 0, Metric.NEEDED_CONTEXT_RECALL_FAR)) : Double.NaN;
            double fill = Means.skippingNaN(ev.values(c, 0, Metric.CACHE_FILL));
            points.add(new Point(cs.get(c).label(), params.get(c), sum / cols.length, cols, far, fill));
        }
        // Best first; the sort is stable, so among equal objectives the earlier point (references, then grid order) wins.
        List<Point> ranked = new ArrayList<>(points);
        ranked.sort(Comparator.comparingDouble((Point p) -> -p.objective()));
        return new Result(ranked, columns, nRefs);
    }

    /** The ranking as markdown: the best {@code top} grid points and every reference. */
    public static String markdown(Result r, int top) {
        StringBuilder sb = new StringBuilder("| rank | policy | objective |");
        for (String c : r.columns()) sb.append(' ').append(c).append(" |");
        sb.append(" recall_far | cache_fill |\n|---|---|---|");
        for (int i = 0; i < r.columns().size() + 2; i++) sb.append("---|");
        sb.append('\n');
        int shown = 0;
        for (int k = 0; k < r.ranked().size(); k++) {
            Point p = r.ranked().get(k);
            boolean reference = p.params().isEmpty();
            if (!reference && shown++ >= top) continue;
            sb.append(String.format(Locale.ROOT, "| %d | %s | %.4f |", k + 1, p.label(), p.objective()));
            for (double x : p.headline()) sb.append(String.format(Locale.ROOT, " %.4f |", x));
            sb.append(String.format(Locale.ROOT, " %.4f | %.3f |%n", p.far(), p.fill()));
        }
        return sb.toString();
    }

    /** The best grid point's parameters (references aside). */
    public static Map<String, Double> best(Result r) {
        for (Point p : r.ranked()) if (!p.params().isEmpty()) return p.params();
        throw new IllegalStateException("empty grid");
    }

    static String label(Map<String, Double> p) {
        StringBuilder sb = new StringBuilder("fdkvc-dialogue[");
        boolean first = true;
        for (Map.Entry<String, Double> e : p.entrySet()) {
            if (!first) sb.append(' ');
            first = false;
            sb.append(e.getKey()).append('=').append(e.getValue());
        }
        return sb.append(']').toString();
    }

    /** Parses {@code NAME=V1,V2,...}. */
    public static Map.Entry<String, List<Double>> axis(String spec) {
        int eq = spec.indexOf('=');
        if (eq <= 0) throw new InputException("--grid: expected NAME=V1,V2,..., got '" + spec + "'");
        List<Double> values = new ArrayList<>();
        for (String v : spec.substring(eq + 1).split(",")) {
            try {
                values.add(Double.parseDouble(v.trim()));
            } catch (NumberFormatException e) {
                throw new InputException("--grid " + spec.substring(0, eq) + ": '" + v + "' is not a number");
            }
        }
        return Map.entry(spec.substring(0, eq).trim(), values);
    }

    static String arrays(double[] x) {
        return Arrays.toString(x);
    }
}
