package io.fdkvc.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The scale-out deployment as an operator runs it: Redis, two {@code fdkvc serve} replicas
 * sharing it ({@code --session-store}) and HAProxy with {@code deploy/haproxy.cfg}, all real
 * processes. A replica killed with SIGKILL mid-conversation loses no turn: the other one
 * continues it from Redis with the replies of an uninterrupted single server (a third process
 * without a store), with and without {@code X-Session-Id}. A replica that stalls while answering
 * loses its lease to the other one, and its late write is refused.
 */
@DisabledOnOs(OS.WINDOWS)
class ScaleOutTest {
    static final JsonMapper JSON = JsonMapper.builder().build();
    static final int TURNS = 20, MAX_TOKENS = 8, LEASE_SECONDS = 2;
    static final String[] USERS = {"Once upon a time there was a cat.", "What did the cat do?", "Tell me about the dog.",
            "Where did they go?", "The end."};

    @TempDir
    static Path tmp;
    static ScaleOut.Redis redis;
    static ScaleOut.Replica[] replicas = new ScaleOut.Replica[2];
    static ScaleOut.Balancer haproxy;
    static List<String> expected = new ArrayList<>(); // the uninterrupted server's replies
    static final HttpClient HTTP = ScaleOut.client();

    @BeforeAll
    static void start() throws Exception {
        try (ScaleOut.Replica single = new ScaleOut.Replica(tmp.resolve("single"), null)) {
            Conversation c = new Conversation(single.base(), null);
            for (int k = 0; k < TURNS; k++) expected.add(c.say(k).reply);
        }
        redis = new ScaleOut.Redis(tmp.resolve("redis"));
        for (int i = 0; i < 2; i++) {
            replicas[i] = new ScaleOut.Replica(tmp.resolve("replica" + (i + 1)), redis.url(), "--session-lease", "" + LEASE_SECONDS);
        }
        haproxy = new ScaleOut.Balancer(tmp.resolve("haproxy"), replicas);
    }

    @AfterAll
    static void stop() throws Exception {
        for (ScaleOut.Child c : new ScaleOut.Child[] {haproxy, replicas[0], replicas[1], redis}) if (c != null) c.close();
    }

    /** One answered turn: the reply, the replica HAProxy sent it to, the usage. */
    record Turn(String reply, String replica, int cached, String sessionId) {}

    /** A client that resends the whole history every turn, as OpenAI clients do. */
    static final class Conversation {
        String base;
        final String sessionId;
        final List<String[]> history = new ArrayList<>();

        Conversation(String base, String sessionId) {
            this.base = base;
            this.sessionId = sessionId;
        }

        String body(int k, int maxTokens, boolean stream) {
            ObjectNode root = JSON.createObjectNode();
            root.put("temperature", 0);
            root.put("max_tokens", maxTokens);
            root.put("stream", stream);
            ArrayNode ms = root.putArray("messages");
            for (String[] m : history) ms.addObject().put("role", m[0]).put("content", m[1]);
            ms.addObject().put("role", "user").put("content", "Turn " + (k + 1) + ": " + USERS[k % USERS.length]);
            return JSON.writeValueAsString(root);
        }

        HttpRequest request(int k, int maxTokens, boolean stream) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions")).timeout(Duration.ofSeconds(120))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body(k, maxTokens, stream)));
            if (sessionId != null) b.header("X-Session-Id", sessionId);
            return b.build();
        }

        HttpResponse<String> attempt(int k) throws Exception {
            return HTTP.send(request(k, MAX_TOKENS, false), HttpResponse.BodyHandlers.ofString());
        }

        /** Turn {@code k} (0-based), which must be answered. */
        Turn say(int k) throws Exception {
            HttpResponse<String> r = attempt(k);
            assertThat(r.statusCode()).as("turn %d: %s", k + 1, r.body()).isEqualTo(200);
            return accept(k, r);
        }

        Turn accept(int k, HttpResponse<String> r) {
            JsonNode j = JSON.readTree(r.body());
            String reply = j.get("choices").get(0).get("message").get("content").asString();
            history.add(new String[] {"user", "Turn " + (k + 1) + ": " + USERS[k % USERS.length]});
            history.add(new String[] {"assistant", reply});
            return new Turn(reply, r.headers().firstValue("X-Fdkvc-Replica").orElse(null),
                    j.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt(), r.headers().firstValue("X-Session-Id").orElseThrow());
        }
    }

    static int index(String replicaName) {
        return Integer.parseInt(replicaName.substring("replica".length())) - 1;
    }

    /** Kills replica {@code i} (SIGKILL), runs {@code after}, then starts it again and waits until HAProxy sees it up. */
    static void withReplicaKilled(int i, ThrowingRunnable after) throws Exception {
        replicas[i].kill();
        try {
            after.run();
        } finally {
            replicas[i].start();
            haproxy.awaitUp(2);
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void aConversationSurvivesTheLossOfItsReplicaWithIdenticalReplies() throws Exception {
        Conversation c = new Conversation(haproxy.base(), "failover-with-id");
        List<String> replies = new ArrayList<>();
        String served = null;
        for (int k = 0; k < TURNS / 2; k++) {
            Turn t = c.say(k);
            replies.add(t.reply);
            if (served != null) assertThat(t.replica).as("affinity by X-Session-Id").isEqualTo(served);
            served = t.replica;
        }
        int killed = index(served);
        withReplicaKilled(killed, () -> {
            for (int k = TURNS / 2; k < TURNS; k++) {
                Turn t = c.say(k);
                assertThat(t.replica).isEqualTo("replica" + (2 - killed));
                if (k == TURNS / 2) assertThat(t.cached).as("the cache restored from Redis").isPositive();
                replies.add(t.reply);
            }
        });
        assertThat(replies).isEqualTo(expected);
    }

    @Test
    void aClientWithoutSessionIdIsRecognisedByTheSurvivingReplica() throws Exception {
        Conversation c = new Conversation(haproxy.base(), null);
        List<String> replies = new ArrayList<>();
        Turn last = null;
        for (int k = 0; k < TURNS / 2; k++) {
            last = c.say(k);
            replies.add(last.reply);
        }
        String id = last.sessionId;
        int killed = index(last.replica);
        withReplicaKilled(killed, () -> {
            for (int k = TURNS / 2; k < TURNS; k++) {
                Turn t = c.say(k);
                assertThat(t.replica).isEqualTo("replica" + (2 - killed));
                assertThat(t.sessionId).as("the same session, found by its transcript").isEqualTo(id);
                assertThat(t.cached).as("turn %d: prompt tokens not recomputed", k + 1).isPositive();
                replies.add(t.reply);
            }
        });
        assertThat(replies).isEqualTo(expected);
    }

    @Test
    void aStalledReplicaLosesItsLeaseItsLateWriteIsRefusedAndAKilledOnesLeaseExpires() throws Exception {
        ScaleOut.Replica a = replicas[0], b = replicas[1];
        Conversation onA = new Conversation(a.base(), "stalled");
        onA.say(0);
        onA.say(1);
        // turn 3 streamed on a, which stops (SIGSTOP) once its first piece of text is out: no renewal, no commit
        HttpResponse<InputStream> stream = HTTP.send(onA.request(2, 4000, true), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.statusCode()).isEqualTo(200);
        BufferedReader events = ScaleOut.lines(stream);
        for (String line; (line = events.readLine()) != null; ) if (line.contains("\"content\":\"") && !line.contains("\"content\":\"\"")) break;
        ScaleOut.signal(a.process, "STOP");
        String late;
        Conversation onB = new Conversation(b.base(), "stalled");
        onB.history.addAll(onA.history);
        try {
            HttpResponse<String> refused = onB.attempt(2);
            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);
            assertThat(refused.headers().firstValue("Retry-After")).isPresent();
            assertThat(JSON.readTree(refused.body()).get("error").get("code").asString()).isEqualTo("session_leased");
            // after the lease's time to live b takes the session over, from the last committed turn
            Turn t = retryUntilAnswered(onB, 2);
            assertThat(t.reply).isEqualTo(expected.get(2));
        } finally {
            ScaleOut.signal(a.process, "CONT");
        }
        StringBuilder rest = new StringBuilder();
        for (String line; (line = events.readLine()) != null; ) rest.append(line).append('\n');
        late = rest.toString();
        // a finishes its reply, but its write does not continue what is stored now: refused, reported in the stream
        assertThat(late).contains("session_fenced").contains("data: [DONE]");
        // a continues from what b stored
        Conversation again = new Conversation(a.base(), "stalled");
        again.history.addAll(onB.history);
        assertThat(again.say(3).reply).isEqualTo(expected.get(3));

        // a killed mid-reply: its lease expires and b takes over from the last committed turn
        HttpResponse<InputStream> dying = HTTP.send(again.request(4, 4000, true), HttpResponse.BodyHandlers.ofInputStream());
        BufferedReader dyingEvents = ScaleOut.lines(dying);
        for (String line; (line = dyingEvents.readLine()) != null; ) if (line.contains("\"content\":\"") && !line.contains("\"content\":\"\"")) break;
        withReplicaKilled(0, () -> {
            Conversation afterKill = new Conversation(b.base(), "stalled");
            afterKill.history.addAll(again.history);
            assertThat(afterKill.attempt(4).statusCode()).isEqualTo(409);
            assertThat(retryUntilAnswered(afterKill, 4).reply).isEqualTo(expected.get(4));
        });
    }

    /** Sends turn {@code k} until it is answered, as a client honouring Retry-After does (bounded). */
    static Turn retryUntilAnswered(Conversation c, int k) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10L * LEASE_SECONDS);
        while (true) {
            HttpResponse<String> r = c.attempt(k);
            if (r.statusCode() == 200) return c.accept(k, r);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
            assertThat(System.nanoTime()).as("still leased after %d s", 10 * LEASE_SECONDS).isLessThan(deadline);
            Thread.sleep(200);
        }
    }
}
