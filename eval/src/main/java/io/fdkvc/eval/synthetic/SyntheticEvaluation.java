package io.fdkvc.eval.synthetic;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.Policy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs every policy on the same dialogues of every scenario, in parallel over dialogues. A
 * dialogue is generated once and every policy replays it; results land at fixed indices, so the
 * outcome does not depend on the number of threads or on scheduling.
 */
public final class SyntheticEvaluation {
    private SyntheticEvaluation() {}

    public static SyntheticResults run(EvalConfig cfg, Progress progress) {
        SyntheticResults res = new SyntheticResults(cfg);
        int units = cfg.scenarios().size() * cfg.dialogues();
        AtomicInteger next = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        long start = System.nanoTime();
        int threads = Math.min(cfg.threads(), units);
        if (threads == 1) {
            work(cfg, res, next, done, units, progress);
        } else {
            ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
                Thread t = new Thread(r, "fdkvc-eval");
                t.setDaemon(true);
                return t;
            });
            try {
                List<Future<?>> fs = new ArrayList<>();
                for (int i = 0; i < threads; i++) fs.add(pool.submit(() -> work(cfg, res, next, done, units, progress)));
                for (Future<?> f : fs) f.get();
            } catch (ExecutionException e) {
                next.set(units); // the other workers stop at their next dialogue
                if (e.getCause() instanceof RuntimeException re) throw re;
                if (e.getCause() instanceof Error err) throw err;
                throw new IllegalStateException(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            } finally {
                pool.shutdownNow();
            }
        }
        res.seconds = (System.nanoTime() - start) / 1e9;
        return res;
    }

    /** A worker: takes (scenario, dialogue) units until none is left; its buffers are its own. */
    private static void work(EvalConfig cfg, SyntheticResults res, AtomicInteger next, AtomicInteger done, int units,
                             Progress progress) {
        GeneratorConfig g = cfg.generator();
        Dialogue dlg = new Dialogue(g);
        Simulator sim = new Simulator(g);
        Trajectory tr = new Trajectory(g.turns());
        int np = cfg.policies().size();
        KvStream[] streams = new KvStream[np];
        for (int u; (u = next.getAndIncrement()) < units; ) {
            int s = u / cfg.dialogues(), i = u % cfg.dialogues();
            Scenario sc = cfg.scenarios().get(s);
            DialogueGenerator.fill(dlg, sc, DialogueGenerator.dialogueSeed(cfg.seed(), sc, i));
            for (int p = 0; p < np; p++) {
                Policy policy = cfg.policies().get(p).newPolicy(); // one instance per dialogue: it carries state
                if (streams[p] == null) streams[p] = sim.newStream(policy);
                sim.run(dlg, policy, streams[p], tr);
                res.record(s, p, i, dlg, tr);
            }
            progress.update(done.incrementAndGet(), units);
        }
    }
}
