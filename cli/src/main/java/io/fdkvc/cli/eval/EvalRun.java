package io.fdkvc.cli.eval;

import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.eval.report.ReportDirectory;
import io.fdkvc.eval.report.RunInfo;
import io.fdkvc.eval.report.SyntheticReport;
import io.fdkvc.eval.synthetic.EvalConfig;
import io.fdkvc.eval.synthetic.EvalPolicies;
import io.fdkvc.eval.synthetic.GeneratorConfig;
import io.fdkvc.eval.synthetic.Progress;
import io.fdkvc.eval.synthetic.Scenario;
import io.fdkvc.eval.synthetic.SyntheticEvaluation;
import io.fdkvc.eval.synthetic.SyntheticResults;
import io.fdkvc.eval.synthetic.TunedDefaults;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The body of {@code fdkvc eval}: validate every option before any work, run, compute the
 * statistics, write the report atomically, then print the comparison table.
 */
public final class EvalRun {
    private EvalRun() {}

    /** The parsed command line. */
    public record Options(GeneratorOptions generator, int dialogues, long seed, List<String> policies, Map<String, String> params,
                          String fdkvcDefaults, Path out, int threads, String dataset, Path data, Integer budgetTokens,
                          boolean quiet, String command, List<String> syntheticOnly, boolean dialoguesGiven, boolean noPacking) {
        public Options {
            syntheticOnly = List.copyOf(syntheticOnly);
        }
    }

    /** Options of the synthetic benchmark alone, refused with --dataset. */
    public static final List<String> SYNTHETIC_ONLY = List.of("--scenario", "--turns", "--entries-per-turn", "--queries",
            "--dim", "--budget", "--noise", "--sharpness", "--fdkvc-defaults");

    public static int run(Options o, PrintWriter out, PrintWriter err) {
        if (o.dataset() != null) return DatasetEvaluation.run(o, out, err);
        if (o.data() != null) throw new InputException("--data: only used with --dataset");
        if (o.budgetTokens() != null) throw new InputException("--budget-tokens: only used with --dataset");
        if (o.noPacking()) throw new InputException("--no-packing: only used with --dataset (the synthetic entries cost 1 each, where packing never readmits)");

        EvalPolicies.Defaults defaults = switch (o.fdkvcDefaults()) {
            case "tuned" -> EvalPolicies.Defaults.TUNED;
            case "spec" -> EvalPolicies.Defaults.SPEC;
            default -> throw new InputException("--fdkvc-defaults: must be 'tuned' or 'spec', got '" + o.fdkvcDefaults() + "'");
        };
        GeneratorConfig g = o.generator().config();
        List<Scenario> scenarios = o.generator().scenarioList();
        List<String> names = o.policies().isEmpty() ? PolicyRegistry.names() : o.policies().stream().map(String::trim).toList();
        List<PolicySpec> specs = EvalPolicies.build(names, g.budget(), o.params(), defaults);
        EvalConfig cfg = new EvalConfig(g, scenarios, o.dialogues(), specs, o.seed(), o.threads());
        Path dir = o.out() != null ? o.out() : defaultOut();
        ReportDirectory.check(dir, "--out");

        String started = ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        long t0 = System.nanoTime();
        double cpu0 = RunInfo.processCpuSeconds();
        Progress progress = o.quiet() ? Progress.NONE : new ProgressLines(err, "eval", "dialogues");
        SyntheticResults results = SyntheticEvaluation.run(cfg, progress);
        results.table(); // the bootstrap: part of the measured run time
        double seconds = (System.nanoTime() - t0) / 1e9;

        RunInfo info = new RunInfo(o.command(), started, fdkvcParams(specs, defaults, o.params()),
                (defaults == EvalPolicies.Defaults.TUNED ? "tuned defaults" : "spec defaults") + (o.params().isEmpty() ? "" : " + -p"),
                seconds, o.threads(), RunInfo.processCpuSeconds() - cpu0);
        ReportDirectory.write(dir, "--out", tmp -> SyntheticReport.writeAll(results, info, tmp, SyntheticReport.Extra.NONE));
        out.print(SyntheticReport.comparisonTable(results, info));
        out.println();
        out.println("report: " + dir.resolve("report.md"));
        out.flush();
        if (!o.quiet()) {
            err.println(String.format(Locale.ROOT, "eval: done in %.1f s (simulation %.1f s, statistics %.1f s, report and plots %.1f s), %.1f s of CPU",
                    (System.nanoTime() - t0) / 1e9, results.seconds(), seconds - results.seconds(), (System.nanoTime() - t0) / 1e9 - seconds,
                    RunInfo.processCpuSeconds() - cpu0));
            err.flush();
        }
        return 0;
    }

    /** The parameters of the run's fdkvc (or of the family's base when fdkvc is not run). */
    private static Map<String, Object> fdkvcParams(List<PolicySpec> specs, EvalPolicies.Defaults d, Map<String, String> params) {
        for (PolicySpec s : specs) if (s.name().equals(SyntheticResults.FDKVC)) return s.parameterValues();
        Map<String, Object> m = new LinkedHashMap<>(d == EvalPolicies.Defaults.TUNED ? TunedDefaults.FDKVC : Map.of());
        m.putAll(params);
        return m;
    }

    /** reports/&lt;timestamp&gt;, with a suffix when that directory is already taken. */
    public static Path defaultOut() {
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        Path p = Path.of("reports", stamp);
        for (int k = 2; Files.exists(p); k++) p = Path.of("reports", stamp + "-" + k);
        return p;
    }
}
