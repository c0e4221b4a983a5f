package io.fdkvc.cli.eval;

import io.fdkvc.eval.report.ReportDirectory;
import io.fdkvc.eval.tune.TuneReport;
import io.fdkvc.eval.tune.Tuner;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code fdkvc tune}: the sweep that chose the FD-KVC defaults {@code eval} uses, on dialogues
 * distinct from the evaluation's (docs/evaluation.md, "Tuning").
 */
@Command(name = "tune", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Choose FD-KVC's parameters on tuning dialogues (never the evaluation's) and report the sensitivity",
                "to gamma, alpha0, mu, tau, beta and wc: coordinate search on the composite late-turn alignment.",
                "With --dataset: grid search of fdkvc-dialogue (or, with --policy fdkvc, of FD-KVC) on a real",
                "dialogue file; use the train splits (docs/evaluation-dialogues.md)."})
public final class TuneCommand implements Callable<Integer> {
    @Mixin
    GeneratorOptions generator = new GeneratorOptions();

    @Option(names = "--dialogues", paramLabel = "N", description = "tuning dialogues per scenario (default: 100); with --dataset, a seeded sample of N dialogues of the file (default: all)")
    Integer dialogues;

    @Option(names = "--dataset", paramLabel = "sgd|tiage|multiwoz", description = "tune on real dialogues instead (needs --data)")
    String dataset;

    @Option(names = "--data", paramLabel = "FILE", description = "the dataset file for --dataset (a train split)")
    Path data;

    @Option(names = "--policy", paramLabel = "fdkvc-dialogue|fdkvc", description = "with --dataset: the grid to search (default: fdkvc-dialogue)")
    String policy = "fdkvc-dialogue";

    @Option(names = "--grid", paramLabel = "NAME=V1,V2,...", description = "with --dataset: replace one axis of fdkvc-dialogue's grid (repeatable)")
    java.util.List<String> grid = new java.util.ArrayList<>();

    @Option(names = "--budget-tokens", paramLabel = "N", description = "with --dataset: headline budget (default: 30%% of the median dialogue's tokens)")
    Integer budgetTokens;

    @Option(names = "--no-packing", description = "with --dataset: policies evict without core's packing (the paper's setting)")
    boolean noPacking;

    @Option(names = "--top", paramLabel = "N", description = "with --dataset: grid points shown (default: 25)")
    int top = 25;

    @Option(names = "--seed", paramLabel = "S", description = "tuning seed, not the evaluation's (default: 1001; with --dataset: 1, the seed of the train sample)")
    Long seed;

    @Option(names = "--passes", paramLabel = "N", description = "coordinate-search passes at most (default: 3)")
    int passes = 3;

    @Mixin
    WorkerOptions workers = new WorkerOptions();

    @Option(names = "--out", paramLabel = "DIR", description = "also write tune.md, sensitivity.csv and plots there (new or empty)")
    Path out;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter stdout = spec.commandLine().getOut(), err = spec.commandLine().getErr();
        int th = workers.threads();
        boolean quiet = workers.quiet;
        if (dialogues != null && dialogues < 1) throw new io.fdkvc.core.InputException("--dialogues: must be >= 1, got " + dialogues);
        if (dataset != null) {
            if (data == null) throw new io.fdkvc.core.InputException("--data: --dataset needs the corpus file (a train split)");
            return sweep(stdout, dir -> {
                String md = io.fdkvc.eval.dialogue.DialogueTuning.run(dataset, data, policy, grid, dialogues == null ? 0 : dialogues,
                        seed == null ? 1 : seed, th, budgetTokens, !noPacking, top, quiet ? null : f -> { });
                if (dir != null) java.nio.file.Files.writeString(dir.resolve("tune.md"), md);
                return md;
            });
        }
        if (data != null || budgetTokens != null || noPacking || !grid.isEmpty()) throw new io.fdkvc.core.InputException("--data, --grid, --budget-tokens, --no-packing: only with --dataset");
        Tuner.Config cfg = new Tuner.Config(generator.config(), generator.scenarioList(), dialogues == null ? 100 : dialogues, seed == null ? 1001 : seed, th, passes);
        String command = "fdkvc " + String.join(" ", spec.commandLine().getParseResult().originalArgs());
        return sweep(stdout, dir -> {
            Tuner.Result r = Tuner.tune(cfg, quiet ? io.fdkvc.eval.synthetic.Progress.NONE : new ProgressLines(err, "tune", "steps"));
            if (dir != null) TuneReport.writeAll(cfg, r, command, dir);
            return TuneReport.markdown(cfg, r, command);
        });
    }

    /** A sweep that returns its markdown and writes its report files into {@code dir} (null without --out). */
    private interface Sweep {
        String run(java.nio.file.Path dir) throws java.io.IOException;
    }

    /**
     * Runs {@code sweep} with --out created (hidden) before it, so that an unwritable place fails
     * first and SIGTERM leaves nothing; the report appears only once complete. Prints the markdown.
     */
    private int sweep(PrintWriter stdout, Sweep sweep) {
        try (ReportDirectory.Pending report = out == null ? null : ReportDirectory.begin(out, "--out")) {
            String md;
            try {
                md = sweep.run(report == null ? null : report.dir());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("cannot write the report to " + out + ": " + e.getMessage(), e);
            }
            if (report != null) report.commit();
            stdout.print(md);
        }
        stdout.flush();
        return 0;
    }
}
