package io.fdkvc.cli;

import io.fdkvc.cli.engine.EngineOptions;
import io.fdkvc.cli.engine.SyntheticModels;
import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LlamaConfig;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.sampling.Sampler;
import io.fdkvc.engine.session.Session;
import java.io.PrintWriter;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Prefill and decode speed, policy cost and KV memory of a model, without and with a budget.
 *
 * <p>Each configuration runs a conversation of {@code --turns} turns; a turn prefills
 * {@code --prompt-tokens} random tokens, decodes {@code --gen-tokens} greedy tokens (no stop
 * token; the last one is put into the cache without logits, as chat does), then runs the policy.
 * Before each configuration's conversation a throwaway one of at least {@code --jit-warmup} turns
 * runs in its own session, continued while the JIT still compiles (up to four times as many), so
 * that the forward pass, the policy update and the eviction paths are compiled (steady state, not
 * JIT warm-up, is reported); then the first {@code --warmup} turns of the measured conversation
 * are not reported and the others are averaged. The policy's cost is reported as its share of the turn's
 * forward-pass time; attention (and within it the rotation of the cached pre-RoPE keys) as its
 * share of the decode time.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Measure prefill and decode tokens/s, policy update cost and KV memory, with 'full' and with a budget.",
                "With --policy full (the default) the budgeted run uses fdkvc at --budget."})
public final class BenchCommand implements Callable<Integer> {
    static final class Source {
        @Option(names = "--model", paramLabel = "FILE", description = "model file: .gguf or llama2.c .bin")
        Path model;

        @Option(names = "--synthetic", paramLabel = "NAME",
                description = "a random-weight model of a known shape instead of a file: smollm2-135m, llama-3.2-1b, qwen3-0.6b, "
                        + "gemma3-1b, ministral3-3b, smollm3-3b, phi4-mini (weights as --quant; smollm2-135m-q8 and "
                        + "smollm2-135m-f32 are the SmolLM2 shape in Q8_0 and F32)")
        String synthetic;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Source source;

    @Option(names = "--quant", paramLabel = "TYPE",
            description = "weights of the --synthetic model: a tensor type (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, "
                    + "Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS) or llama-quantize's mix Q4_K_M / Q5_K_M; default: Q8_0")
    String quant;

    @Option(names = "--save", paramLabel = "FILE",
            description = "also keep the --synthetic model as this GGUF file (e.g. to run llama.cpp on the same file)")
    Path save;

    @Option(names = "--jit-warmup", paramLabel = "N", defaultValue = "4",
            description = {"turns of a throwaway conversation run before each configuration so the JIT has compiled: at least N, "
                    + "then more while the last one spent " + JIT_QUIET_PERCENT + "%% or more of its time compiling, "
                    + "up to " + JIT_MAX_FACTOR + "N; default: ${DEFAULT-VALUE}"})
    int jitWarmup;

    /**
     * Percent of a warm-up turn's time the JIT may still spend compiling for the warm-up to end.
     * With a budget, the first evictions compile new paths on the same cores as the forward pass,
     * so a fixed number of warm-up turns can leave the JIT's work in the reported turns rather than
     * the steady state ({@code bench --per-turn} shows the turns where it happens).
     */
    static final int JIT_QUIET_PERCENT = 2;
    static final int JIT_MAX_FACTOR = 4;

    /**
     * Whether the JIT warm-up runs another turn after {@code done} of them (at least {@code min}),
     * the last of which took {@code turnNanos} while the JVM compiled for {@code compileNanos}:
     * until {@code min} turns, yes; then while the last turn compiled for {@link #JIT_QUIET_PERCENT}
     * percent or more of its time, up to {@link #JIT_MAX_FACTOR} times {@code min} turns.
     */
    static boolean moreJitWarmup(int done, int min, long compileNanos, long turnNanos) {
        if (done < min) return true;
        if (done >= (long) JIT_MAX_FACTOR * min) return false;   // long: --jit-warmup may be near Integer.MAX_VALUE
        return compileNanos * 100 >= JIT_QUIET_PERCENT * turnNanos;
    }

    @Option(names = "--per-turn", description = "also print each reported turn: cache entries before it, prefill and decode tok/s")
    boolean perTurn;

    @Option(names = "--budgeted-only", description = "run only the budgeted configuration (e.g. for long conversations)")
    boolean budgetedOnly;

    @Option(names = "--prompt-tokens", paramLabel = "N", defaultValue = "64", description = "prompt tokens per turn; default: ${DEFAULT-VALUE}")
    int promptTokens;

    @Option(names = "--gen-tokens", paramLabel = "N", defaultValue = "64", description = "generated tokens per turn; default: ${DEFAULT-VALUE}")
    int genTokens;

    @Option(names = "--turns", paramLabel = "N", defaultValue = "6", description = "turns per configuration; default: ${DEFAULT-VALUE}")
    int turns;

    @Option(names = "--warmup", paramLabel = "N", defaultValue = "2", description = "leading turns not reported; default: ${DEFAULT-VALUE}")
    int warmup;

    @Mixin
    EngineOptions engine;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        if (promptTokens < 1) throw new InputException("--prompt-tokens must be >= 1, got " + promptTokens);
        if (genTokens < 1) throw new InputException("--gen-tokens must be >= 1, got " + genTokens);
        if (warmup < 0) throw new InputException("--warmup must be >= 0, got " + warmup);
        if (turns <= warmup) throw new InputException("--turns must exceed --warmup (" + warmup + "), got " + turns);
        if (jitWarmup < 0) throw new InputException("--jit-warmup must be >= 0, got " + jitWarmup);
        if (source.synthetic == null && (quant != null || save != null))
            throw new InputException((quant != null ? "--quant" : "--save") + " applies to --synthetic models only");
        // documented bounds (docs/limits.md), before the model is opened
        io.fdkvc.core.Limits.check("--prompt-tokens", promptTokens, 1, io.fdkvc.core.Limits.MAX_NEW_TOKENS);
        io.fdkvc.core.Limits.check("--gen-tokens", genTokens, 1, io.fdkvc.core.Limits.MAX_NEW_TOKENS);
        engine.validate();
        PolicyOptions policy = engine.policy;
        PolicySpec budgeted = policy.spec();
        if (budgeted.name().equals("full")) budgeted = PolicyRegistry.spec("fdkvc", policy.budget);
        List<PolicySpec> specs = budgetedOnly ? List.of(budgeted) : List.of(PolicyRegistry.spec("full", policy.budget), budgeted);
        PrintWriter out = spec.commandLine().getOut();
        String name;
        LoadedModel m;
        if (source.synthetic != null) {
            SyntheticModels.Model model = SyntheticModels.model(source.synthetic, quant);
            name = "synthetic " + model.label();
            m = SyntheticModels.load(model, save);
        } else {
            name = source.model.getFileName().toString();
            m = engine.load(source.model);
        }
        try (m; Llama llama = engine.newModel(m)) {
            LlamaConfig c = m.config();
            out.println(String.format(Locale.ROOT,
                    "model %s: %s, %d layers, dim %d, %d heads / %d KV heads, hidden %d, vocab %d, weights %s",
                    name, c.architecture(), c.layers(), c.dim(), c.heads(), c.kvHeads(), c.hiddenDim(), c.vocabSize(),
                    m.weights().wq()[0].type()));
            String scope = c.blocks().policyScope();
            if (scope != null) out.println(scope + " (entries/stream: the largest stream of any layer)");
            out.println(String.format(Locale.ROOT,
                    "threads %d, prefill chunk %d, positions %s, max turn tokens %d; %d turns of %d prompt + %d generated tokens, first %d not reported, after at least %d JIT warm-up turns",
                    llama.threads(), engine.batch, engine.positionMode().label(), engine.maxTurnTokens, turns, promptTokens,
                    genTokens, warmup, jitWarmup));
            out.println(String.format(Locale.ROOT, "%-28s %14s %13s %15s %15s %15s %10s %18s %17s %12s %12s",
                    "policy", "prefill tok/s", "decode tok/s", "update ms/turn", "update/compute", "entries/stream", "KV MiB",
                    "prefill tok/cpu-s", "decode tok/cpu-s", "attention %", "key RoPE %"));
            for (PolicySpec ps : specs) {
                // a throwaway conversation, continued while the JIT is busy; nothing of it is reported
                if (jitWarmup > 0) run(llama, ps, jitWarmup, Integer.MAX_VALUE, null, true);
                List<String> turnLines = perTurn ? new ArrayList<>() : null;
                Row r = run(llama, ps, turns, warmup, turnLines, false);
                if (turnLines != null) for (String l : turnLines) out.println(l);
                out.println(String.format(Locale.ROOT, "%-28s %14.1f %13.1f %15.3f %14.3f%% %15d %10.2f %18.1f %17.1f %11.1f%% %11.1f%%",
                        ps.toString().length() > 28 ? ps.name() + "(" + ps.budget() + ")" : ps.toString(),
                        r.prefill, r.decode, r.updateMs, 100 * r.updateShare, r.entries, r.kvBytes / 1048576.0,
                        r.prefillPerCpu, r.decodePerCpu, 100 * r.attentionShare, 100 * r.ropeShare));
                out.flush();
            }
        }
        return 0;
    }

    private record Row(double prefill, double decode, double updateMs, double updateShare, int entries, long kvBytes,
                       double prefillPerCpu, double decodePerCpu, double attentionShare, double ropeShare) {}

    /**
     * CPU time of the whole process. Per token it is what the work costs whatever else the
     * machine runs (wall time is not, on a shared machine); with one thread it is the compute
     * cost itself, with more it also counts the time workers spin waiting for the next phase.
     */
    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /**
     * A conversation of {@code turns} turns, the first {@code warmup} not reported; with {@code
     * settle} (the JIT warm-up) {@code turns} is the least, and more run while {@link
     * #moreJitWarmup} says the JIT is still busy.
     */
    private Row run(Llama llama, PolicySpec ps, int turns, int warmup, List<String> turnLines, boolean settle) {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        settle &= jit != null && jit.isCompilationTimeMonitoringSupported();
        long compiled = 0, took = 0;
        Session s = engine.newSession(llama, ps);
        int vocab = llama.config().vocabSize();
        Sampler greedy = Sampler.greedy(vocab);
        SplittableRandom rnd = new SplittableRandom(1234);
        int[] prompt = new int[promptTokens];
        List<double[]> reported = new ArrayList<>();
        Session.TurnStats last = null;
        for (int t = 0; settle ? moreJitWarmup(t, turns, compiled, took) : t < turns; t++) {
            long j0 = settle ? jit.getTotalCompilationTime() : 0;
            for (int i = 0; i < promptTokens; i++) prompt[i] = rnd.nextInt(vocab);
            int before = last == null ? 0 : last.cacheEntries();
            long c0 = cpuNanos(), t0 = System.nanoTime();
            s.feed(prompt, 0, promptTokens);
            long t1 = System.nanoTime(), c1 = cpuNanos(), p0 = s.position();
            long a0 = llama.attentionNanos(), r0 = llama.ropeNanos();
            s.generate(greedy, genTokens, id -> false, id -> { });
            s.append(s.lastSampled()); // the reply's last token enters the cache too, as in chat
            long t2 = System.nanoTime(), c2 = cpuNanos(), steps = s.position() - p0;
            last = s.endTurn();
            if (settle) {
                took = System.nanoTime() - t0;
                compiled = (jit.getTotalCompilationTime() - j0) * 1_000_000;
            }
            if (t >= warmup) {
                reported.add(new double[] {promptTokens / ((t1 - t0) / 1e9), steps / ((t2 - t1) / 1e9),
                        last.updateNanos() / 1e6, (double) last.updateNanos() / last.computeNanos(),
                        promptTokens / ((c1 - c0) / 1e9), steps / ((c2 - c1) / 1e9),
                        (double) (llama.attentionNanos() - a0) / (t2 - t1), (double) (llama.ropeNanos() - r0) / (t2 - t1)});
                if (turnLines != null)
                    turnLines.add(String.format(Locale.ROOT, "  %s turn %d: %d entries before, prefill %.1f tok/s, decode %.1f tok/s",
                            ps.name(), t + 1, before, promptTokens / ((t1 - t0) / 1e9), steps / ((t2 - t1) / 1e9)));
            }
        }
        double[] mean = new double[8];
        for (double[] r : reported) for (int i = 0; i < 8; i++) mean[i] += r[i] / reported.size();
        return new Row(mean[0], mean[1], mean[2], mean[3], last.cacheEntries(), last.kvBytes(), mean[4], mean[5], mean[6],
                mean[7]);
    }
}
