package io.fdkvc.cli;

import io.fdkvc.cli.eval.EvalRun;
import io.fdkvc.cli.eval.GeneratorOptions;
import io.fdkvc.cli.eval.WorkerOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code fdkvc eval}: the paper's benchmark (docs/evaluation.md). With no arguments it runs the five
 * synthetic scenarios, 120 dialogues each, every policy, prints the comparison table and writes
 * the report to {@code reports/<timestamp>}. The work is in {@link EvalRun}.
 */
@Command(name = "eval", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Reproduce the paper's evaluation: every policy on the same seeded multi-turn dialogues.",
                "Prints the comparison table; writes report.md, results.csv, results.json and PNG plots to --out.",
                "Bad input: one line on stderr, no report, exit 2. Definitions: docs/evaluation.md."})
public final class EvalCommand implements Callable<Integer> {

    @Mixin
    GeneratorOptions generator = new GeneratorOptions();

    @Option(names = "--dialogues", paramLabel = "N",
            description = "dialogues per scenario (default: 120); with --dataset, a seeded sample of N dialogues of the file (default: all)")
    int dialogues = io.fdkvc.eval.synthetic.EvalConfig.DEFAULT_DIALOGUES;

    @Option(names = "--seed", paramLabel = "S", description = "run seed: dialogues and bootstrap (default: 1)")
    long seed = io.fdkvc.eval.synthetic.EvalConfig.DEFAULT_SEED;

    @Option(names = "--policy", paramLabel = "NAME", split = ",",
            description = "policies to run (repeatable or comma-separated; default: every registry policy, see 'fdkvc policies')")
    List<String> policies = new ArrayList<>();

    @Option(names = {"-p", "--param"}, paramLabel = "NAME=VALUE",
            description = "a policy parameter, e.g. -p gamma=0.9: it goes to every selected policy that has it and does not pin it "
                    + "(an ablation keeps its pinned value); one that no selected policy takes is refused")
    Map<String, String> params = new LinkedHashMap<>();

    @Option(names = "--fdkvc-defaults", paramLabel = "tuned|spec",
            description = "FD-KVC parameters before -p: 'tuned' (chosen by 'fdkvc tune', docs/evaluation.md) or 'spec' (the spec's table); default: tuned")
    String fdkvcDefaults = "tuned";

    @Option(names = "--out", paramLabel = "DIR", description = "report directory, new or empty (default: reports/<timestamp>)")
    Path out;

    @Mixin
    WorkerOptions workers = new WorkerOptions();

    @Option(names = "--dataset", paramLabel = "sgd|tiage|multiwoz", description = "evaluate on real dialogues instead (needs --data)")
    String dataset;

    @Option(names = "--data", paramLabel = "FILE", description = "the dataset file for --dataset (a .jsonl or .jsonl.gz)")
    Path data;

    @Option(names = "--budget-tokens", paramLabel = "N", description = "token budget for --dataset (default: 30%% of the median dialogue's tokens)")
    Integer budgetTokens;

    @Option(names = "--no-packing", description = "with --dataset: policies evict without core's packing (readmitting evicted utterances that still fit); the paper's setting")
    boolean noPacking;

    @Spec
    CommandSpec spec;

    private List<String> syntheticOnlyGiven() {
        List<String> given = new ArrayList<>();
        for (String name : EvalRun.SYNTHETIC_ONLY) if (spec.commandLine().getParseResult().hasMatchedOption(name)) given.add(name);
        return given;
    }

    @Override
    public Integer call() {
        EvalRun.Options o = new EvalRun.Options(generator, dialogues, seed, policies, params, fdkvcDefaults, out,
                workers.threads(), dataset, data, budgetTokens, workers.quiet,
                "fdkvc " + String.join(" ", spec.commandLine().getParseResult().originalArgs()), syntheticOnlyGiven(),
                spec.commandLine().getParseResult().hasMatchedOption("--dialogues"), noPacking);
        return EvalRun.run(o, spec.commandLine().getOut(), spec.commandLine().getErr());
    }
}
