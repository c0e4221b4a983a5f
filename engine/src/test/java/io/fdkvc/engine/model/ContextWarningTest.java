package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.session.Session;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Past the trained context the engine warns once per conversation, and only then; the RoPE
 * tables do not follow the declared context (a model declaring a 268M-token context loads and
 * runs, and its tables stay at what the conversation uses).
 */
class ContextWarningTest {
    static LlamaConfig config(int context) {
        return new LlamaConfig("llama", 32, 48, 1, 4, 2, 8, 50, context, 1e-5f, 10000f, "none", 1f, 0, false, true);
    }

    @Test
    void originalPositionsWarnOnceWhenPastTheTrainedContext() {
        LlamaConfig c = config(24);
        List<String> warned = new ArrayList<>();
        try (Llama llama = new Llama(c, NaiveLlama.randomWeights(c, 1, false), 4, 1)) {
            llama.onWarning(warned::add);
            KvCache cache = llama.newCache(PolicyRegistry.spec("window", 8), 4, PositionMode.ORIGINAL);
            Session s = new Session(llama, cache);
            for (int i = 0; i < 24; i++) {
                s.feed(i % 50);
                if (s.turnTokens() == 4) s.endTurn();
            }
            assertThat(warned).isEmpty(); // positions 0..23
            s.feed(1);                     // position 24: past a context of 24
            s.endTurn();
            for (int i = 0; i < 40; i++) s.feed(i % 50);
            assertThat(warned).hasSize(1);
            assertThat(warned.get(0)).contains("position 24").contains("trained context of 24").contains("--positions original");
            // a new conversation may warn again
            s.reset();
            for (int i = 0; i < 25; i++) {
                s.feed(i % 50);
                if (s.turnTokens() == 4) s.endTurn();
            }
            assertThat(warned).hasSize(2);
        }
    }

    @Test
    void cachePositionsWarnOnlyWhenTheCacheItselfOutgrowsTheContext() {
        LlamaConfig c = config(24);
        List<String> warned = new ArrayList<>();
        try (Llama llama = new Llama(c, NaiveLlama.randomWeights(c, 1, false), 4, 1)) {
            llama.onWarning(warned::add);
            // bounded: 8 + 4 slots at most, far below 24, for 200 tokens
            Session bounded = new Session(llama, llama.newCache(PolicyRegistry.spec("window", 8), 4, PositionMode.CACHE));
            for (int i = 0; i < 200; i++) {
                bounded.feed(i % 50);
                if (bounded.turnTokens() == 4) bounded.endTurn();
            }
            assertThat(warned).isEmpty();
            Session full = new Session(llama, llama.newCache(PolicyRegistry.spec("full", 8), 4, PositionMode.CACHE));
            for (int i = 0; i < 30; i++) {
                full.feed(i % 50);
                if (full.turnTokens() == 4) full.endTurn();
            }
            assertThat(warned).hasSize(1);
            assertThat(warned.get(0)).contains("holds 25 entries").contains("policy full");
        }
    }

    /** A declared context of 2^28 tokens: the old eager table (1 GiB per 2^26 positions at this head size) would not fit. */
    @Test
    void ropeTablesFollowTheConversationNotTheDeclaredContext() {
        LlamaConfig c = config(1 << 28);
        try (Llama llama = new Llama(c, NaiveLlama.randomWeights(c, 1, false), 4, 1)) {
            Session s = new Session(llama, llama.newCache(PolicyRegistry.spec("window", 8), 4, PositionMode.CACHE));
            for (int i = 0; i < 40; i++) {
                s.feed(i % 50);
                if (s.turnTokens() == 4) s.endTurn();
            }
            // slots below 8 + 4: the table holds its initial 16 positions
            assertThat(llama.ropeTableBytes()).isLessThan(4096);
        }
    }
}
