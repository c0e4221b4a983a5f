package io.fdkvc.engine.chat;

import static io.fdkvc.engine.chat.ConversationTest.conversation;
import static io.fdkvc.engine.chat.ConversationTest.turn;
import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.engine.template.ChatTemplate.Message;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Decode steps of several conversations batched into one pass over the weights give each
 * conversation the greedy reply it gets alone (stories260K), also when the replies end at
 * different steps and when a turn's headroom runs out mid-reply (the policy runs per
 * conversation).
 */
class DecodeBatchTest {
    @org.junit.jupiter.api.BeforeAll
    static void load() {
        ConversationTest.load();
    }

    @org.junit.jupiter.api.AfterAll
    static void close() {
        ConversationTest.close();
    }


    static final List<String> PROMPTS = List.of("Once upon a time", "The dog ran to the park and", "Lily had a big red ball.",
            "Tom was sad because", "The sun was hot.");

    @Test
    void batchedGreedyRepliesEqualEachConversationAlone() {
        for (int headroom : new int[] {12, 128}) {
            List<String> alone = new ArrayList<>(), batched = new ArrayList<>();
            for (int i = 0; i < PROMPTS.size(); i++) {
                Conversation c = conversation("fdkvc", 32, headroom);
                // two turns: the second continues a conversation whose cache the policy has shaped
                Reply first = turn(c, List.of(Message.user(PROMPTS.get(i))), 10 + 3 * i);
                alone.add(first.content());
                alone.add(turn(c, List.of(Message.user(PROMPTS.get(i)), Message.assistant(first.content()),
                        Message.user("And then?")), 20 + 5 * i).content());
            }
            List<Conversation> cs = new ArrayList<>();
            for (int i = 0; i < PROMPTS.size(); i++) cs.add(conversation("fdkvc", 32, headroom));
            List<Reply> firsts = runBatched(cs, i -> List.of(Message.user(PROMPTS.get(i))), i -> 10 + 3 * i);
            List<Reply> seconds = runBatched(cs, i -> List.of(Message.user(PROMPTS.get(i)), Message.assistant(firsts.get(i).content()),
                    Message.user("And then?")), i -> 20 + 5 * i);
            for (int i = 0; i < PROMPTS.size(); i++) {
                batched.add(firsts.get(i).content());
                batched.add(seconds.get(i).content());
            }
            assertThat(batched).isEqualTo(alone);
        }
    }

    private static List<Reply> runBatched(List<Conversation> cs, java.util.function.IntFunction<List<Message>> request,
                                          java.util.function.IntUnaryOperator maxTokens) {
        DecodeBatch batch = new DecodeBatch(ConversationTest.llama);
        List<Reply> rs = new ArrayList<>();
        for (int i = 0; i < cs.size(); i++) {
            Reply r = cs.get(i).begin(request.apply(i), GenerationParams.greedy(maxTokens.applyAsInt(i)), null);
            while (r.prefilling()) r.prefill(5);
            rs.add(r);
        }
        int maxLive = 0;
        while (true) {
            List<Reply> live = new ArrayList<>();
            for (Reply r : rs) if (!r.done()) live.add(r);
            if (live.isEmpty()) break;
            maxLive = Math.max(maxLive, live.size());
            batch.step(live);
        }
        assertThat(maxLive).isGreaterThan(1);
        for (Reply r : rs) r.commit();
        return rs;
    }
}
