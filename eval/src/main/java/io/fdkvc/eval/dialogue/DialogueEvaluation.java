package io.fdkvc.eval.dialogue;

import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicyTemplate;
import io.fdkvc.eval.report.MetricResult;
import io.fdkvc.eval.stats.Bootstrap;
import io.fdkvc.eval.stats.Interval;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.DoubleConsumer;

/**
 * The FD-KVC questions asked of real dialogues: each utterance is a cache entry whose key is a
 * real sentence embedding and whose cost is its token count; the policies keep a token budget,
 * and the annotations of the corpus say whether what they kept was what the next turns needed
 * (SGD), was on the current topic (SGD, MultiWOZ), or followed a topic shift (TIAGE). See
 * docs/evaluation-dialogues.md.
 */
public final class DialogueEvaluation {
    /** Policies the paired improvement of fdkvc (and fdkvc-tuned) is measured against. */
    static final List<String> IMPROVEMENT_BASELINES = List.of("h2o", "h2o-paper");
    static final List<String> IMPROVED = List.of("fdkvc", DialogueOptions.TUNED);
    /**
     * Pairs compared on every {@link Metric#pairedOf paired metric} at every budget:
     * fdkvc-dialogue against the packed window and LangChain4j's own windows.
     */
    static final List<List<String>> COMPARISONS = List.of(
            List.of("fdkvc-dialogue", "window"),
            List.of("fdkvc-dialogue", LangChain4jMemory.TOKEN_WINDOW),
            List.of("fdkvc-dialogue", LangChain4jMemory.MESSAGE_WINDOW),
            List.of(FdkvcLangChain4jMemory.LABEL, "window"),
            List.of(FdkvcLangChain4jMemory.LABEL, LangChain4jMemory.TOKEN_WINDOW),
            List.of(SpringAiMemory.FDKVC, SpringAiMemory.MESSAGE_WINDOW));
    /** Dialogues per simulation task: enough to amortise the task, small enough to balance the cores. */
    private static final int CHUNK = 16;

    private DialogueEvaluation() {}

    /** One row of the results: a label and the memory to open per dialogue and budget. */
    public record Contender(String label, ConversationMemory.Factory memory) {
        /** A policy row: {@code template} instantiated at each budget, with packing on or off. */
        public static Contender policy(String label, PolicyTemplate template, boolean packing) {
            return new Contender(label, new PolicyMemory.Factory(template, packing));
        }
    }

    /** The rows {@code options} asks for: policies (with the options' packing), LangChain4j's and Spring AI's memories. */
    public static List<Contender> contenders(DialogueOptions options, List<EmbeddedDialogue> dialogues) {
        List<Contender> out = new ArrayList<>();
        for (String p : options.policies()) {
            if (p.equals(LangChain4jMemory.TOKEN_WINDOW)) {
                out.add(new Contender(p, LangChain4jMemory.tokenWindow()));
            } else if (p.equals(LangChain4jMemory.MESSAGE_WINDOW)) {
                out.add(new Contender(p, LangChain4jMemory.messageWindow(LangChain4jMemory.meanTokens(dialogues))));
            } else if (p.equals(FdkvcLangChain4jMemory.LABEL)) {
                out.add(new Contender(p, FdkvcLangChain4jMemory.factory()));
            } else if (p.equals(SpringAiMemory.MESSAGE_WINDOW)) {
                out.add(new Contender(p, SpringAiMemory.messageWindow(LangChain4jMemory.meanTokens(dialogues))));
            } else if (p.equals(SpringAiMemory.FDKVC)) {
                out.add(new Contender(p, SpringAiMemory.fdkvc()));
            } else {
                out.add(Contender.policy(p, options.template(p), options.packing()));
            }
        }
        return out;
    }

    /**
     * The evaluation without the command line module, for the runs in docs/evaluation-dialogues.md:
     * {@code --dataset NAME --data FILE --out DIR [--budget-tokens N] [--max-dialogues N] [--seed S]
     * [--threads N] [--embedding-cache DIR]}. Prints the markdown and writes it, with
     * {@code results.tsv} and the plot, into the output directory. ({@code fdkvc eval --dataset}
     * is the user-facing way.)
     */
    public static void main(String[] args) throws java.io.IOException {
        Map<String, String> a = DialogueTuning.parse(args);
        DialogueOptions o = DialogueTuning.options(a);
        if (a.containsKey("--budget-tokens")) o = o.withBudgetTokens(DialogueTuning.integer(a, "--budget-tokens", 0));
        Path out = Path.of(a.getOrDefault("--out", "dialogue-" + o.dataset().id()));
        long t0 = System.nanoTime();
        DialogueResults r = run(o, out, f -> {});
        double seconds = (System.nanoTime() - t0) / 1e9;
        StringBuilder tsv = new StringBuilder("scenario\tpolicy\tmetric\tmean\tci_low\tci_high\tn\n");
        for (MetricResult m : r.results()) {
            tsv.append(String.join("\t", m.scenario(), m.policy(), m.metric(), Double.toString(m.mean()),
                    Double.toString(m.ciLow()), Double.toString(m.ciHigh()), Integer.toString(m.n()))).append('\n');
        }
        java.nio.file.Files.writeString(out.resolve("results.tsv"), tsv);
        java.nio.file.Files.writeString(out.resolve("dialogue-" + o.dataset().id() + ".md"), r.markdown());
        System.out.println(r.markdown());
        System.out.printf(Locale.ROOT, "(%.1f s)%n", seconds);
    }

    /**
     * Runs the evaluation with the real all-MiniLM-L6-v2 embedder, writes the plots into
     * {@code outDir} and returns the result rows and the markdown section.
     *
     * @param progress receives the fraction done, from 0 to 1, on the calling thread
     * @throws InputException for bad input (file, line, option)
     */
    public static DialogueResults run(DialogueOptions options, Path outDir, DoubleConsumer progress) {
        try (MiniLmEmbedder embedder = new MiniLmEmbedder(options.threads())) {
            return run(options, outDir, progress, embedder);
        }
    }

    /** As {@link #run(DialogueOptions, Path, DoubleConsumer)} with the given embedder. */
    public static DialogueResults run(DialogueOptions options, Path outDir, DoubleConsumer progress, Embedder embedder) {
        List<EmbeddedDialogue> dialogues = load(options, embedder, f -> progress.accept(0.6 * f));
        List<Contender> contenders = contenders(options, dialogues);
        Budget headline = Budget.tokens(headlineBudget(dialogues, options.budgetTokens()));
        Evaluation ev = evaluate(options.dataset(), dialogues, contenders, headline, options.sweepFractions(),
                options.temperature(), options.threads(), f -> progress.accept(0.6 + 0.35 * f));
        List<MetricResult> rows = ev.results(options.seed());
        List<String> plots = DialogueReport.plotSweep(ev, outDir);
        String md = DialogueReport.markdown(ev, options, rows, plots, embedder);
        progress.accept(1.0);
        return new DialogueResults(rows, md);
    }

    /**
     * Reads the corpus, keeps a seeded sample of {@code maxDialogues} (in file order) when asked,
     * and embeds every utterance through the cache.
     */
    public static List<EmbeddedDialogue> load(DialogueOptions options, Embedder embedder, DoubleConsumer progress) {
        List<Dialogue> all = DialogueReader.read(options.dataset(), options.data());
        List<Dialogue> chosen = sample(all, options.maxDialogues(), options.seed());
        EmbeddingCache cache = new EmbeddingCache(options.embeddingCache(), embedder);
        return embed(chosen, cache, options.data().getFileName().toString(), progress);
    }

    /** A seeded uniform sample of {@code max} dialogues in file order; all of them when max is 0 or at least their number. */
    static List<Dialogue> sample(List<Dialogue> all, int max, long seed) {
        if (max == 0 || max >= all.size()) return all;
        int[] idx = new int[all.size()];
        for (int i = 0; i < idx.length; i++) idx[i] = i;
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < max; i++) { // partial Fisher-Yates: the first max slots are the sample
            int j = i + r.nextInt(idx.length - i);
            int t = idx[i];
            idx[i] = idx[j];
            idx[j] = t;
        }
        int[] pick = Arrays.copyOf(idx, max);
        Arrays.sort(pick);
        List<Dialogue> out = new ArrayList<>(max);
        for (int i : pick) out.add(all.get(i));
        return out;
    }

    static List<EmbeddedDialogue> embed(List<Dialogue> dialogues, EmbeddingCache cache, String cacheName, DoubleConsumer progress) {
        List<String> texts = new ArrayList<>();
        for (Dialogue d : dialogues) for (Utterance u : d.turns()) texts.add(u.text());
        EmbeddingCache.Table table = cache.lookup(cacheName, texts, progress);
        int dim = table.dimension();
        List<EmbeddedDialogue> out = new ArrayList<>(dialogues.size());
        int row = 0;
        for (Dialogue d : dialogues) {
            int n = d.size();
            float[] e = Arrays.copyOfRange(table.vectors(), row * dim, (row + n) * dim);
            int[] tok = Arrays.copyOfRange(table.tokens(), row, row + n);
            out.add(new EmbeddedDialogue(d, dim, e, tok));
            row += n;
        }
        return out;
    }

    /** {@code given}, or {@link DialogueOptions#DEFAULT_BUDGET_SHARE} of the median dialogue's tokens, rounded up. */
    public static int headlineBudget(List<EmbeddedDialogue> dialogues, Integer given) {
        if (given != null) return given;
        return (int) Math.ceil(DialogueOptions.DEFAULT_BUDGET_SHARE * medianTokens(dialogues) - 1e-9);
    }

    /** The median of the dialogues' token totals (the mean of the middle two for an even count). */
    static double medianTokens(List<EmbeddedDialogue> dialogues) {
        long[] totals = new long[dialogues.size()];
        for (int i = 0; i < totals.length; i++) totals[i] = dialogues.get(i).totalTokens();
        Arrays.sort(totals);
        int n = totals.length;
        return n % 2 == 1 ? totals[n / 2] : (totals[n / 2 - 1] + totals[n / 2]) / 2.0;
    }

    /** Per-dialogue values of every metric of the dataset, for every contender, at every budget (headline first). */
    public static Evaluation evaluate(Dataset dataset, List<EmbeddedDialogue> dialogues, List<Contender> contenders,
                                      Budget headline, List<Double> sweep, double temperature, int threads,
                                      DoubleConsumer progress) {
        List<Metric> metrics = Metric.of(dataset);
        List<Budget> budgets = new ArrayList<>();
        budgets.add(headline);
        for (double f : sweep) budgets.add(Budget.share(f));
        int nd = dialogues.size();
        // values[contender][budget][metric][dialogue]
        double[][][][] values = new double[contenders.size()][budgets.size()][metrics.size()][nd];
        for (double[][][] c : values) for (double[][] b : c) for (double[] m : b) Arrays.fill(m, Double.NaN);
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "dialogue-sim");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> tasks = new ArrayList<>();
            for (int from = 0; from < nd; from += CHUNK) {
                int a = from, b = Math.min(nd, from + CHUNK);
                tasks.add(pool.submit(() -> {
                    for (int i = a; i < b; i++) simulateDialogue(dialogues.get(i), i, contenders, budgets, metrics, temperature, values);
                }));
            }
            for (int k = 0; k < tasks.size(); k++) {
                await(tasks.get(k));
                progress.accept((double) (k + 1) / tasks.size());
            }
        } finally {
            pool.shutdownNow();
        }
        return new Evaluation(dataset, dialogues, contenders, budgets, metrics, temperature, values);
    }

    private static void await(Future<?> f) {
        try {
            f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) throw re;
            throw new IllegalStateException(e.getCause());
        }
    }

    private static void simulateDialogue(EmbeddedDialogue d, int index, List<Contender> contenders, List<Budget> budgets,
                                         List<Metric> metrics, double temperature, double[][][][] values) {
        for (int c = 0; c < contenders.size(); c++) {
            ConversationMemory.Factory f = contenders.get(c).memory();
            for (int b = 0; b < budgets.size(); b++) {
                int tokens = budgets.get(b).of(d);
                boolean[][] cached;
                long bound;
                try {
                    cached = DialogueSimulator.run(d, f.open(d, tokens, temperature));
                    bound = f.unbounded() ? Long.MAX_VALUE : tokens; // full may hold everything said
                } catch (InputException | IllegalStateException e) {
                    // e.g. streaming's sinks, never evicted, that cost more than the budget
                    throw new InputException("policy " + contenders.get(c).label() + " at a budget of " + tokens
                            + " tokens on dialogue " + d.dialogue().id() + ": " + e.getMessage(), e);
                }
                for (int m = 0; m < metrics.size(); m++) {
                    values[c][b][m][index] = DialogueMetrics.value(metrics.get(m), d.dialogue(), cached, d.tokens(), bound);
                }
            }
        }
    }

    /** The raw per-dialogue values of one evaluation, and their summary rows. */
    public record Evaluation(Dataset dataset, List<EmbeddedDialogue> dialogues, List<Contender> contenders,
                             List<Budget> budgets, List<Metric> metrics, double temperature, double[][][][] values) {

        public int contender(String label) {
            for (int c = 0; c < contenders.size(); c++) if (contenders.get(c).label().equals(label)) return c;
            return -1;
        }

        /** Per-dialogue values of a contender's metric at a budget (index into {@link #budgets()}). */
        public double[] values(int contender, int budget, Metric m) {
            int k = metrics.indexOf(m);
            if (k < 0) throw new IllegalArgumentException(m.id() + " is not a metric of " + dataset.id());
            return values[contender][budget][k];
        }

        /** The metric's row name at a budget: its id at the headline budget, {@code id@30%} in the sweep. */
        public String name(Metric m, int budget) {
            return budget == 0 ? m.id() : m.id() + "@" + Budget.percent(budgets.get(budget).share());
        }

        public Metric headline() {
            return metrics.get(0);
        }

        /**
         * Mean and 95% bootstrap interval of every metric of every contender at the headline
         * budget, of the {@linkplain Metric#sweepOf sweep metrics} at each sweep share
         * ({@code metric@30%}); the paired relative improvement of fdkvc and fdkvc-tuned over h2o
         * and h2o-paper on the headline metric ({@code policy = "fdkvc vs h2o"}, metric
         * {@code NAME_relative_improvement}); and of each {@link #COMPARISONS} pair on each
         * {@linkplain Metric#pairedOf paired metric} at every budget
         * ({@code NAME_relative_improvement} at the headline budget, {@code ...@20%} in the sweep).
         */
        public List<MetricResult> results(long seed) {
            String scenario = dataset.id();
            List<MetricResult> rows = new ArrayList<>();
            for (int c = 0; c < contenders.size(); c++) {
                String label = contenders.get(c).label();
                for (Metric m : metrics) rows.add(row(scenario, label, m.id(), Bootstrap.mean(values(c, 0, m), seed)));
                for (int b = 1; b < budgets.size(); b++) {
                    for (Metric m : Metric.sweepOf(dataset)) rows.add(row(scenario, label, name(m, b), Bootstrap.mean(values(c, b, m), seed)));
                }
            }
            for (List<String> pair : COMPARISONS) {
                int a = contender(pair.get(0)), o = contender(pair.get(1));
                if (a < 0 || o < 0) continue;
                for (int b = 0; b < budgets.size(); b++) {
                    for (Metric m : Metric.pairedOf(dataset)) {
                        Interval iv = Bootstrap.relativeImprovement(values(a, b, m), values(o, b, m), seed);
                        String metric = m.id() + "_relative_improvement" + (b == 0 ? "" : "@" + Budget.percent(budgets.get(b).share()));
                        rows.add(row(scenario, pair.get(0) + " vs " + pair.get(1), metric, iv));
                    }
                }
            }
            for (String mine : IMPROVED) {
                int fd = contender(mine);
                if (fd < 0) continue;
                for (String base : IMPROVEMENT_BASELINES) {
                    int o = contender(base);
                    if (o < 0) continue;
                    Interval iv = Bootstrap.relativeImprovement(values(fd, 0, headline()), values(o, 0, headline()), seed);
                    rows.add(row(scenario, mine + " vs " + base, headline().id() + "_relative_improvement", iv));
                }
            }
            return rows;
        }

        private static MetricResult row(String scenario, String policy, String metric, Interval iv) {
            return new MetricResult(scenario, policy, metric, iv.mean(), iv.low(), iv.high(), iv.n());
        }
    }

    static String fmt(double x) {
        return Double.isNaN(x) ? "n/a" : String.format(Locale.ROOT, "%.3f", x);
    }
}
