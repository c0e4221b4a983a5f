package io.fdkvc.cli;

import io.fdkvc.cli.engine.ModelFiles;
import io.fdkvc.cli.eval.EvalRun;
import io.fdkvc.cli.eval.ProgressLines;
import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.tensor.Parallel;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import io.fdkvc.eval.fidelity.ConversationFile;
import io.fdkvc.eval.fidelity.ConversationGenerator;
import io.fdkvc.eval.fidelity.ConversationScript;
import io.fdkvc.eval.fidelity.FidelityPolicies;
import io.fdkvc.eval.fidelity.FidelityReport;
import io.fdkvc.eval.fidelity.FidelityResults;
import io.fdkvc.eval.fidelity.FidelityRun;
import io.fdkvc.eval.fidelity.Student;
import io.fdkvc.eval.fidelity.TokenizedConversation;
import io.fdkvc.eval.report.ReportDirectory;
import io.fdkvc.eval.synthetic.Progress;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * What a bounded cache costs the model: teacher-forced multi-turn evaluation of every policy
 * against the full cache on the engine's own KV cache (docs/fidelity.md), or, with
 * {@code --write-conversations}, the conversation generator.
 */
@Command(name = "fidelity", mixinStandardHelpOptions = true,
        description = {"Measure how far each policy's predictions drift from the full cache's over multi-turn conversations",
                "(KL, top-1 agreement, NLL, probe NLL increase); writes report.md, results.csv, results.json and plots to --out.",
                "With --write-conversations OUT.jsonl: generate conversations from the model's own samples instead."})
public final class FidelityCommand implements Callable<Integer> {
    static final List<Integer> DEFAULT_BUDGETS = List.of(32, 64, 128);

    @Option(names = "--model", paramLabel = "FILE", required = true, description = "model file: .gguf or llama2.c .bin")
    Path model;

    @Option(names = "--tokenizer", paramLabel = "FILE", description = "llama2.c tokenizer file (for a .bin model)")
    Path tokenizer;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Input input;

    static final class Input {
        @Option(names = "--conversations", paramLabel = "FILE.jsonl", required = true,
                description = "conversations to measure (JSON Lines, docs/fidelity.md)")
        Path conversations;

        @Option(names = "--write-conversations", paramLabel = "OUT.jsonl", required = true,
                description = "generate conversations from the model's samples and write them here")
        Path write;
    }

    @Option(names = "--policy", paramLabel = "NAME", split = ",",
            description = "policies to measure (repeatable or comma-separated; default: every bounded policy and fdkvc-tuned)")
    List<String> policies;

    @Option(names = "--budget", paramLabel = "N", split = ",", description = "budgets (repeatable; default: 32, 64, 128)")
    List<Integer> budgets;

    @Option(names = "--positions", paramLabel = "auto|original|cache|both",
            description = "RoPE positions of the bounded caches (both: cache and original); default: " + PositionMode.DEFAULT_LABEL
                    + ", what chat and serve use")
    String positions;

    @Option(names = {"-p", "--param"}, paramLabel = "NAME=VALUE",
            description = "a parameter for every selected policy that takes it (repeatable)")
    Map<String, String> params = new LinkedHashMap<>();

    @Option(names = "--out", paramLabel = "DIR", description = "report directory, new or empty (default: reports/<timestamp>)")
    Path out;

    @Option(names = "--threads", paramLabel = "N", description = "worker threads (default: the available processors)")
    Integer threads;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "64",
            description = "prefill chunk: tokens fed (and rows of logits held) at once; default: ${DEFAULT-VALUE}")
    int batch;

    @Option(names = "--max-turn-tokens", paramLabel = "N", defaultValue = "512",
            description = "tokens a turn may add before the policy runs, as in chat; default: ${DEFAULT-VALUE}")
    int maxTurnTokens;

    @Mixin
    TemplateOption template;

    @Option(names = "--count", paramLabel = "N", defaultValue = "20", description = "generator: conversations; default: ${DEFAULT-VALUE}")
    int count;

    @Option(names = "--seed", paramLabel = "S", defaultValue = "1", description = "generator: seed; default: ${DEFAULT-VALUE}")
    long seed;

    @Option(names = "--stories", paramLabel = "N", defaultValue = "3", description = "generator: stories interleaved; default: ${DEFAULT-VALUE}")
    int stories;

    @Option(names = "--turns", paramLabel = "N", defaultValue = "12", description = "generator: turns; default: ${DEFAULT-VALUE}")
    int turns;

    @Option(names = "--turn-tokens", paramLabel = "N|MIN..MAX", defaultValue = "40",
            description = "generator: tokens per turn, fixed or drawn uniformly; default: ${DEFAULT-VALUE}")
    String turnTokens;

    @Option(names = "--named", description = "generator: open each story with a named character and write name probes")
    boolean named;

    @Option(names = "--quiet", description = "no progress lines on stderr")
    boolean quiet;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        int t = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
        Limits.check("--threads", t, 1, Limits.MAX_THREADS);
        Limits.check("--batch", batch, 1, Limits.MAX_BATCH);
        Limits.check("--max-turn-tokens", maxTurnTokens, 1, Limits.MAX_TURN_TOKENS);
        PrintWriter stdout = spec.commandLine().getOut(), err = spec.commandLine().getErr();
        if (input.write != null) return write(t, stdout);
        List<PositionMode> modes = modes();
        List<String> names = policies == null ? FidelityPolicies.defaults() : policies.stream().map(String::trim).toList();
        List<Student> students = PolicyOptions.withOptionNames(params, () ->
                FidelityPolicies.build(names, budgets == null ? DEFAULT_BUDGETS : budgets, modes, params));
        template.check();
        List<ConversationScript> scripts = ConversationFile.read(input.conversations);
        Path dir = out != null ? out : EvalRun.defaultOut();
        try (ReportDirectory.Pending report = ReportDirectory.begin(dir, "--out");
             LoadedModel m = ModelFiles.load(model, tokenizer)) {
            Tokenizer tok = Tokenizers.from(m.vocabulary());
            ChatFormat format = needsFormat(scripts) ? new ChatFormat(template.select(m.vocabulary(), err, "fidelity"), tok) : null;
            List<TokenizedConversation> convs = new ArrayList<>();
            int longest = 0, context = m.config().contextLength();
            for (ConversationScript c : scripts) {
                TokenizedConversation tc = TokenizedConversation.of(c, tok, format, m.config().vocabSize(),
                        input.conversations + ": conversation '" + c.id() + "'");
                convs.add(tc);
                longest = Math.max(longest, tc.longestTurn());
                if (tc.tokens().length > context) {
                    err.println("fdkvc fidelity: warning: conversation '" + c.id() + "' has " + tc.tokens().length + " tokens, past the model's "
                            + "trained context of " + context + ": the full cache there is not the model at its best");
                }
            }
            int headroom = Math.min(maxTurnTokens, longest);
            checkMemory(m, students, headroom, t);
            int workers = Math.min(t, convs.size());
            Parallel.setThreads(Math.max(1, t / workers));
            FidelityRun.Setup setup = new FidelityRun.Setup(m.config(), m.weights(), batch, workers, Math.max(1, t / workers), headroom);
            Progress progress = quiet ? Progress.NONE : new ProgressLines(err, "fidelity", "conversations");
            FidelityResults r = FidelityRun.run(setup, convs, students, progress);
            String command = "fdkvc " + String.join(" ", spec.commandLine().getParseResult().originalArgs());
            FidelityReport.write(r, new FidelityReport.Info(command, model.getFileName().toString(),
                    input.conversations.getFileName().toString(), r.seconds(), t), report.dir());
            report.commit();
            stdout.print(summary(r));
            stdout.println("report: " + dir.resolve("report.md"));
            stdout.flush();
            if (!quiet) {
                err.println(String.format(Locale.ROOT, "fidelity: %d conversations x %d caches in %.1f s", convs.size(), students.size(), r.seconds()));
                err.flush();
            }
        }
        return 0;
    }

    private List<PositionMode> modes() {
        if (positions == null) return List.of(PositionMode.DEFAULT);
        if (positions.trim().equalsIgnoreCase("both")) return List.of(PositionMode.CACHE, PositionMode.ORIGINAL);
        try {
            return List.of(PositionMode.parse(positions));
        } catch (io.fdkvc.core.param.ParameterException e) {
            throw new InputException("--positions: must be auto, original, cache or both, got '" + io.fdkvc.core.Untrusted.excerpt(positions) + "'");
        }
    }

    private static boolean needsFormat(List<ConversationScript> scripts) {
        for (ConversationScript c : scripts) if (c.turns().getFirst() instanceof ConversationScript.Message) return true;
        return false;
    }

    /** Keys, values and rotated keys of every cache one worker holds at once (teacher and students), float32. */
    private static void checkMemory(LoadedModel m, List<Student> students, int headroom, int threads) {
        var c = m.config();
        double perEntry = 3.0 * c.headDim() * 4 * c.layers() * c.kvHeads();
        double entries = 0;
        for (Student s : students) entries += s.budget() + headroom;
        entries += 1 << 10; // the teacher, at a typical conversation length
        Limits.checkMemory("the caches of " + students.size() + " policies x budgets x positions", perEntry * entries * Math.max(1, threads));
    }

    private int write(int threads, PrintWriter stdout) throws IOException {
        int[] range = turnTokens();
        ConversationGenerator.Options o = new ConversationGenerator.Options(count, seed, stories, turns, range[0], range[1], named);
        Path target = input.write;
        if (Files.isDirectory(target)) throw new InputException("--write-conversations: " + target + " is a directory");
        try (LoadedModel m = ModelFiles.load(model, tokenizer);
             Llama llama = new Llama(m.config(), m.weights(), batch, threads)) {
            List<ConversationScript> cs = ConversationGenerator.generate(llama, Tokenizers.from(m.vocabulary()), o);
            Path abs = target.toAbsolutePath();
            Path tmp = Files.createTempFile(abs.getParent(), "." + abs.getFileName(), ".tmp");
            try {
                ConversationFile.write(tmp, cs);
                Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException | RuntimeException e) {
                Files.deleteIfExists(tmp);
                throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
            }
            int probes = 0;
            for (ConversationScript c : cs) probes += c.probes().size();
            stdout.println("wrote " + cs.size() + " conversations (" + probes + " probes) to " + target);
            stdout.flush();
        }
        return 0;
    }

    private int[] turnTokens() {
        String s = turnTokens.trim();
        try {
            int dots = s.indexOf("..");
            if (dots < 0) {
                int n = Integer.parseInt(s);
                return new int[]{n, n};
            }
            return new int[]{Integer.parseInt(s.substring(0, dots).trim()), Integer.parseInt(s.substring(dots + 2).trim())};
        } catch (NumberFormatException e) {
            throw new InputException("--turn-tokens: must be N or MIN..MAX, got '" + io.fdkvc.core.Untrusted.excerpt(s) + "'");
        }
    }

    /** One line per student: kl, top1, probe. */
    private static String summary(FidelityResults r) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-22s %6s %-9s %9s %7s %9s%n", "policy", "budget", "positions", "kl", "top1",
                "probe"));
        for (int s = 0; s < r.students().size(); s++) {
            Student st = r.students().get(s);
            sb.append(String.format(Locale.ROOT, "%-22s %6d %-9s %9.4f %7.3f %9.3f%n", st.policy(), st.budget(), st.positions().label(),
                    r.interval(s, FidelityResults.Metric.KL).mean(), r.interval(s, FidelityResults.Metric.TOP1).mean(),
                    r.interval(s, FidelityResults.Metric.PROBE_NLL_INCREASE).mean()));
        }
        return sb.toString();
    }
}
