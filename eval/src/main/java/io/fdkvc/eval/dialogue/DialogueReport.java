package io.fdkvc.eval.dialogue;

import io.fdkvc.core.InputException;
import io.fdkvc.eval.report.MetricResult;
import io.fdkvc.eval.stats.Means;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The plot and the markdown section of a dialogue evaluation. */
final class DialogueReport {
    private DialogueReport() {}

    /**
     * Writes one plot per sweep metric (cache_fill aside) into {@code outDir}:
     * {@code dialogue-DATASET-sweep.png} for the headline metric, {@code dialogue-DATASET-sweep-METRIC.png}
     * for the others; returns their file names, headline first.
     */
    static List<String> plotSweep(DialogueEvaluation.Evaluation ev, Path outDir) {
        List<String> names = new java.util.ArrayList<>();
        for (Metric m : Metric.sweepOf(ev.dataset())) {
            if (m == Metric.CACHE_FILL) continue;
            String name = "dialogue-" + ev.dataset().id() + "-sweep" + (m == ev.headline() ? "" : "-" + m.id()) + ".png";
            plot(ev, m, outDir, name);
            names.add(name);
        }
        return names;
    }

    private static void plot(DialogueEvaluation.Evaluation ev, Metric m, Path outDir, String name) {
        if (System.getProperty("java.awt.headless") == null) System.setProperty("java.awt.headless", "true");
        int nb = ev.budgets().size() - 1;
        double[] x = new double[nb];
        for (int b = 0; b < nb; b++) x[b] = 100 * ev.budgets().get(b + 1).share();
        XYChart chart = new XYChartBuilder().width(900).height(560)
                .title(ev.dataset().id() + ": " + m.id() + " against budget")
                .xAxisTitle("budget (% of each dialogue's tokens)").yAxisTitle(m.id()).build();
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.OutsideE);
        chart.getStyler().setMarkerSize(6);
        for (int c = 0; c < ev.contenders().size(); c++) {
            double[] y = new double[nb];
            for (int b = 0; b < nb; b++) y[b] = Means.skippingNaN(ev.values(c, b + 1, m));
            chart.addSeries(ev.contenders().get(c).label(), x, y).setMarker(SeriesMarkers.CIRCLE);
        }
        try {
            Files.createDirectories(outDir);
            try (OutputStream out = Files.newOutputStream(outDir.resolve(name))) {
                BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
            }
        } catch (IOException e) {
            throw new InputException("cannot write " + outDir.resolve(name) + ": " + e.getMessage(), e);
        }
    }

    static String markdown(DialogueEvaluation.Evaluation ev, DialogueOptions o, List<MetricResult> rows, List<String> plots, Embedder embedder) {
        StringBuilder md = new StringBuilder();
        List<EmbeddedDialogue> ds = ev.dialogues();
        long utterances = 0;
        for (EmbeddedDialogue d : ds) utterances += d.size();
        Budget headline = ev.budgets().get(0);
        md.append("## Real dialogues: ").append(ev.dataset().id()).append("\n\n");
        md.append(String.format(Locale.ROOT,
                "Data: `%s`, %d dialogues%s, %d utterances, median %s tokens per dialogue. Each utterance is one cache "
                        + "entry: key = value = its `%s` embedding (%d dimensions, unit norm), cost = its WordPiece token "
                        + "count, position = its turn. Each turn's query is its own utterance; attention logits = cosine / %s. "
                        + "Metrics are read when a turn arrives, before its update.\n\n",
                o.data().getFileName(), ds.size(), o.maxDialogues() > 0 ? " (seeded sample, seed " + o.seed() + ")" : "",
                utterances, trim(DialogueEvaluation.medianTokens(ds)), embedder.modelName(), embedder.dimension(), trim(ev.temperature())));
        md.append(String.format(Locale.ROOT,
                "Budget: %s for every dialogue%s. Mean over dialogues with its 95%% percentile-bootstrap interval "
                        + "(%d resamples, seed %d); n = dialogues where the metric is defined.\n\n",
                headline.label(), o.budgetTokens() == null
                        ? String.format(Locale.ROOT, " (%s of the median dialogue)", Budget.percent(DialogueOptions.DEFAULT_BUDGET_SHARE)) : "",
                io.fdkvc.eval.stats.Bootstrap.RESAMPLES, o.seed()));
        if (!o.params().isEmpty()) md.append("Parameters (`-p`): `").append(o.params()).append("`.\n\n");
        if (o.policies().contains(DialogueOptions.TUNED)) {
            md.append("`").append(DialogueOptions.TUNED).append("` is fdkvc with `").append(new java.util.TreeMap<>(TunedParams.of(ev.dataset())))
                    .append("`, chosen on the ").append(ev.dataset() == Dataset.TIAGE ? "tiage" : "sgd")
                    .append(" train split (docs/evaluation-dialogues.md). ");
        }
        md.append(o.packing()
                ? "Packing is on: after a policy evicts, the evicted utterances that still fit are readmitted, best-ranked "
                        + "first by the policy's own ranking (every policy alike; `--no-packing` turns it off). "
                : "Packing is off (`--no-packing`): each policy evicts its lowest entries until the budget holds, as in the paper. ");
        if (o.policies().stream().anyMatch(DialogueOptions.MEMORIES::contains)) {
            md.append("`lc4j-*` rows are LangChain4j 1.19.0's own `TokenWindowChatMemory` (max tokens = the budget, counted with "
                    + "the same token counts) and `MessageWindowChatMemory` (max messages = the budget over the mean tokens per "
                    + "utterance, rounded down), fed the dialogue as user and AI messages. ");
        }
        if (o.policies().contains(FdkvcLangChain4jMemory.LABEL)) {
            md.append("`" + FdkvcLangChain4jMemory.LABEL + "` is fdkvc-langchain4j's `FdkvcChatMemory` with its defaults (fdkvc-dialogue, "
                    + "packing on) at the same budget, fed the same messages with the same token counts and embeddings: it "
                    + "differs from the policy's row by the memory's conventions (the current exchange is always shown, no "
                    + "orphaned reply first). ");
        }
        if (o.policies().contains(SpringAiMemory.MESSAGE_WINDOW) || o.policies().contains(SpringAiMemory.FDKVC)) {
            md.append("`" + SpringAiMemory.MESSAGE_WINDOW + "` is Spring AI 2.0.1's own `MessageWindowChatMemory` (max messages as for "
                    + "LangChain4j's; it starts its window at a user message), and `" + SpringAiMemory.FDKVC + "` fdkvc-spring-ai's "
                    + "`FdkvcSpringChatMemory` with its defaults, fed like `" + FdkvcLangChain4jMemory.LABEL + "`: the two fdkvc "
                    + "memories share their selection, so their rows are equal. ");
        }
        md.append("`cache_fill` (cached tokens over what the cache may hold) is a guard, not a goal: a cache that "
                + "forgets everything scores well on share metrics.\n\n");

        md.append("| policy |");
        for (Metric m : ev.metrics()) md.append(' ').append(m.id()).append(" |");
        md.append("\n|---|");
        for (int k = 0; k < ev.metrics().size(); k++) md.append("---|");
        md.append('\n');
        for (DialogueEvaluation.Contender c : ev.contenders()) {
            md.append("| ").append(c.label()).append(" |");
            for (Metric m : ev.metrics()) md.append(' ').append(cell(find(rows, c.label(), m.id()))).append(" |");
            md.append('\n');
        }
        md.append('\n');

        boolean any = false;
        for (MetricResult r : rows) {
            if (!r.metric().contains("_relative_improvement")) continue;
            if (!any) md.append("Paired relative improvement (mean ratio - 1, same dialogues resampled for both; `@x%`: sweep budget):\n\n");
            any = true;
            md.append(String.format(Locale.ROOT, "- %s, %s: %+.1f%% [%+.1f%%, %+.1f%%], n = %d\n", r.policy(), r.metric(),
                    100 * r.mean(), 100 * r.ciLow(), 100 * r.ciHigh(), r.n()));
        }
        if (any) md.append('\n');

        if (ev.budgets().size() > 1) {
            int plot = 0;
            for (Metric m : Metric.sweepOf(ev.dataset())) {
                md.append("### Budget sweep: ").append(m.id()).append(" at a share of each dialogue's tokens\n\n| policy |");
                for (int b = 1; b < ev.budgets().size(); b++) md.append(' ').append(ev.budgets().get(b).label()).append(" |");
                md.append("\n|---|");
                for (int b = 1; b < ev.budgets().size(); b++) md.append("---|");
                md.append('\n');
                for (DialogueEvaluation.Contender c : ev.contenders()) {
                    md.append("| ").append(c.label()).append(" |");
                    for (int b = 1; b < ev.budgets().size(); b++) md.append(' ').append(cell(find(rows, c.label(), ev.name(m, b)))).append(" |");
                    md.append('\n');
                }
                md.append('\n');
                if (m != Metric.CACHE_FILL && plots != null && plot < plots.size()) {
                    md.append("![").append(m.id()).append(" against budget](").append(plots.get(plot++)).append(")\n\n");
                }
            }
        }
        return md.toString();
    }

    private static MetricResult find(List<MetricResult> rows, String policy, String metric) {
        for (MetricResult r : rows) if (r.policy().equals(policy) && r.metric().equals(metric)) return r;
        throw new IllegalStateException("no row " + policy + " / " + metric);
    }

    private static String cell(MetricResult r) {
        if (r.n() == 0) return "n/a (n = 0)";
        return String.format(Locale.ROOT, "%.3f [%.3f, %.3f] n=%d", r.mean(), r.ciLow(), r.ciHigh(), r.n());
    }

    private static String trim(double x) {
        return x == Math.rint(x) ? String.valueOf((long) x) : String.valueOf(x);
    }
}
