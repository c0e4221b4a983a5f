package io.fdkvc.cli.eval;

import io.fdkvc.core.InputException;
import io.fdkvc.eval.dialogue.Dataset;
import io.fdkvc.eval.dialogue.DialogueEvaluation;
import io.fdkvc.eval.dialogue.DialogueOptions;
import io.fdkvc.eval.dialogue.DialogueResults;
import io.fdkvc.eval.report.MetricResult;
import io.fdkvc.eval.report.ReportDirectory;
import io.fdkvc.eval.report.ResultsCsv;
import io.fdkvc.eval.report.ResultsJson;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code fdkvc eval --dataset ...}: delegates to the real-dialogue evaluation
 * ({@link DialogueEvaluation}, docs/evaluation-dialogues.md) and writes its rows and markdown as
 * the report, atomically like the synthetic one; its plots are written into the same directory.
 */
final class DatasetEvaluation {
    private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    private DatasetEvaluation() {}

    static int run(EvalRun.Options o, PrintWriter out, PrintWriter err) {
        if (!o.syntheticOnly().isEmpty()) {
            throw new InputException(o.syntheticOnly().getFirst() + ": only for the synthetic benchmark, not with --dataset");
        }
        Dataset dataset = Dataset.parse(o.dataset());
        if (o.data() == null) throw new InputException("--data: --dataset " + dataset.id() + " needs the corpus file (e.g. ../shared/data/dialogues/)");
        if (o.dialoguesGiven() && o.dialogues() < 1) throw new InputException("--dialogues: must be >= 1, got " + o.dialogues());
        DialogueOptions options = new DialogueOptions(dataset, o.data(), o.policies().isEmpty() ? null : o.policies(), o.params(),
                o.budgetTokens(), null, DialogueOptions.DEFAULT_TEMPERATURE, o.seed(), o.dialoguesGiven() ? o.dialogues() : 0, null, o.threads(), !o.noPacking());
        Path dir = o.out() != null ? o.out() : EvalRun.defaultOut();
        ReportDirectory.check(dir, "--out");
        String started = ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        long t0 = System.nanoTime();
        ProgressLines lines = o.quiet() ? null : new ProgressLines(err, "eval " + dataset.id(), "permille");
        DialogueResults[] result = new DialogueResults[1];
        ReportDirectory.write(dir, "--out", tmp -> {
            result[0] = DialogueEvaluation.run(options, tmp, f -> {
                if (lines != null) lines.update((int) Math.round(1000 * f), 1000);
            });
            double seconds = (System.nanoTime() - t0) / 1e9;
            Files.writeString(tmp.resolve("results.csv"), ResultsCsv.format(result[0].results()), StandardCharsets.UTF_8);
            Files.writeString(tmp.resolve("results.json"), json(o, started, seconds, result[0]), StandardCharsets.UTF_8);
            Files.writeString(tmp.resolve("report.md"), "# FD-KVC evaluation report: " + dataset.id() + "\n\nCommand: `" + o.command()
                    + "`  \nStarted: " + started + String.format(Locale.ROOT, "  %nRun time: %.1f s%n%n", seconds)
                    + result[0].markdown().strip() + "\n", StandardCharsets.UTF_8);
        });
        out.print(result[0].markdown().strip());
        out.println();
        out.println();
        out.println("report: " + dir.resolve("report.md"));
        out.flush();
        return 0;
    }

    private static String json(EvalRun.Options o, String started, double seconds, DialogueResults r) {
        ObjectNode root = JSON.createObjectNode();
        root.put("command", o.command());
        root.put("started", started);
        root.put("seconds", seconds);
        root.put("dataset", o.dataset());
        ArrayNode rows = root.putArray("results");
        for (MetricResult m : r.results()) ResultsJson.addRow(rows, m);
        return JSON.writeValueAsString(root) + "\n";
    }

    static final List<String> DATASETS = List.of("sgd", "tiage", "multiwoz");
}
