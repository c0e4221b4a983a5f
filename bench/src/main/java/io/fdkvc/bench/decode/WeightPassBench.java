package io.fdkvc.bench.decode;

import io.fdkvc.cli.engine.SyntheticModels;
import io.fdkvc.core.InputException;
import io.fdkvc.core.param.Check;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.tensor.FloatTensor;
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
 * Prints GMAC/s at the 10th, 50th and 90th percentile of PASSES passes after PASSES/3 warm-up ones.
 *   scripts/run-bench decode.WeightPassBench smollm2-135m 1 Q8_0 150
 * args: synthetic shape, batch rows (1-64), weight type (as --quant), passes (1-100000); bad ones exit 2
 */
public final class WeightPassBench {
    private WeightPassBench() {}

    public static void main(String[] args) {
        try {
            if (args.length != 4) throw new InputException("usage: WeightPassBench SHAPE BATCH TYPE PASSES, e.g. smollm2-135m 1 Q8_0 150");
            var model = SyntheticModels.model(args[0], args[2]);
            run(args[0], args[2], model, Check.wholeNumber("BATCH", args[1], 1, 64), Check.wholeNumber("PASSES", args[3], 1, 100_000));
        } catch (InputException e) {
            System.err.println("WeightPassBench: " + e.getMessage());
            System.exit(2);
        }
    }

    static void run(String shape, String type, SyntheticModels.Model model, int batch, int passes) {
        try (LoadedModel m = SyntheticModels.load(model, null)) {
            var w = m.weights();
            var c = m.config();
            List<FloatTensor> ts = new ArrayList<>();
            for (int l = 0; l < c.layers(); l++) {
                ts.addAll(List.of(w.wq()[l], w.wk()[l], w.wv()[l], w.wo()[l], w.wGate()[l], w.wUp()[l], w.wDown()[l]));
            }
            ts.add(w.output());
            int widest = Math.max(c.dim(), c.hiddenDim());
            float[] x = new float[widest * batch];
            Random r = new Random(1);
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            float[] out = new float[c.vocabSize() * batch];
            long macs = 0;
            for (FloatTensor t : ts) macs += (long) t.rows() * t.cols();
            double[] g = new double[passes];
            for (int p = -passes / 3; p < passes; p++) {
                long t0 = System.nanoTime();
                for (FloatTensor t : ts) t.matmul(0, t.rows(), x, 0, t.cols(), batch, out, 0, t.rows());
                long dt = System.nanoTime() - t0;
                if (p >= 0) g[p] = (double) batch * macs / dt;
            }
            Arrays.sort(g);
            System.out.printf("%s %s batch %d: %.1f M weights; GMAC/s p10 %.2f, median %.2f, p90 %.2f%n", shape, type, batch,
                    macs / 1e6, g[passes / 10], g[passes / 2], g[passes * 9 / 10]);
        }
    }
}
