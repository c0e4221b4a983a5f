package io.fdkvc.bench.decode;

import io.fdkvc.cli.engine.SyntheticModels;
import io.fdkvc.core.InputException;
import io.fdkvc.core.param.Check;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.chat.Conversation;
import io.fdkvc.engine.chat.DecodeBatch;
import io.fdkvc.engine.chat.GenerationParams;
import io.fdkvc.engine.chat.Reply;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.tensor.Parallel;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.util.ArrayList;
import java.util.List;

/**
 * Decode-only throughput of continuous batching, without HTTP and prefill: N conversations'
 * decode steps as one pass (engine.chat.DecodeBatch) against the same conversations one at a
 * time. Rounds of N=1 and N=k alternate so that a drifting machine load hits both alike.
 *   scripts/run-bench decode.DecodeBatchBench smollm2-135m-q8 4 32 3 2 [WORDS BUDGET]
 * args: synthetic shape, k, steps per round, rounds, threads; optionally words of history in each
 * conversation's first message (default 0: a few tokens) and the fdkvc budget (default 128), so
 * that decode runs at a depth comparable to llama-batched-bench's -npp
 */
public final class DecodeBatchBench {
    private DecodeBatchBench() {}

    static final String USAGE = "DecodeBatchBench SHAPE K STEPS ROUNDS THREADS [WORDS BUDGET]";

    /** A bad argument ends the run with one line naming it and exit 2 (core's checks name it). */
    static int whole(String name, String[] args, int i, int min, int max, int absent) {
        return i < args.length ? Check.wholeNumber(name, args[i], min, max) : absent;
    }

    public static void main(String[] args) {
        SyntheticModels.Model model;
        int k, steps, rounds, threads, words, budget;
        try {
            if (args.length != 5 && args.length != 7) throw new InputException("expected 5 or 7 arguments, got " + args.length);
            model = SyntheticModels.model(args[0], null);
            k = whole("K", args, 1, 2, 64, 0);
            steps = whole("STEPS", args, 2, 1, 100_000, 0);
            rounds = whole("ROUNDS", args, 3, 1, 1000, 0);
            threads = whole("THREADS", args, 4, 1, 256, 0);
            words = whole("WORDS", args, 5, 0, 100_000, 0);
            budget = whole("BUDGET", args, 6, 1, 1 << 24, 128);
            PolicyRegistry.spec("fdkvc", budget);
        } catch (InputException e) {
            // core's messages quote the user's text only as an excerpt; control characters masked, at most 200
            String m = String.valueOf(e.getMessage()).replaceAll("\\p{Cntrl}", "?");
            System.err.println("DecodeBatchBench: " + (m.length() > 200 ? m.substring(0, 200) + "..." : m) + "; usage: " + USAGE);
            System.exit(2);
            return;
        }
        String history = " lorem".repeat(words);
        Parallel.setThreads(threads);
        try (LoadedModel m = SyntheticModels.load(model, null); Llama llama = new Llama(m.config(), m.weights(), 64, threads)) {
            ChatFormat format = new ChatFormat(ChatTemplate.PLAIN, Tokenizers.from(m.vocabulary()));
            DecodeBatch batch = new DecodeBatch(llama);
            double[] alone = new double[rounds], batched = new double[rounds];
            for (int r = -1; r < rounds; r++) { // round -1: warm-up
                for (int mode = 0; mode < 2; mode++) {
                    List<Reply> replies = new ArrayList<>();
                    for (int i = 0; i < k; i++) {
                        Conversation c = new Conversation(new Session(llama, llama.newCache(PolicyRegistry.spec("fdkvc", budget), 64 + steps,
                                PositionMode.CACHE)), format);
                        Reply rep = c.begin(List.of(Message.user("conversation " + i + " round " + r + history)), new GenerationParams(steps + 1, 0.8f, 1f, i, List.of()), null);
                        while (rep.prefilling()) rep.prefill(64);
                        if (r == -1 && mode == 0 && i == 0) System.out.printf("cache entries per stream after the prompt: %d%n", c.cache().stream(0, 0).size());
                        replies.add(rep);
                    }
                    long t0 = System.nanoTime();
                    int tokens = 0;
                    for (int s = 0; s < steps; s++) {
                        List<Reply> live = new ArrayList<>();
                        for (Reply rep : replies) if (rep.pendingToken() >= 0) live.add(rep);
                        if (live.isEmpty()) break;
                        if (mode == 0) for (Reply rep : live) batch.step(List.of(rep));
                        else batch.step(live);
                        tokens += live.size();
                    }
                    double tps = tokens / ((System.nanoTime() - t0) / 1e9);
                    if (r >= 0) (mode == 0 ? alone : batched)[r] = tps;
                }
            }
            for (int r = 0; r < rounds; r++) {
                System.out.printf("round %d: %d conversations decoded one at a time %.1f tok/s, batched %.1f tok/s: %.2fx%n", r, k, alone[r], batched[r], batched[r] / alone[r]);
            }
        }
    }
}
