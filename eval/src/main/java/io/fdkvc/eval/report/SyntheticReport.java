package io.fdkvc.eval.report;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.eval.plot.Plots;
import io.fdkvc.eval.synthetic.GeneratorConfig;
import io.fdkvc.eval.synthetic.Scenario;
import io.fdkvc.eval.synthetic.SyntheticResults;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The synthetic benchmark's report: the comparison table for stdout, report.md, results.csv,
 * results.json and the plots. Other evaluations (the real dialogues) add their rows and a
 * markdown section through {@link #writeAll}'s extra arguments.
 */
public final class SyntheticReport {
    private SyntheticReport() {}

    /** Extra content for a report: more tidy rows and a markdown section (may be empty). */
    public record Extra(List<MetricResult> rows, String markdown) {
        public static final Extra NONE = new Extra(List.of(), "");
    }

    /** Writes report.md, results.csv, results.json and the PNGs into {@code dir} (which exists). */
    public static void writeAll(SyntheticResults r, RunInfo info, Path dir, Extra extra) throws IOException {
        long t0 = System.nanoTime();
        List<String[]> plots = writePlots(r, dir);
        double plotSeconds = (System.nanoTime() - t0) / 1e9;
        List<MetricResult> rows = new ArrayList<>(r.table());
        rows.addAll(extra.rows());
        Files.writeString(dir.resolve("results.csv"), ResultsCsv.format(rows), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("results.json"), ResultsJson.format(r, info, extra.rows()), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("report.md"), markdown(r, info, plots, extra.markdown(), plotSeconds), StandardCharsets.UTF_8);
    }

    /** The policies drawn in the per-turn plots: FD-KVC first, then every non-ablation. */
    static List<String> plotted(SyntheticResults r) {
        List<String> out = new ArrayList<>();
        List<String> names = names(r);
        if (names.contains(SyntheticResults.FDKVC)) out.add(SyntheticResults.FDKVC);
        for (String n : names) if (!n.equals(SyntheticResults.FDKVC) && !n.startsWith("fdkvc-")) out.add(n);
        if (out.isEmpty()) out.addAll(names);
        return out;
    }

    /** Draws the plots (in parallel: each is its own chart and file); returns {file, caption} pairs in report order. */
    public static List<String[]> writePlots(SyntheticResults r, Path dir) {
        List<String[]> out = new ArrayList<>();
        List<Runnable> jobs = new ArrayList<>();
        int turns = r.config().generator().turns();
        double[] x = new double[turns];
        for (int t = 0; t < turns; t++) x[t] = t;
        List<String> names = names(r);
        double[] mean = new double[names.size()], lo = new double[names.size()], hi = new double[names.size()];
        String scope = r.config().scenarios().size() > 1 ? SyntheticResults.COMPOSITE : r.config().scenarios().get(0).id();
        for (int i = 0; i < names.size(); i++) {
            MetricResult m = r.find(scope, names.get(i), SyntheticResults.LATE_ALIGNMENT);
            mean[i] = m.mean();
            lo[i] = m.ciLow();
            hi[i] = m.ciHigh();
        }
        String summary = "summary.png";
        jobs.add(() -> Plots.bars(dir.resolve(summary), "Late-turn alignment (" + scope + "), 95% CI", "cos(read-out, topic)", names, mean, lo, hi));
        out.add(new String[]{summary, "Late-turn alignment per policy (" + scope + "); the error bar spans the 95% interval (its larger half-width on both sides)."});
        List<String> shown = plotted(r);
        for (Scenario s : r.config().scenarios()) {
            Map<String, double[]> al = new LinkedHashMap<>(), comp = new LinkedHashMap<>(), ad = new LinkedHashMap<>();
            for (String p : shown) {
                al.put(p, r.curve(SyntheticResults.Curve.ALIGNMENT, s, p));
                comp.put(p, r.curve(SyntheticResults.Curve.RETENTION, s, p));
                if (s.hasTopicChanges()) ad.put(p, r.adaptationCurve(s, p));
            }
            String fa = "alignment-" + s.id() + ".png";
            jobs.add(() -> Plots.lines(dir.resolve(fa), "Alignment by turn: " + s.id(), "turn", "cos(read-out, current topic)", x, al, null));
            out.add(new String[]{fa, s.id() + ": alignment of the read-out with the current topic, turn by turn (mean over dialogues)."});
            String fc = "composition-" + s.id() + ".png";
            jobs.add(() -> Plots.lines(dir.resolve(fc), "Cache composition: " + s.id(), "turn", "share of the cache on the current topic", x, comp,
                    new double[]{0, 1.02}));
            out.add(new String[]{fc, s.id() + ": share of the cache (after each turn's eviction) on the current topic."});
            if (s.hasTopicChanges()) {
                String fd = "adaptation-" + s.id() + ".png";
                jobs.add(() -> Plots.lines(dir.resolve(fd), "Adaptation after a topic change: " + s.id(), "turns since the change",
                        "attention of the retained past on the new topic", x, ad, new double[]{0, 1.02}));
                out.add(new String[]{fd, s.id() + ": attention mass of the retained past on the new topic, by turns since the change (threshold 0.5 defines adaptation_turns)."});
            }
        }
        jobs.parallelStream().forEach(Runnable::run);
        return out;
    }

    static List<String> names(SyntheticResults r) {
        List<String> out = new ArrayList<>();
        for (PolicySpec p : r.config().policies()) out.add(p.name());
        return out;
    }

    /** Scenario columns of the tables: the run's scenarios, then the composite when there are several. */
    static List<String> columns(SyntheticResults r) {
        List<String> cols = new ArrayList<>();
        for (Scenario s : r.config().scenarios()) cols.add(s.id());
        if (r.config().scenarios().size() > 1) cols.add(SyntheticResults.COMPOSITE);
        return cols;
    }

    // ---------------------------------------------------------------- stdout

    /** The comparison table printed to stdout: late-turn alignment by policy and scenario, and the paper's claims. */
    public static String comparisonTable(SyntheticResults r, RunInfo info) {
        StringBuilder sb = new StringBuilder();
        GeneratorConfig g = r.config().generator();
        sb.append(String.format(Locale.ROOT, "FD-KVC synthetic benchmark: %d scenario(s) x %d dialogues, %d policies, T=%d n=%d m=%d d=%d B=%d noise=%s sharpness=%s seed=%d; FD-KVC: %s; %.1f s (%.1f s CPU) on %d thread(s)%n%n",
                r.config().scenarios().size(), r.config().dialogues(), r.config().policies().size(), g.turns(), g.entriesPerTurn(),
                g.queries(), g.dim(), g.budget(), num(g.noise()), num(g.sharpness()), r.config().seed(), info.fdkvcSource(),
                info.seconds(), info.cpuSeconds(), info.threads()));
        List<String> cols = columns(r);
        sb.append("late_turn_alignment (mean over dialogues; 95% intervals in report.md)\n");
        int w0 = 20;
        for (String n : names(r)) w0 = Math.max(w0, n.length() + 1);
        sb.append(pad("policy", w0));
        for (String c : cols) sb.append(pad(c, Math.max(c.length(), 6) + 2));
        sb.append('\n');
        for (String p : names(r)) {
            sb.append(pad(p, w0));
            for (String c : cols) {
                MetricResult m = r.find(c, p, SyntheticResults.LATE_ALIGNMENT);
                sb.append(pad(m == null ? "n/a" : String.format(Locale.ROOT, "%.3f", m.mean()), Math.max(c.length(), 6) + 2));
            }
            sb.append('\n');
        }
        if (r.config().policyIndex(SyntheticResults.FDKVC) >= 0) {
            sb.append("\nThe paper's claims (FD-KVC vs H2O) and ours, 95% paired bootstrap intervals\n");
            List<String[]> table = new ArrayList<>();
            table.add(new String[]{"claim", "paper", "vs h2o-paper (paper's H2O)", "verdict", "vs h2o (reference)", "verdict"});
            for (PaperClaims.Claim c : PaperClaims.CLAIMS) {
                if (!hasScenario(r, c.scenario())) continue;
                MetricResult a = r.find(c.scenario(), SyntheticResults.FDKVC, c.metricPrefix() + "h2o-paper");
                MetricResult b = r.find(c.scenario(), SyntheticResults.FDKVC, c.metricPrefix() + "h2o");
                table.add(new String[]{c.label(), PaperClaims.format(c.paperValue(), c.kind()),
                        PaperClaims.formatInterval(a, c.kind()), a == null ? "not run" : PaperClaims.verdict(c.paperValue(), a, c.kind()),
                        PaperClaims.formatInterval(b, c.kind()), b == null ? "not run" : PaperClaims.verdict(c.paperValue(), b, c.kind())});
            }
            String[] div = diversityClaim(r);
            if (div != null) table.add(new String[]{"topic diversity, highest of all", "80.6%", div[0], div[1], "", ""});
            sb.append(textTable(table));
            List<String> abl = PaperClaims.ablations(names(r));
            String scope = r.config().scenarios().size() > 1 ? SyntheticResults.COMPOSITE : r.config().scenarios().get(0).id();
            if (!abl.isEmpty()) {
                sb.append("\nAblations: late-turn alignment of fdkvc over each ablation (" + scope + ")\n");
                List<String[]> t2 = new ArrayList<>();
                t2.add(new String[]{"ablation", "fdkvc improvement", "verdict"});
                for (String a : abl) {
                    MetricResult m = r.find(scope, SyntheticResults.FDKVC, SyntheticResults.IMPROVEMENT_VS + a);
                    t2.add(new String[]{a, PaperClaims.formatInterval(m, PaperClaims.Kind.IMPROVEMENT), PaperClaims.ablationVerdict(m)});
                }
                sb.append(textTable(t2));
            }
        }
        return sb.toString();
    }

    private static boolean hasScenario(SyntheticResults r, String scenario) {
        if (scenario.equals(SyntheticResults.COMPOSITE)) return r.config().scenarios().size() > 1;
        for (Scenario s : r.config().scenarios()) if (s.id().equals(scenario)) return true;
        return false;
    }

    /**
     * FD-KVC's topic diversity (composite over scenarios with changes, or the single scenario)
     * with its interval, and whether it is the highest among the bounded policies.
     */
    static String[] diversityClaim(SyntheticResults r) {
        String scope = r.config().scenarios().size() > 1 ? SyntheticResults.COMPOSITE : r.config().scenarios().get(0).id();
        MetricResult f = r.find(scope, SyntheticResults.FDKVC, SyntheticResults.DIVERSITY);
        if (f == null) return null;
        String best = null;
        double bestV = Double.NEGATIVE_INFINITY;
        for (PolicySpec p : r.config().policies()) {
            if (p.newPolicy().unbounded()) continue; // full keeps everything: diversity 1 by construction
            MetricResult m = r.find(scope, p.name(), SyntheticResults.DIVERSITY);
            if (m != null && m.mean() > bestV) {
                bestV = m.mean();
                best = p.name();
            }
        }
        String value = String.format(Locale.ROOT, "%.1f%% [%.1f%%, %.1f%%]", 100 * f.mean(), 100 * f.ciLow(), 100 * f.ciHigh());
        boolean inside = f.ciLow() <= PaperClaims.PAPER_DIVERSITY && PaperClaims.PAPER_DIVERSITY <= f.ciHigh();
        boolean highest = SyntheticResults.FDKVC.equals(best) || f.mean() >= bestV;
        String verdict = (inside ? "value reproduces" : "value differs") + "; "
                + (highest ? "highest of the bounded policies" : String.format(Locale.ROOT, "not the highest (%s: %.1f%%)", best, 100 * bestV));
        return new String[]{value, verdict};
    }

    // ---------------------------------------------------------------- report.md

    public static String markdown(SyntheticResults r, RunInfo info, List<String[]> plots, String extraMarkdown, double plotSeconds) {
        StringBuilder md = new StringBuilder();
        GeneratorConfig g = r.config().generator();
        md.append("# FD-KVC evaluation report\n\n");
        md.append("Command: `").append(info.command()).append("`  \n");
        md.append("Started: ").append(info.started()).append("  \n");
        md.append(String.format(Locale.ROOT, "Run time: %.1f s wall clock (simulation %.1f s, then the bootstrap), %.1f s of CPU, %d worker thread(s), "
                        + "%d processor(s) available; then %.1f s to draw the plots%n%n",
                info.seconds(), r.seconds(), info.cpuSeconds(), info.threads(), Runtime.getRuntime().availableProcessors(), plotSeconds));
        md.append("Definitions of the generator and of every metric: `docs/evaluation.md`.\n\n");
        md.append("| setting | value |\n|---|---|\n");
        md.append("| scenarios | ").append(String.join(", ", columns(r).stream().filter(c -> !c.equals(SyntheticResults.COMPOSITE)).toList())).append(" |\n");
        md.append("| dialogues per scenario | ").append(r.config().dialogues()).append(" |\n");
        md.append(String.format(Locale.ROOT, "| T turns, n entries/turn, m queries, d dims | %d, %d, %d, %d |%n", g.turns(), g.entriesPerTurn(), g.queries(), g.dim()));
        md.append("| budget B | ").append(g.budget()).append(" |\n");
        md.append("| noise, sharpness | ").append(num(g.noise())).append(", ").append(num(g.sharpness())).append(" |\n");
        md.append("| seed | ").append(r.config().seed()).append(" |\n");
        md.append("| FD-KVC parameters (").append(info.fdkvcSource()).append(") | ").append(paramText(info.fdkvcParams())).append(" |\n");
        md.append("| policies | ").append(String.join(", ", names(r))).append(" |\n\n");

        if (r.config().policyIndex(SyntheticResults.FDKVC) >= 0) {
            md.append("## The paper's claims and ours\n\n");
            md.append("The paper's H2O is `h2o-paper` (cumulative attention only: FD-KVC with wc=1, wrho=0, beta=0, tau=0); ");
            md.append("`h2o` is the reference H2O (Zhang et al. 2023). Intervals are 95% paired bootstrap intervals over dialogues. ");
            md.append("Improvements are `mean(fdkvc)/mean(h2o) - 1` of `late_turn_alignment`; speed-ups are `mean(h2o adaptation_turns)/mean(fdkvc adaptation_turns)`.\n\n");
            md.append("| claim | paper | ours vs h2o-paper | verdict | ours vs h2o | verdict |\n|---|---|---|---|---|---|\n");
            for (PaperClaims.Claim c : PaperClaims.CLAIMS) {
                if (!hasScenario(r, c.scenario())) continue;
                MetricResult a = r.find(c.scenario(), SyntheticResults.FDKVC, c.metricPrefix() + "h2o-paper");
                MetricResult b = r.find(c.scenario(), SyntheticResults.FDKVC, c.metricPrefix() + "h2o");
                md.append("| ").append(c.label()).append(" | ").append(PaperClaims.format(c.paperValue(), c.kind())).append(" | ")
                        .append(PaperClaims.formatInterval(a, c.kind())).append(" | ").append(a == null ? "not run" : PaperClaims.verdict(c.paperValue(), a, c.kind())).append(" | ")
                        .append(PaperClaims.formatInterval(b, c.kind())).append(" | ").append(b == null ? "not run" : PaperClaims.verdict(c.paperValue(), b, c.kind())).append(" |\n");
            }
            String[] div = diversityClaim(r);
            if (div != null) md.append("| topic diversity, highest of all methods | 80.6% | ").append(div[0]).append(" | ").append(div[1]).append(" | | |\n");
            List<String> abl = PaperClaims.ablations(names(r));
            if (!abl.isEmpty()) {
                String scope = r.config().scenarios().size() > 1 ? SyntheticResults.COMPOSITE : r.config().scenarios().get(0).id();
                md.append("\n**Ablations** (the paper: each component helps). Improvement of fdkvc's late-turn alignment over the ablation (")
                        .append(scope).append("):\n\n| ablation | fdkvc improvement | verdict |\n|---|---|---|\n");
                for (String a : abl) {
                    MetricResult m = r.find(scope, SyntheticResults.FDKVC, SyntheticResults.IMPROVEMENT_VS + a);
                    md.append("| ").append(a).append(" | ").append(PaperClaims.formatInterval(m, PaperClaims.Kind.IMPROVEMENT)).append(" | ")
                            .append(PaperClaims.ablationVerdict(m)).append(" |\n");
                }
            }
            md.append('\n');
        }

        metricSection(md, r, SyntheticResults.LATE_ALIGNMENT, "Late-turn alignment",
                "cos(read-out, current topic) over the last third of the turns; the read-out attends over C_{t-1} plus the turn's entries, with the policy's eq. 9 modulation.", 3, false);
        metricSection(md, r, SyntheticResults.LATE_ALIGNMENT_PAST, "Late-turn alignment of the retained past",
                "The same read-out over C_{t-1} alone: what the eviction decisions left, without the turn's own entries.", 3, false);
        metricSection(md, r, SyntheticResults.ADAPTATION, "Adaptation turns",
                "Turns after a topic change until half the retained past's attention is on the new topic (lower is faster); censored at the segment's length when never reached.", 2, false);
        metricSection(md, r, SyntheticResults.ADAPTATION_CENSORED, "Share of topic changes never adapted to (censored)",
                "Share of topic changes after which the threshold was not reached before the next change or the end.", 2, true);
        metricSection(md, r, SyntheticResults.DIVERSITY, "Topic diversity",
                "Distinct topics in the final cache over distinct topics seen (`full` keeps everything).", 1, true);
        metricSection(md, r, SyntheticResults.RETENTION, "Current-topic retention",
                "Share of the cache (after eviction) on the current topic, over the last third of the turns.", 1, true);

        if (r.config().policyIndex(SyntheticResults.FDKVC) >= 0 && names(r).size() > 1) {
            md.append("## FD-KVC against every policy\n\nPaired relative improvement of fdkvc's late-turn alignment, 95% interval.\n\n");
            List<String> cols = columns(r);
            md.append("| policy | ").append(String.join(" | ", cols)).append(" |\n|---").append("|---".repeat(cols.size())).append("|\n");
            for (String q : names(r)) {
                if (q.equals(SyntheticResults.FDKVC)) continue;
                md.append("| ").append(q);
                for (String c : cols) {
                    md.append(" | ").append(PaperClaims.formatInterval(r.find(c, SyntheticResults.FDKVC, SyntheticResults.IMPROVEMENT_VS + q), PaperClaims.Kind.IMPROVEMENT));
                }
                md.append(" |\n");
            }
            md.append('\n');
        }

        if (!plots.isEmpty()) {
            md.append("## Plots\n\n");
            for (String[] p : plots) md.append("![").append(p[1]).append("](").append(p[0]).append(")\n\n*").append(p[1]).append("*\n\n");
        }
        if (extraMarkdown != null && !extraMarkdown.isBlank()) md.append(extraMarkdown.strip()).append("\n");
        return md.toString();
    }

    private static void metricSection(StringBuilder md, SyntheticResults r, String metric, String title, String what, int decimals, boolean percent) {
        List<String> cols = new ArrayList<>();
        for (String c : columns(r)) {
            boolean any = false;
            for (String p : names(r)) any |= r.find(c, p, metric) != null;
            if (any) cols.add(c);
        }
        if (cols.isEmpty()) return;
        md.append("## ").append(title).append(" (`").append(metric).append("`)\n\n").append(what).append(" Mean [95% CI].\n\n");
        md.append("| policy | ").append(String.join(" | ", cols)).append(" |\n|---").append("|---".repeat(cols.size())).append("|\n");
        for (String p : names(r)) {
            md.append("| ").append(p);
            for (String c : cols) {
                MetricResult m = r.find(c, p, metric);
                md.append(" | ").append(m == null ? "" : cell(m, decimals, percent));
            }
            md.append(" |\n");
        }
        md.append('\n');
    }

    static String cell(MetricResult m, int decimals, boolean percent) {
        if (Double.isNaN(m.mean())) return "n/a";
        double k = percent ? 100 : 1;
        String f = "%." + (percent ? Math.max(0, decimals - 1) : decimals) + "f" + (percent ? "%%" : "");
        return String.format(Locale.ROOT, f + " [" + f + ", " + f + "]", k * m.mean(), k * m.ciLow(), k * m.ciHigh());
    }

    static String paramText(Map<String, Object> params) {
        if (params.isEmpty()) return "the spec's defaults";
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, Object> e : params.entrySet()) parts.add(e.getKey() + "=" + e.getValue());
        return String.join(", ", parts);
    }

    static String num(double v) {
        return v == Math.rint(v) ? String.format(Locale.ROOT, "%.1f", v) : String.valueOf(v);
    }

    private static String pad(String s, int w) {
        return s.length() >= w ? s + " " : s + " ".repeat(w - s.length());
    }

    /** A left-aligned plain-text table, columns as wide as their widest cell. */
    public static String textTable(List<String[]> rows) {
        int cols = rows.get(0).length;
        int[] w = new int[cols];
        for (String[] row : rows) for (int c = 0; c < cols; c++) w[c] = Math.max(w[c], row[c].length());
        StringBuilder sb = new StringBuilder();
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < cols; c++) line.append(pad(row[c], w[c] + 2));
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        return sb.toString();
    }
}
