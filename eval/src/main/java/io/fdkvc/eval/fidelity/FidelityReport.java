package io.fdkvc.eval.fidelity;

import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.eval.fidelity.FidelityResults.Metric;
import io.fdkvc.eval.fidelity.FidelityResults.Row;
import io.fdkvc.eval.plot.Plots;
import io.fdkvc.eval.report.ResultsCsv;
import io.fdkvc.eval.stats.Bootstrap;
import io.fdkvc.eval.stats.Interval;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The files of a fidelity report: report.md (the table policy x budget x positions with intervals,
 * the paired differences against window, the per-turn curve, the plots), results.json,
 * results.csv ({@value #CSV_HEADER}) and the PNG plots (KL against budget, per-turn KL).
 */
public final class FidelityReport {
    public static final String CSV_HEADER = "policy,budget,positions,metric,mean,lo,hi,n";
    private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    /**
     * @param command       the command line
     * @param conversations the conversations file
     * @param model         the model file
     * @param seconds       wall time of the run (forward passes and metrics)
     */
    public record Info(String command, String model, String conversations, double seconds, int threads) {}

    private FidelityReport() {}

    public static void write(FidelityResults r, Info info, Path dir) throws IOException {
        List<Row> rows = r.rows();
        Files.writeString(dir.resolve("results.csv"), csv(rows), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("results.json"), json(r, rows, info), StandardCharsets.UTF_8);
        List<String> plots = plots(r, dir);
        Files.writeString(dir.resolve("report.md"), markdown(r, info, plots), StandardCharsets.UTF_8);
    }

    static String csv(List<Row> rows) {
        StringBuilder sb = new StringBuilder(CSV_HEADER).append('\n');
        for (Row row : rows) {
            Interval v = row.value();
            sb.append(ResultsCsv.field(row.policy())).append(',').append(row.budget()).append(',').append(row.positions()).append(',')
                    .append(row.metric()).append(',').append(ResultsCsv.number(v.mean())).append(',').append(ResultsCsv.number(v.low()))
                    .append(',').append(ResultsCsv.number(v.high())).append(',').append(v.n()).append('\n');
        }
        return sb.toString();
    }

    private static String json(FidelityResults r, List<Row> rows, Info info) {
        ObjectNode root = JSON.createObjectNode();
        root.put("command", info.command());
        root.put("model", info.model());
        root.put("conversations_file", info.conversations());
        root.put("seconds", info.seconds());
        root.put("threads", info.threads());
        root.put("conversations", r.conversations().size());
        root.put("predictions_per_student", r.predictions());
        ObjectNode pol = root.putObject("policies");
        for (Student s : r.students()) {
            if (pol.has(s.policy())) continue;
            ObjectNode o = pol.putObject(s.policy());
            o.put("registry_name", s.spec().name());
            ObjectNode p = o.putObject("params");
            for (Map.Entry<String, Object> e : s.spec().parameterValues().entrySet()) p.put(e.getKey(), String.valueOf(e.getValue()));
        }
        ArrayNode rs = root.putArray("results");
        for (Row row : rows) {
            ObjectNode o = rs.addObject();
            o.put("policy", row.policy());
            o.put("budget", row.budget());
            o.put("positions", row.positions());
            o.put("metric", row.metric());
            num(o, "mean", row.value().mean());
            num(o, "lo", row.value().low());
            num(o, "hi", row.value().high());
            o.put("n", row.value().n());
        }
        ArrayNode curves = root.putArray("kl_by_turn");
        for (int s = 0; s < r.students().size(); s++) {
            Student st = r.students().get(s);
            ObjectNode o = curves.addObject();
            o.put("policy", st.policy());
            o.put("budget", st.budget());
            o.put("positions", st.positions().label());
            ArrayNode a = o.putArray("kl");
            for (double x : r.turnCurve(s)) {
                if (Double.isNaN(x)) a.addNull(); else a.add(x);
            }
        }
        return JSON.writeValueAsString(root) + "\n";
    }

    private static void num(ObjectNode o, String k, double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) o.putNull(k); else o.put(k, v);
    }

    private static List<String> policies(FidelityResults r) {
        LinkedHashSet<String> p = new LinkedHashSet<>();
        for (Student s : r.students()) p.add(s.policy());
        return new ArrayList<>(p);
    }

    private static List<Integer> budgets(FidelityResults r) {
        LinkedHashSet<Integer> b = new LinkedHashSet<>();
        for (Student s : r.students()) b.add(s.budget());
        return new ArrayList<>(b);
    }

    private static List<PositionMode> modes(FidelityResults r) {
        LinkedHashSet<PositionMode> m = new LinkedHashSet<>();
        for (Student s : r.students()) m.add(s.positions());
        return new ArrayList<>(m);
    }

    private static List<String> plots(FidelityResults r, Path dir) {
        List<String> names = new ArrayList<>();
        List<Integer> budgets = budgets(r);
        double[] x = new double[budgets.size()];
        for (int i = 0; i < x.length; i++) x[i] = budgets.get(i);
        for (PositionMode mode : modes(r)) {
            Map<String, double[]> series = new LinkedHashMap<>();
            for (String p : policies(r)) {
                double[] y = new double[budgets.size()];
                for (int i = 0; i < y.length; i++) {
                    int s = r.find(p, budgets.get(i), mode);
                    y[i] = s < 0 ? Double.NaN : r.interval(s, Metric.KL).mean();
                }
                series.put(p, y);
            }
            String name = "kl-by-budget-" + mode.label() + ".png";
            Plots.lines(dir.resolve(name), "KL(full || policy) against budget, " + mode.label() + " positions", "budget (entries per stream)",
                    "mean KL, nats per token", x, series, null);
            names.add(name);
            int b = budgets.getFirst();
            Map<String, double[]> turns = new LinkedHashMap<>();
            double[] tx = null;
            for (String p : policies(r)) {
                int s = r.find(p, b, mode);
                if (s < 0) continue;
                double[] curve = r.turnCurve(s);
                if (tx == null) {
                    tx = new double[curve.length];
                    for (int t = 0; t < tx.length; t++) tx[t] = t;
                }
                turns.put(p, curve);
            }
            if (tx != null) {
                String tn = "kl-by-turn-" + mode.label() + "-b" + b + ".png";
                Plots.lines(dir.resolve(tn), "KL(full || policy) per dialogue turn, budget " + b + ", " + mode.label() + " positions",
                        "dialogue turn", "mean KL, nats per token", tx, turns, null);
                names.add(tn);
            }
        }
        return names;
    }

    static String markdown(FidelityResults r, Info info, List<String> plots) {
        StringBuilder md = new StringBuilder("# Fidelity: what a bounded cache costs the model\n\n");
        int convs = r.conversations().size();
        long probes = 0;
        for (TokenizedConversation c : r.conversations()) probes += c.probes().size();
        md.append(String.format(Locale.ROOT, "Model `%s`, conversations `%s`: %d conversations, %d predictions each cache, %d probes. "
                        + "Command: `%s`. Run time %.1f s on %d threads.%n%n", info.model(), info.conversations(), convs, r.predictions(), probes,
                info.command(), info.seconds(), info.threads()));
        md.append("Each cache is fed the conversation turn by turn, teacher-forced, and its policy ends every turn as in `chat`; "
                + "metrics are over the predictions at every position of turns 1..T-1. `kl`: mean KL(full || policy) in nats; "
                + "`top1`: share of positions whose argmax equals the full cache's; `nll`: mean NLL of the actual next token "
                + "(full: " + fmt(fullNll(r)) + "); `probe`: mean over probes of the summed NLL increase over the probe's tokens. "
                + "Mean over conversations with its 95% percentile-bootstrap interval (" + Bootstrap.RESAMPLES + " resamples).\n\n");
        for (PositionMode mode : modes(r)) {
            md.append("## ").append(mode.label()).append(" positions\n\n");
            md.append("| policy | budget | kl | top1 | nll | probe | kl - window | probe - window |\n|---|---|---|---|---|---|---|---|\n");
            for (int b : budgets(r)) {
                for (String p : policies(r)) {
                    int s = r.find(p, b, mode);
                    if (s < 0) continue;
                    md.append("| ").append(p).append(" | ").append(b).append(" | ").append(cell(r.interval(s, Metric.KL))).append(" | ")
                            .append(cell(r.interval(s, Metric.TOP1))).append(" | ").append(cell(r.interval(s, Metric.NLL))).append(" | ")
                            .append(cell(r.interval(s, Metric.PROBE_NLL_INCREASE))).append(" | ")
                            .append(cell(r.differenceToReference(s, Metric.KL))).append(" | ")
                            .append(cell(r.differenceToReference(s, Metric.PROBE_NLL_INCREASE))).append(" |\n");
                }
            }
            md.append('\n');
            int b = budgets(r).getFirst();
            md.append("Mean KL per dialogue turn at budget ").append(b).append(":\n\n| policy |");
            int turns = 0;
            for (TokenizedConversation c : r.conversations()) turns = Math.max(turns, c.turns());
            for (int t = 1; t < turns; t++) md.append(' ').append(t).append(" |");
            md.append("\n|---|");
            for (int t = 1; t < turns; t++) md.append("---|");
            md.append('\n');
            for (String p : policies(r)) {
                int s = r.find(p, b, mode);
                if (s < 0) continue;
                double[] curve = r.turnCurve(s);
                md.append("| ").append(p).append(" |");
                for (int t = 1; t < turns; t++) md.append(' ').append(fmt(curve[t])).append(" |");
                md.append('\n');
            }
            md.append('\n');
            for (String plot : plots) {
                if (plot.contains("-" + mode.label())) md.append("![").append(plot).append("](").append(plot).append(")\n\n");
            }
        }
        return md.toString();
    }

    private static double fullNll(FidelityResults r) {
        return r.students().isEmpty() ? Double.NaN : r.interval(0, Metric.NLL_FULL).mean();
    }

    private static String cell(Interval v) {
        if (v == null) return "";
        if (v.n() == 0) return "n/a";
        return String.format(Locale.ROOT, "%s [%s, %s]", fmt(v.mean()), fmt(v.low()), fmt(v.high()));
    }

    private static String fmt(double x) {
        if (Double.isNaN(x)) return "n/a";
        if (x != 0 && Math.abs(x) < 0.001) return String.format(Locale.ROOT, "%.2e", x);
        return String.format(Locale.ROOT, "%.3f", x);
    }
}
