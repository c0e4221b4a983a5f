// Decode-only throughput of continuous batching, without HTTP and prefill: N conversations'
// decode steps as one pass (engine.chat.DecodeBatch) against the same conversations one at a
// time. Rounds of N=1 and N=k alternate so that a drifting machine load hits both alike.
//   java --add-modules=jdk.incubator.vector -cp cli/target/fdkvc.jar scripts/DecodeBatchBench.java smollm2-135m-q8 4 32 3 2 [WORDS BUDGET]
// args: synthetic shape, k, steps per round, rounds, threads; optionally words of history in each
// conversation's first message (default 0: a few tokens) and the fdkvc budget (default 128), so
// that decode runs at a depth comparable to llama-batched-bench's -npp
import io.fdkvc.cli.engine.SyntheticModels;
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
import io.fdkvc.engine.tokenizer.ChatTemplate;
import io.fdkvc.engine.tokenizer.ChatTemplate.Message;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.util.ArrayList;
import java.util.List;

void main(String[] args) {
    var model = SyntheticModels.model(args[0], null);
    int k = Integer.parseInt(args[1]), steps = Integer.parseInt(args[2]), rounds = Integer.parseInt(args[3]);
    int threads = Integer.parseInt(args[4]);
    int words = args.length > 5 ? Integer.parseInt(args[5]) : 0, budget = args.length > 6 ? Integer.parseInt(args[6]) : 128;
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
