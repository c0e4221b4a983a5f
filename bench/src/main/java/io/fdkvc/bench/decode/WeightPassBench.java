package io.fdkvc.bench.decode;

import io.fdkvc.cli.engine.SyntheticModels;
import io.fdkvc.core.InputException;
import io.fdkvc.core.param.Check;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.Parallel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * One thread's speed through all of a model's weight matrices, as a decode step reads them: each
 * matrix once per pass, in the forward pass's order, at a batch of B rows (1: a single
 * conversation's decode; 2-8: continuous batching's kernels; 64: a prefill chunk). The whole set
 * of weights is far larger than the caches, so this measures how fast the products stream their
 * weights from memory, which a benchmark on one matrix (kernels.DotBench) does not.
 * Prints GMAC/s at the 10th, 50th and 90th percentile of PASSES passes after PASSES/3 warm-up ones,
 * then each kind of matrix's mean time per pass (q, k, v, o, gate, up, down, the classifier).
 *   scripts/run-bench decode.WeightPassBench smollm2-135m 1 Q8_0 150
 *   scripts/run-bench decode.WeightPassBench llama-3.2-1b-Q4_K_M.gguf 1 - 30 2
 * args: a synthetic shape or a .gguf file (TYPE then "-": the file's own types), batch rows
 * (1-64), weight type (as --quant), passes (1-100000), and optionally THREADS (default 1): each
 * product's rows split over that many threads, as the forward pass splits them, and, for a file,
 * LOADS (default 1): the file loaded that many times in turn in this JVM, each load with copies
 * of its own (the row lanes, fdkvc.weights=copied), each load's passes printed apart, so that
 * how fast fresh copies read can be told from how the kernels were compiled:
 *   scripts/run-bench decode.WeightPassBench llama-3.2-1b-Q4_K_M.gguf 1 - 15 2 6
 * Bad arguments exit 2.
 * Prefer a file written once (./fdkvc bench --synthetic SHAPE --quant TYPE --save FILE): a
 * synthetic model is written afresh to a temporary file, deleted once mapped, and on the AMD
 * EPYC Zen 5 host those just-written pages read from memory at a third of a settled file's speed.
 */
public final class WeightPassBench {
    private WeightPassBench() {}

    public static void main(String[] args) {
        try {
            if (args.length < 4 || args.length > 6) throw new InputException("usage: WeightPassBench SHAPE|FILE.gguf BATCH TYPE|- PASSES [THREADS [LOADS]], e.g. smollm2-135m 1 Q8_0 150");
            int batch = Check.wholeNumber("BATCH", args[1], 1, 64), passes = Check.wholeNumber("PASSES", args[3], 1, 100_000);
            int threads = args.length >= 5 ? Check.wholeNumber("THREADS", args[4], 1, 256) : 1;
            int loads = args.length == 6 ? Check.wholeNumber("LOADS", args[5], 1, 1000) : 1;
            if (args[0].endsWith(".gguf")) {
                Path file = Path.of(args[0]);
                if (!Files.isRegularFile(file)) throw new InputException("FILE: no such file " + file);
                if (!args[2].equals("-")) throw new InputException("TYPE: a .gguf file has its own types: give '-', not '" + args[2] + "'");
                for (int i = 0; i < loads; i++) {
                    try (LoadedModel m = GgufModelLoader.load(file)) {
                        run(file.getFileName().toString() + (loads > 1 ? " load " + (i + 1) : ""), "-", m, batch, passes, threads);
                    }
                }
            } else {
                if (loads != 1) throw new InputException("LOADS: only a .gguf file is loaded again; a synthetic shape takes 1, not " + loads);
                var model = SyntheticModels.model(args[0], args[2]);
                try (LoadedModel m = SyntheticModels.load(model, null)) {
                    run(args[0], args[2], m, batch, passes, threads);
                }
            }
        } catch (InputException e) {
            System.err.println("WeightPassBench: " + e.getMessage());
            System.exit(2);
        }
    }

    /** The matrices of a layer, in the forward pass's order, and the classifier. */
    private static final String[] KINDS = {"q", "k", "v", "o", "gate", "up", "down", "output"};

    static void run(String shape, String type, LoadedModel m, int batch, int passes, int threads) {
        Parallel.setThreads(threads);
        var w = m.weights();
        var c = m.config();
        List<FloatTensor> ts = new ArrayList<>();
        for (int l = 0; l < c.layers(); l++) {
            ts.addAll(List.of(w.wq()[l], w.wk()[l], w.wv()[l], w.wo()[l], w.wGate()[l], w.wUp()[l], w.wDown()[l]));
        }
        ts.add(w.output());
        // each matrix's kind (KINDS), for the time per kind after the percentiles
        int[] kind = new int[ts.size()];
        for (int i = 0; i < kind.length; i++) kind[i] = i == kind.length - 1 ? 7 : i % 7;
        long[] kindNanos = new long[KINDS.length], kindMacs = new long[KINDS.length];
        int widest = Math.max(c.dim(), c.hiddenDim());
        float[] x = new float[widest * batch];
        Random r = new Random(1);
        for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
        float[] out = new float[c.vocabSize() * batch];
        long macs = 0;
        for (FloatTensor t : ts) macs += (long) t.rows() * t.cols();
        double[] g = new double[passes];
        for (int p = -passes / 3; p < passes; p++) {
            long t0 = System.nanoTime(), dt = 0;
            for (int i = 0; i < kind.length; i++) {
                FloatTensor t = ts.get(i);
                Parallel.forRange(t.rows(), (from, to) -> t.matmul(from, to, x, 0, t.cols(), batch, out, 0, t.rows()));
                long t1 = System.nanoTime();
                if (p >= 0) {
                    kindNanos[kind[i]] += t1 - t0;
                    kindMacs[kind[i]] += (long) t.rows() * t.cols();
                }
                dt += t1 - t0;
                t0 = t1;
            }
            if (p >= 0) g[p] = (double) batch * macs / dt;
        }
        Arrays.sort(g);
        System.out.printf("%s %s batch %d, %d thread(s): %.1f M weights; GMAC/s p10 %.2f, median %.2f, p90 %.2f%n", shape, type, batch,
                threads, macs / 1e6, g[passes / 10], g[passes / 2], g[passes * 9 / 10]);
        StringBuilder kinds = new StringBuilder("per pass, mean ms (GMAC/s):");
        for (int k = 0; k < KINDS.length; k++)
            kinds.append(String.format(" %s %.2f (%.1f)", KINDS[k], kindNanos[k] / 1e6 / passes, (double) batch * kindMacs[k] / kindNanos[k]));
        System.out.println(kinds);
    }
}
