package io.fdkvc.engine.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import io.fdkvc.core.cache.StreamSnapshot;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.sampling.Sampler;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Transcript continuity, rollback and state export on the real stories260K model. */
class ConversationTest {
    static LoadedModel model;
    static Llama llama;
    static Tokenizer tok;
    static ChatFormat format;

    static final List<String> USERS = List.of("Once upon a time there was a cat.", "What did the cat do?",
            "Tell me about the dog.", "Where did they go?", "The end.");

    @BeforeAll
    static void load() {
        Path dir = Path.of(System.getProperty("fdkvc.shared"), "models", "stories260K");
        model = GgufModelLoader.load(dir.resolve("stories260K.gguf"));
        llama = new Llama(model.config(), model.weights(), 32, 1);
        tok = Tokenizers.from(model.vocabulary());
        format = new ChatFormat(ChatTemplate.detect(null, model.vocabulary()), tok);
    }

    @AfterAll
    static void close() {
        llama.close();
        model.close();
    }

    static Conversation conversation(String policy, int budget, int maxTurnTokens) {
        PolicySpec spec = PolicyRegistry.spec(policy, budget);
        return new Conversation(new Session(llama, llama.newCache(spec, maxTurnTokens, PositionMode.CACHE)), format);
    }

    /** Runs one request to its end and commits it; returns the reply. */
    static Reply turn(Conversation c, List<Message> request, int maxTokens) {
        Reply r = c.begin(request, GenerationParams.greedy(maxTokens), null);
        r.runToEnd();
        r.commit();
        return r;
    }

    /**
     * The reference: what {@code fdkvc chat} does, written out independently with the template's
     * incremental API on a plain session (BOS + firstTurn, then nextTurn per line; a stop token
     * is not fed, the last token is appended without logits).
     */
    static List<String> chatReference(List<String> users, int maxTokens, String policy, int budget, int maxTurnTokens) {
        ChatTemplate tpl = format.template();
        Session s = new Session(llama, llama.newCache(PolicyRegistry.spec(policy, budget), maxTurnTokens, PositionMode.CACHE));
        Sampler greedy = Sampler.greedy(model.config().vocabSize());
        int[] stops = tpl.stopTokens(tok);
        List<String> replies = new ArrayList<>();
        for (int u = 0; u < users.size(); u++) {
            int[] text = tok.encodeWithSpecials(u == 0 ? tpl.firstTurn(null, users.get(u)) : tpl.nextTurn(users.get(u)), u == 0);
            int[] prompt = text;
            if (u == 0 && tpl.addBos()) {
                prompt = new int[text.length + 1];
                prompt[0] = tok.bos();
                System.arraycopy(text, 0, prompt, 1, text.length);
            }
            float[] logits = s.feed(prompt, 0, prompt.length);
            ReplyText rt = new ReplyText(tok.decoder(false), tpl.stopStrings());
            StringBuilder out = new StringBuilder();
            for (int n = 0; n < maxTokens; ) {
                int next = greedy.sample(logits);
                if (contains(stops, next)) break;
                n++;
                out.append(rt.add(next));
                if (rt.stopped() || n == maxTokens) {
                    s.append(next);
                    break;
                }
                logits = s.feed(next);
            }
            out.append(rt.finish());
            s.endTurn();
            replies.add(out.toString().strip());
        }
        return replies;
    }

    static boolean contains(int[] a, int v) {
        for (int x : a) if (x == v) return true;
        return false;
    }

    static List<Message> history(List<String> users, List<String> replies, int upTo) {
        List<Message> m = new ArrayList<>();
        for (int i = 0; i <= upTo; i++) {
            m.add(Message.user(users.get(i)));
            if (i < upTo) m.add(Message.assistant(replies.get(i)));
        }
        return m;
    }

    @Test
    void continuedRequestsFeedOnlyTheNewMessagesAndReplyAsChatDoes() {
        List<String> expected = chatReference(USERS, 24, "fdkvc", 48, 32);
        Conversation c = conversation("fdkvc", 48, 32);
        List<String> replies = new ArrayList<>();
        for (int u = 0; u < USERS.size(); u++) {
            int before = c.tokenCount();
            List<Message> request = history(USERS, replies, u);
            int[] extension = format.extension(request, u == 0 ? 0 : 2 * u);
            Reply r = c.begin(request, GenerationParams.greedy(24), null);
            assertThat(r.cachedTokens()).isEqualTo(before);
            assertThat(r.prefillRemaining()).isEqualTo(extension.length);
            r.runToEnd();
            r.commit();
            replies.add(r.content());
            // the transcript is the prompt tokens plus every fed reply token: the cache's position
            assertThat(c.tokenCount()).isEqualTo(c.cache().nextPosition());
            assertThat(c.cache().maxEntries()).isLessThanOrEqualTo(48);
        }
        assertThat(replies).isEqualTo(expected);
        assertThat(c.turns()).isEqualTo(USERS.size());
    }

    @Test
    void aRequestThatDoesNotContinueTheTranscriptIsRefused() {
        Conversation c = conversation("window", 64, 32);
        Reply first = turn(c, List.of(Message.user("Hi.")), 8);
        List<Message> edited = List.of(Message.user("Hello."), Message.assistant(first.content()), Message.user("Again."));
        assertThat(c.continuedBy(edited)).isFalse();
        assertThatThrownBy(() -> c.begin(edited, GenerationParams.greedy(4), null)).isInstanceOf(InputException.class)
                .hasMessageContaining("do not continue");
        // the reply may come back trimmed by the client
        List<Message> trimmed = List.of(Message.user("Hi."), Message.assistant("  " + first.content() + "\n"), Message.user("Again."));
        assertThat(c.continuedBy(trimmed)).isTrue();
        assertThatThrownBy(() -> c.begin(List.of(Message.assistant("x")), GenerationParams.greedy(4), null))
                .hasMessageContaining("messages[0].role: expected user, got assistant");
        assertThatThrownBy(() -> c.begin(List.of(Message.user("a"), Message.assistant("b")), GenerationParams.greedy(4), null))
                .hasMessageContaining("the last message must be from the user");
    }

    /**
     * A request cancelled midway leaves no trace: the next request gets the reply a conversation
     * that never saw the cancelled one gives, and the cache is bit for bit the same. With a turn
     * headroom of 8 tokens the cancelled request runs policy updates (the snapshot path); with 256
     * it does not (the discard path).
     */
    @Test
    void rollbackLeavesTheConversationAsBefore() {
        for (int headroom : new int[] {8, 256}) {
            Conversation a = conversation("fdkvc", 40, headroom), b = conversation("fdkvc", 40, headroom);
            Reply ra = turn(a, history(USERS, List.of(), 0), 12);
            turn(b, history(USERS, List.of(), 0), 12);
            KvCache.Snapshot before = a.cache().snapshot();

            List<Message> second = history(USERS, List.of(ra.content()), 1);
            Reply cancelled = a.begin(second, GenerationParams.greedy(30), null);
            int steps = 0;
            while (!cancelled.done() && steps < 20) {
                if (cancelled.prefilling()) cancelled.prefill(3);
                else cancelled.decodeAlone();
                steps++;
            }
            cancelled.cancel();
            cancelled.rollback();
            assertSameCache(a.cache().snapshot(), before);
            assertThat(a.turns()).isEqualTo(1);
            assertThat(a.tokenCount()).isEqualTo(b.tokenCount());

            Reply again = turn(a, second, 16), reference = turn(b, second, 16);
            assertThat(again.content()).isEqualTo(reference.content());
            assertSameCache(a.cache().snapshot(), b.cache().snapshot());
        }
    }

    @Test
    void aRestoredStateContinuesLikeTheOriginal() {
        for (String policy : List.of("fdkvc", "h2o", "random")) {
            Conversation a = conversation(policy, 40, 16);
            List<String> replies = new ArrayList<>();
            for (int u = 0; u < 3; u++) replies.add(turn(a, history(USERS, replies, u), 16).content());
            Conversation b = conversation(policy, 40, 16);
            b.restore(a.state());
            assertThat(b.messages()).isEqualTo(a.messages());
            List<Message> next = history(USERS, replies, 3);
            assertThat(turn(b, next, 16).content()).isEqualTo(turn(a, next, 16).content());
            assertSameCache(a.cache().snapshot(), b.cache().snapshot());
        }
    }

    @Test
    void restoreRefusesAnotherPolicy() {
        Conversation a = conversation("fdkvc", 40, 16);
        turn(a, history(USERS, List.of(), 0), 8);
        Conversation b = conversation("h2o", 40, 16);
        assertThatThrownBy(() -> b.restore(a.state())).hasMessageContaining("policy fdkvc/40 restored into h2o/40");
    }

    static void assertSameCache(KvCache.Snapshot x, KvCache.Snapshot y) {
        assertThat(x.nextPosition()).isEqualTo(y.nextPosition());
        assertThat(x.updates()).isEqualTo(y.updates());
        for (int i = 0; i < x.streams().length; i++) {
            StreamSnapshot s = x.streams()[i], t = y.streams()[i];
            assertThat(s.positions()).containsExactly(t.positions());
            assertThat(s.keys()).containsExactly(t.keys());
            assertThat(s.values()).containsExactly(t.values());
            assertThat(s.c()).containsExactly(t.c());
            assertThat(s.rho()).containsExactly(t.rho());
            assertThat(s.h()).containsExactly(t.h());
            assertThat(s.logitBias()).containsExactly(t.logitBias());
            assertThat(x.policyStates()[i]).containsExactly(y.policyStates()[i]);
        }
    }
}
