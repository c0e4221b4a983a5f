package io.fdkvc.server;

import static io.fdkvc.server.Http.get;
import static io.fdkvc.server.Http.json;
import static io.fdkvc.server.Http.post;
import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.engine.chat.Conversation;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.JedisPooled;
import tools.jackson.databind.JsonNode;

/**
 * The Redis session store against a real {@code redis-server}: servers in this JVM sharing one
 * Redis (each with its own connections, leases and memory), the fence at the store's level,
 * values that are not sessions, Redis killed and restarted mid-conversation, paging and delete.
 * Failover between server processes behind HAProxy is the cli module's {@code ScaleOutTest}.
 */
class RedisStoreTest {
    static final String POLICY = "fdkvc";
    static final int BUDGET = 40, TURN_TOKENS = 16, MAX_TOKENS = 10;

    @TempDir
    static Path tmp;
    static RedisServer redis;
    static JedisPooled jedis;
    static List<String> expected; // an uninterrupted server's replies to SessionsTest.USERS
    static SessionCodec codec; // this model's, set by the first store(...)

    @BeforeAll
    static void start() throws Exception {
        redis = new RedisServer(tmp.resolve("redis"));
        jedis = new JedisPooled("127.0.0.1", redis.port);
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), POLICY, BUDGET, TURN_TOKENS)) {
            expected = SessionsTest.converse(s.base(), SessionsTest.USERS.length, MAX_TOKENS);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (jedis != null) jedis.close();
        if (redis != null) redis.close();
    }

    @BeforeEach
    void empty() {
        jedis.flushAll();
    }

    static TestServers.Running server(int leaseSeconds) throws Exception {
        return TestServers.start(TestServers.shared(TestServers.options(8, null, null, 4, 8), redis.url(), leaseSeconds), POLICY, BUDGET,
                TURN_TOKENS);
    }

    /** Sends the client's history plus {@code user}; on anything but 200 the history is left as it was. */
    static HttpResponse<String> attempt(SessionsTest.Client c, String user) {
        c.history.add(new String[] {"user", user});
        String body = c.body(MAX_TOKENS, false);
        HttpResponse<String> r = c.sessionHeader == null ? post(c.base + "/v1/chat/completions", body)
                : post(c.base + "/v1/chat/completions", body, "X-Session-Id", c.sessionHeader);
        if (r.statusCode() != 200) {
            c.history.removeLast();
            return r;
        }
        c.last = json(r);
        c.lastSessionId = r.headers().firstValue("X-Session-Id").orElseThrow();
        c.history.add(new String[] {"assistant", c.last.get("choices").get(0).get("message").get("content").asString()});
        return r;
    }

    static int cached(SessionsTest.Client c) {
        return c.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt();
    }

    static List<String> replies(SessionsTest.Client c) {
        List<String> out = new ArrayList<>();
        for (String[] m : c.history) if (m[0].equals("assistant")) out.add(m[1]);
        return out;
    }

    @Test
    void anyServerContinuesAConversationWithOrWithoutItsId() throws Exception {
        try (var a = server(10); var b = server(10)) {
            for (String header : new String[] {null, "named-1"}) {
                jedis.flushAll(); // the two conversations have the same transcripts: one at a time
                SessionsTest.Client c = new SessionsTest.Client(a.base(), header);
                for (int k = 0; k < SessionsTest.USERS.length; k++) {
                    // every turn on the other server: each finds the session in Redis, its cache restored
                    SessionsTest.Client here = new SessionsTest.Client(k % 2 == 0 ? a.base() : b.base(), header);
                    here.history.addAll(c.history);
                    assertThat(attempt(here, SessionsTest.USERS[k]).statusCode()).isEqualTo(200);
                    if (k > 0) {
                        assertThat(cached(here)).as("turn %d on the other server", k + 1).isPositive();
                        assertThat(here.lastSessionId).isEqualTo(c.lastSessionId);
                    }
                    c.history.clear();
                    c.history.addAll(here.history);
                    c.lastSessionId = here.lastSessionId;
                }
                assertThat(replies(c)).as("header %s", header).isEqualTo(expected);
                JsonNode s = json(get(b.base() + "/v1/sessions/" + c.lastSessionId));
                assertThat(s.get("turns").asInt()).isEqualTo(SessionsTest.USERS.length);
                assertThat(s.get("policy").asString()).isEqualTo(POLICY);
            }
            // a answered turns 1, 3 and 5 of both conversations
            assertThat(get(a.base() + "/metrics").body()).contains("fdkvc_session_store_writes_total 6");
        }
    }

    /** A store of its own (another server's connections and owner) on the test's Redis. */
    static RedisStore store(TestServers.Running s, String modelFingerprint) {
        ServedModel m = s.server().servedModel();
        if (codec == null) codec = new SessionCodec(m.modelFingerprint(), m.cacheFingerprint(), m.policy());
        return new RedisStore(redis.url(), Map.of(), new SessionCodec(modelFingerprint == null ? m.modelFingerprint() : modelFingerprint,
                m.cacheFingerprint(), m.policy()), 2);
    }


    @Test
    void aStaleWriteIsRefusedAndTheLeaseFencesOtherServers() throws Exception {
        try (var s = server(10); RedisStore a = store(s, null); RedisStore b = store(s, null)) {
            SessionsTest.Client c = new SessionsTest.Client(s.base(), "fenced");
            c.say(SessionsTest.USERS[0], MAX_TOKENS);
            SessionStore.Stored one = a.read("fenced");
            assertThat(one.version()).isEqualTo(1);
            c.say(SessionsTest.USERS[1], MAX_TOKENS);
            Conversation.State two = a.read("fenced").state();
            String fp = SessionManager.fingerprint(two.messages(), two.messages().size());
            // a server that read version 1 and wakes up after version 2 was stored: refused, version 2 stays
            assertThat(a.lease("fenced").version()).isEqualTo(2);
            assertThatFenced(() -> a.write("fenced", one.policy(), 0, one.state(), 1, fp), "stored at write 2");
            assertThat(a.read("fenced").state().messages()).isEqualTo(two.messages());
            // while a holds the lease, b can neither lease nor write, even at the current version
            SharedSessionStore.Lease l = b.lease("fenced");
            assertThat(l.granted()).isFalse();
            assertThat(l.retryAfterMs()).isBetween(1L, 2000L);
            assertThatFenced(() -> b.write("fenced", one.policy(), 0, two, 2, fp), "leased by another server");
            // the server's own request gets 409 with Retry-After, and nothing changes
            HttpResponse<String> r = attempt(c, SessionsTest.USERS[2]);
            assertThat(r.statusCode()).isEqualTo(409);
            assertThat(r.headers().firstValue("Retry-After")).isPresent();
            assertThat(json(r).get("error").get("code").asString()).isEqualTo("session_leased");
            a.unlease("fenced");
            assertThat(attempt(c, SessionsTest.USERS[2]).statusCode()).isEqualTo(200);
            assertThat(replies(c)).isEqualTo(expected.subList(0, 3));
            assertThat(a.read("fenced").version()).isEqualTo(3);
            assertThat(get(s.base() + "/metrics").body()).contains("fdkvc_session_lease_conflicts_total 1");
        }
    }

    interface Write {
        void run() throws Exception;
    }

    static void assertThatFenced(Write w, String why) {
        try {
            w.run();
            throw new AssertionError("the write went through");
        } catch (SharedSessionStore.Fenced f) {
            assertThat(f.getMessage()).contains(why);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void twoServersRacingOnOneSessionNeverBothCommitAWrite() throws Exception {
        try (var s = server(10); RedisStore a = store(s, null); RedisStore b = store(s, null)) {
            new SessionsTest.Client(s.base(), "raced").say(SessionsTest.USERS[0], MAX_TOKENS);
            SessionStore.Stored base = a.read("raced");
            String fp = SessionManager.fingerprint(base.state().messages(), base.state().messages().size());
            ConcurrentLinkedQueue<Long> committed = new ConcurrentLinkedQueue<>();
            AtomicInteger refused = new AtomicInteger();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (RedisStore st : List.of(a, b, a, b)) {
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                        for (int i = 0; i < 40; i++) {
                            // each server writes the version its lease reported, or (half the time) the one it read before
                            SharedSessionStore.Lease l = st.lease("raced");
                            long v = l.granted() && i % 2 == 0 ? l.version() : base.version();
                            try {
                                committed.add(st.write("raced", base.policy(), 0, base.state(), v, fp).version());
                            } catch (SharedSessionStore.Fenced f) {
                                refused.incrementAndGet();
                            }
                            if (l.granted()) st.unlease("raced");
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            go.countDown();
            for (Thread t : threads) t.join();
            Set<Long> distinct = new HashSet<>(committed);
            assertThat(distinct).as("no version committed twice").hasSize(committed.size());
            long last = a.read("raced").version();
            assertThat(last).isEqualTo(base.version() + committed.size());
            assertThat(committed.size() + refused.get()).isEqualTo(160);
            assertThat(refused.get()).isPositive();
        }
    }

    @Test
    void badValuesAreRefusedWithTheReasonAndTheIdStartsOver() throws Exception {
        try (var s = server(10); RedisStore mineStore = store(s, null); RedisStore other = store(s, "another-model")) {
            new SessionsTest.Client(s.base(), "good").say(SessionsTest.USERS[0], MAX_TOKENS);
            byte[] good = jedis.hget("fdkvc:session:good".getBytes(), "data".getBytes());
            byte[] flipped = good.clone();
            flipped[flipped.length / 2] ^= 1;
            putValue("truncated", java.util.Arrays.copyOf(good, good.length / 2));
            putValue("flipped", flipped);
            putValue("notmagic", "hello".repeat(10).getBytes());
            jedis.rpush("fdkvc:session:alist", "x");
            jedis.hset("fdkvc:session:nodata", "version", "3");
            other.lease("foreign");
            SessionStore.Stored mine = read("good");
            other.write("foreign", mine.policy(), 0, mine.state(), 0, "fp-foreign");
            other.unlease("foreign");
            Map<String, String> why = Map.of("truncated", "CRC mismatch", "flipped", "CRC mismatch", "notmagic", "not an fdkvc session",
                    "alist", "not a session (a Redis list", "nodata", "lacks data", "foreign", "written for another model");
            for (var e : why.entrySet()) {
                SessionsTest.Client c = new SessionsTest.Client(s.base(), e.getKey());
                HttpResponse<String> r = attempt(c, SessionsTest.USERS[0]);
                assertThat(r.statusCode()).as(e.getKey()).isEqualTo(409);
                JsonNode err = json(r).get("error");
                assertThat(err.get("code").asString()).isEqualTo("session_unusable");
                assertThat(err.get("message").asString()).as(e.getKey()).contains(e.getValue());
                assertThat(get(s.base() + "/health").statusCode()).isEqualTo(200);
                // reported once: the next request starts the conversation over and replaces the value
                assertThat(attempt(c, SessionsTest.USERS[0]).statusCode()).as(e.getKey()).isEqualTo(200);
                assertThat(replies(c)).isEqualTo(expected.subList(0, 1));
                assertThat(read(e.getKey()).turns()).isEqualTo(1);
            }
        }
    }

    /** What the store holds for {@code id}, read by a store of this model. */
    static SessionStore.Stored read(String id) throws Exception {
        try (RedisStore r = new RedisStore(redis.url(), Map.of(), codec, 2)) {
            return r.read(id);
        }
    }

    static void putValue(String id, byte[] data) {
        jedis.hset(("fdkvc:session:" + id).getBytes(), Map.of("version".getBytes(), "1".getBytes(), "data".getBytes(), data));
        jedis.zadd("fdkvc:sessions", 0, id);
    }

    @Test
    void redisKilledMidConversationFailsTheTurnWith503AndLosesNothing() throws Exception {
        try (var s = server(10)) {
            SessionsTest.Client c = new SessionsTest.Client(s.base(), null);
            c.say(SessionsTest.USERS[0], MAX_TOKENS);
            c.say(SessionsTest.USERS[1], MAX_TOKENS);
            redis.kill();
            try {
                HttpResponse<String> r = attempt(c, SessionsTest.USERS[2]);
                assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
                assertThat(json(r).get("error").get("code").asString()).isEqualTo("store_unavailable");
                HttpResponse<String> health = get(s.base() + "/health");
                assertThat(health.statusCode()).isEqualTo(503);
                assertThat(json(health).get("status").asString()).isEqualTo("store_unavailable");
            } finally {
                redis.start();
            }
            assertThat(get(s.base() + "/health").statusCode()).isEqualTo(200);
            // the same turn again, then on: what an uninterrupted server answers, the cache continued
            assertThat(attempt(c, SessionsTest.USERS[2]).statusCode()).isEqualTo(200);
            assertThat(cached(c)).isPositive();
            assertThat(attempt(c, SessionsTest.USERS[3]).statusCode()).isEqualTo(200);
            assertThat(replies(c)).isEqualTo(expected.subList(0, 4));
        }
    }

    @Test
    void sessionsAreListedInPagesFromTheStoreAndDeletedEverywhere() throws Exception {
        try (var a = server(10); var b = server(10)) {
            Set<String> ids = new HashSet<>();
            for (int i = 0; i < 5; i++) {
                SessionsTest.Client c = new SessionsTest.Client(a.base(), "page-" + i);
                c.say(SessionsTest.USERS[0], MAX_TOKENS);
                ids.add(c.lastSessionId);
            }
            List<String> seen = new ArrayList<>();
            String after = "";
            boolean more = true;
            while (more) {
                JsonNode page = json(get(b.base() + "/v1/sessions?limit=2&after=" + after));
                assertThat(page.get("data").size()).isLessThanOrEqualTo(2);
                for (JsonNode e : page.get("data")) {
                    seen.add(e.get("id").asString());
                    assertThat(e.get("turns").asInt()).isEqualTo(1);
                    assertThat(e.get("live").asBoolean()).isFalse(); // b has never held it in memory
                }
                more = page.get("has_more").asBoolean();
                after = page.get("last_id").asString();
            }
            assertThat(seen).containsExactly("page-0", "page-1", "page-2", "page-3", "page-4");
            // deleted through b while a holds it in memory: a's next request for it starts over
            assertThat(Http.send("DELETE", b.base() + "/v1/sessions/page-0", null).statusCode()).isEqualTo(200);
            assertThat(get(a.base() + "/v1/sessions/page-0").statusCode()).isEqualTo(404);
            assertThat(Http.send("DELETE", a.base() + "/v1/sessions/page-0", null).statusCode()).isEqualTo(404);
            SessionsTest.Client again = new SessionsTest.Client(a.base(), "page-0");
            again.say(SessionsTest.USERS[0], MAX_TOKENS);
            assertThat(cached(again)).isZero();
            assertThat(json(get(b.base() + "/v1/sessions/page-0")).get("turns").asInt()).isEqualTo(1);
            assertThat(json(get(a.base() + "/v1/sessions?limit=1000")).get("data").size()).isEqualTo(5);
        }
    }
}
