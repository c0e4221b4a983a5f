package io.fdkvc.eval.tune;

import io.fdkvc.eval.plot.Plots;
import io.fdkvc.eval.synthetic.GeneratorConfig;
import io.fdkvc.eval.synthetic.Scenario;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The tuning run's report: markdown tables, sensitivity.csv and one sensitivity plot per parameter. */
public final class TuneReport {
    public static final String CSV_HEADER = "parameter,value,late_turn_alignment,adaptation_turns,topic_diversity";

    private TuneReport() {}

    public static String markdown(Tuner.Config cfg, Tuner.Result r, String command) {
        StringBuilder md = new StringBuilder();
        GeneratorConfig g = cfg.generator();
        List<String> sc = new ArrayList<>();
        for (Scenario s : cfg.scenarios()) sc.add(s.id());
        md.append("# FD-KVC tuning\n\n");
        md.append("Command: `").append(command).append("`  \n");
        md.append(String.format(Locale.ROOT, "Tuning dialogues: %d per scenario (%s), seed %d; T=%d n=%d m=%d d=%d B=%d noise=%s sharpness=%s; "
                        + "%d configurations evaluated in %.1f s.%n%n", cfg.dialogues(), String.join(", ", sc), cfg.seed(), g.turns(),
                g.entriesPerTurn(), g.queries(), g.dim(), g.budget(), g.noise(), g.sharpness(), r.evaluations(), r.seconds()));
        md.append("Objective: composite late-turn alignment of `fdkvc` (mean over the scenarios). Composite adaptation turns and ");
        md.append("topic diversity are shown, not optimised.\n\n");
        md.append("| configuration | late_turn_alignment | adaptation_turns | topic_diversity |\n|---|---|---|---|\n");
        md.append(row("spec defaults: " + params(r.spec().params()), r.spec()));
        md.append(row("**chosen**: " + params(r.best().params()), r.best()));
        for (Map.Entry<String, Double> b : r.baselines().entrySet()) {
            md.append(String.format(Locale.ROOT, "| %s (for reference) | %.4f | | |%n", b.getKey(), b.getValue()));
        }
        md.append("\nSearch path (each accepted move):\n\n");
        for (Tuner.Point p : r.path()) md.append(String.format(Locale.ROOT, "- %.4f  %s%n", p.alignment(), params(p.params())));
        md.append("\n## Sensitivity around the chosen point (one parameter at a time)\n\n");
        Map<String, List<Tuner.Sensitivity>> by = byParameter(r);
        for (Map.Entry<String, List<Tuner.Sensitivity>> e : by.entrySet()) {
            md.append("| ").append(e.getKey()).append(" | late_turn_alignment | adaptation_turns | topic_diversity |\n|---|---|---|---|\n");
            for (Tuner.Sensitivity s : e.getValue()) {
                boolean chosen = s.value() == r.best().params().get(s.parameter());
                md.append(String.format(Locale.ROOT, "| %s%s | %.4f | %.2f | %.3f |%n", fmt(s.value()), chosen ? " (chosen)" : "",
                        s.point().alignment(), s.point().adaptation(), s.point().diversity()));
            }
            md.append('\n');
        }
        return md.toString();
    }

    public static void writeAll(Tuner.Config cfg, Tuner.Result r, String command, Path dir) throws IOException {
        StringBuilder csv = new StringBuilder(CSV_HEADER).append('\n');
        for (Tuner.Sensitivity s : r.sensitivity()) {
            csv.append(s.parameter()).append(',').append(s.value()).append(',').append(s.point().alignment()).append(',')
                    .append(s.point().adaptation()).append(',').append(s.point().diversity()).append('\n');
        }
        Files.writeString(dir.resolve("sensitivity.csv"), csv, StandardCharsets.UTF_8);
        StringBuilder md = new StringBuilder(markdown(cfg, r, command));
        md.append("## Plots\n\n");
        for (Map.Entry<String, List<Tuner.Sensitivity>> e : byParameter(r).entrySet()) {
            List<Tuner.Sensitivity> l = e.getValue();
            double[] x = new double[l.size()], y = new double[l.size()];
            for (int i = 0; i < l.size(); i++) {
                x[i] = l.get(i).value();
                y[i] = l.get(i).point().alignment();
            }
            Map<String, double[]> series = new LinkedHashMap<>();
            series.put("fdkvc", y);
            for (Map.Entry<String, Double> b : r.baselines().entrySet()) {
                if (!b.getKey().startsWith("h2o")) continue;
                double[] flat = new double[x.length];
                java.util.Arrays.fill(flat, b.getValue());
                series.put(b.getKey(), flat);
            }
            String f = "sensitivity-" + e.getKey() + ".png";
            Plots.lines(dir.resolve(f), "Sensitivity to " + e.getKey() + " (others at the chosen point)", e.getKey(),
                    "composite late-turn alignment", x, series, null);
            md.append("![").append(e.getKey()).append("](").append(f).append(")\n\n");
        }
        Files.writeString(dir.resolve("tune.md"), md, StandardCharsets.UTF_8);
    }

    static Map<String, List<Tuner.Sensitivity>> byParameter(Tuner.Result r) {
        Map<String, List<Tuner.Sensitivity>> by = new LinkedHashMap<>();
        for (Tuner.Sensitivity s : r.sensitivity()) by.computeIfAbsent(s.parameter(), k -> new ArrayList<>()).add(s);
        return by;
    }

    private static String row(String label, Tuner.Point p) {
        return String.format(Locale.ROOT, "| %s | %.4f | %.2f | %.3f |%n", label, p.alignment(), p.adaptation(), p.diversity());
    }

    static String params(Map<String, Double> p) {
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, Double> e : p.entrySet()) parts.add(e.getKey() + "=" + fmt(e.getValue()));
        return String.join(" ", parts);
    }

    static String fmt(double v) {
        return v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.valueOf(v);
    }
}
