package io.fdkvc.eval.fidelity;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LlamaConfig;
import io.fdkvc.engine.model.LlamaWeights;
import io.fdkvc.engine.session.Session;
import io.fdkvc.eval.synthetic.Progress;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.ArrayList;

/**
 * Teacher-forced multi-turn evaluation on the engine's own cache. For each conversation the full
 * cache (the teacher) and every student run through the same tokens together, turn by turn and
 * chunk by chunk: a chunk is fed to the teacher, then to each student, through
 * {@link Session#feedEveryPosition} (the chunking and chunk-end policy runs of {@code chat}), and
 * each student's prediction at every position is compared with the teacher's at once; at the end
 * of each dialogue turn every session ends its turn with {@link Session#endTurn()}, exactly as
 * {@code chat} and {@code serve} do. Only one chunk of logits is held at a time, so a large
 * vocabulary fits.
 *
 * <p>Conversations are independent and run in parallel, each worker on its own {@link Llama}
 * over the shared weights.
 */
public final class FidelityRun {
    /**
     * @param maxBatch      prefill chunk (rows of logits held at once)
     * @param workers       conversations run at the same time
     * @param modelThreads  forward-pass threads of each worker
     * @param maxTurnTokens tokens a turn may add before the policy runs (the caches' headroom)
     */
    public record Setup(LlamaConfig config, LlamaWeights weights, int maxBatch, int workers, int modelThreads, int maxTurnTokens) {}

    private FidelityRun() {}

    /** Scores every student on every conversation; {@code scores[c][s]}. */
    public static FidelityResults run(Setup setup, List<TokenizedConversation> conversations, List<Student> students,
                                      Progress progress) {
        long t0 = System.nanoTime();
        ConversationScore[][] scores = new ConversationScore[conversations.size()][];
        AtomicInteger next = new AtomicInteger(), done = new AtomicInteger();
        int workers = Math.max(1, Math.min(setup.workers(), conversations.size()));
        ExecutorService pool = Executors.newFixedThreadPool(workers, r -> {
            Thread t = new Thread(r, "fdkvc-fidelity");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                fs.add(pool.submit(() -> {
                    try (Llama llama = new Llama(setup.config(), setup.weights(), setup.maxBatch(), setup.modelThreads())) {
                        llama.onWarning(message -> { }); // past the trained context: the command says so once, before the run
                        for (int c; (c = next.getAndIncrement()) < conversations.size(); ) {
                            scores[c] = conversation(llama, conversations.get(c), students, setup.maxTurnTokens());
                            progress.update(done.incrementAndGet(), conversations.size());
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) throw re;
            if (e.getCause() instanceof Error err) throw err;
            throw new IllegalStateException(e.getCause());
        } finally {
            pool.shutdownNow();
        }
        return new FidelityResults(conversations, students, scores, (System.nanoTime() - t0) / 1e9);
    }

    /** The full cache and every student through one conversation; one score per student. */
    static ConversationScore[] conversation(Llama llama, TokenizedConversation conv, List<Student> students, int maxTurnTokens) {
        int vocab = llama.config().vocabSize(), batch = llama.maxBatch();
        int[] tokens = conv.tokens();
        PolicySpec full = PolicyRegistry.spec("full", 1);
        Session teacher = new Session(llama, llama.newCache(full, maxTurnTokens, PositionMode.ORIGINAL));
        Session[] sessions = new Session[students.size()];
        Fidelity[] fid = new Fidelity[students.size()];
        for (int s = 0; s < sessions.length; s++) {
            Student st = students.get(s);
            sessions[s] = new Session(llama, llama.newCache(st.spec(), maxTurnTokens, st.positions()));
            fid[s] = new Fidelity(conv.turns(), conv.probes().size());
        }
        int[] probeOf = new int[tokens.length];
        java.util.Arrays.fill(probeOf, -1);
        for (int k = 0; k < conv.probes().size(); k++) {
            TokenizedConversation.Span p = conv.probes().get(k);
            for (int i = p.start(); i < p.end(); i++) probeOf[i] = k;
        }
        TeacherRows teacherRows = new TeacherRows(vocab, batch);
        float[] tBuf = new float[batch * vocab], sBuf = new float[batch * vocab];
        for (int turn = 0; turn < conv.turns(); turn++) {
            int end = conv.turnEnds()[turn];
            for (int from = conv.turnStart(turn); from < end; from += batch) {
                int n = Math.min(batch, end - from);
                teacher.feedEveryPosition(tokens, from, n, tBuf);
                teacherRows.set(tBuf, n);
                for (int s = 0; s < sessions.length; s++) {
                    sessions[s].feedEveryPosition(tokens, from, n, sBuf);
                    for (int r = 0; r < n; r++) {
                        int p = from + r;
                        if (p + 1 >= tokens.length) break; // the last token predicts nothing
                        fid[s].add(teacherRows, r, sBuf, r * vocab, tokens[p + 1], turn, turn > 0, probeOf[p + 1]);
                    }
                }
            }
            teacher.endTurn();
            for (Session s : sessions) s.endTurn();
        }
        ConversationScore[] out = new ConversationScore[students.size()];
        for (int s = 0; s < out.length; s++) out[s] = ConversationScore.of(fid[s]);
        return out;
    }
}
