package io.fdkvc.server;

import static io.fdkvc.server.Http.get;
import static io.fdkvc.server.Http.json;
import static io.fdkvc.server.Http.post;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** Session continuity, isolation, SSE framing, persistence, eviction to disk and back, cancellation, bounded memory. */
class SessionsTest {
    static final String[] USERS = {"Once upon a time there was a cat.", "What did the cat do?", "Tell me about the dog.",
            "Where did they go?", "The end."};

    /** A client conversation: keeps the history and sends all of it every time, as OpenAI clients do. */
    static final class Client {
        final String base;
        final List<String[]> history = new ArrayList<>();
        final String sessionHeader;
        String lastSessionId;
        JsonNode last;

        Client(String base, String sessionHeader) {
            this.base = base;
            this.sessionHeader = sessionHeader;
        }

        String say(String user, int maxTokens) {
            history.add(new String[] {"user", user});
            String body = body(maxTokens, false);
            HttpResponse<String> r = sessionHeader == null ? post(base + "/v1/chat/completions", body)
                    : post(base + "/v1/chat/completions", body, "X-Session-Id", sessionHeader);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            lastSessionId = r.headers().firstValue("X-Session-Id").orElseThrow();
            last = json(r);
            String reply = last.get("choices").get(0).get("message").get("content").asString();
            history.add(new String[] {"assistant", reply});
            return reply;
        }

        String body(int maxTokens, boolean stream) {
            ObjectNode root = Http.JSON.createObjectNode();
            root.put("temperature", 0);
            root.put("max_tokens", maxTokens);
            if (stream) {
                root.put("stream", true);
                root.putObject("stream_options").put("include_usage", true);
            }
            ArrayNode ms = root.putArray("messages");
            for (String[] m : history) ms.addObject().put("role", m[0]).put("content", m[1]);
            return Http.JSON.writeValueAsString(root);
        }
    }

    static List<String> converse(String base, int turns, int maxTokens) {
        Client c = new Client(base, null);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < turns; i++) out.add(c.say(USERS[i % USERS.length], maxTokens));
        return out;
    }

    @Test
    void aContinuedConversationFeedsOnlyNewMessagesAndReportsCachedTokens() throws Exception {
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "fdkvc", 48, 32)) {
            Client c = new Client(s.base(), null);
            c.say(USERS[0], 12);
            String id = c.lastSessionId;
            JsonNode u1 = c.last.get("usage");
            assertThat(u1.get("prompt_tokens_details").get("cached_tokens").asInt()).isZero();
            int transcript = u1.get("prompt_tokens").asInt() + u1.get("completion_tokens").asInt();
            c.say(USERS[1], 12);
            JsonNode u2 = c.last.get("usage");
            assertThat(c.lastSessionId).isEqualTo(id);
            // everything processed before (prompt and reply) is reused, not recomputed
            assertThat(u2.get("prompt_tokens_details").get("cached_tokens").asInt()).isEqualTo(transcript);
            assertThat(u2.get("prompt_tokens").asInt()).isGreaterThan(transcript);
            assertThat(u2.get("total_tokens").asInt()).isEqualTo(u2.get("prompt_tokens").asInt() + u2.get("completion_tokens").asInt());
            JsonNode session = json(get(s.base() + "/v1/sessions/" + id));
            assertThat(session.get("turns").asInt()).isEqualTo(2);
            assertThat(session.get("policy").asString()).isEqualTo("fdkvc");
            assertThat(session.get("budget").asInt()).isEqualTo(48);
            assertThat(session.get("largestStreamEntries").asInt()).isBetween(1, 48);
            assertThat(session.get("totalEntries").asLong()).isGreaterThanOrEqualTo(session.get("largestStreamEntries").asLong());
            assertThat(session.get("kvBytes").asLong()).isPositive();
            assertThat(session.has("evictions")).isTrue();
            // a rewritten history does not continue the session: a new one starts
            Client other = new Client(s.base(), null);
            other.history.addAll(List.of(new String[] {"user", USERS[0]}, new String[] {"assistant", "something else"}));
            other.say(USERS[1], 4);
            assertThat(other.lastSessionId).isNotEqualTo(id);
            assertThat(other.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isZero();
            // deleted sessions are gone
            assertThat(Http.send("DELETE", s.base() + "/v1/sessions/" + id, null).statusCode()).isEqualTo(200);
            assertThat(get(s.base() + "/v1/sessions/" + id).statusCode()).isEqualTo(404);
        }
    }

    /**
     * Two conversations interleaved on one server (and run concurrently) get the replies each
     * gets alone on a fresh server: one conversation's cache never sees another's tokens.
     */
    @Test
    void sessionsAreIsolated() throws Exception {
        List<String> alone;
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "fdkvc", 40, 16)) {
            alone = converse(s.base(), 4, 10);
        }
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "fdkvc", 40, 16)) {
            Client a = new Client(s.base(), null), b = new Client(s.base(), null);
            List<String> ra = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                b.say("A different story about number " + i + ".", 10);
                ra.add(a.say(USERS[i], 10));
            }
            assertThat(ra).isEqualTo(alone);
            assertThat(a.lastSessionId).isNotEqualTo(b.lastSessionId);
            // concurrently: the decode steps are batched
            List<Thread> ts = new ArrayList<>();
            List<List<String>> results = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int k = 0; k < 3; k++) {
                ts.add(Thread.ofVirtual().start(() -> results.add(converse(s.base(), 4, 10))));
            }
            for (Thread t : ts) t.join();
            assertThat(results).hasSize(3).allSatisfy(r -> assertThat(r).isEqualTo(alone));
        }
    }

    @Test
    void namedSessionsFollowTheHeader() throws Exception {
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "window", 40, 16)) {
            Client c = new Client(s.base(), "my-chat.1");
            c.say(USERS[0], 6);
            assertThat(c.lastSessionId).isEqualTo("my-chat.1");
            c.say(USERS[1], 6);
            assertThat(c.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isPositive();
            assertThat(json(get(s.base() + "/v1/sessions/my-chat.1")).get("turns").asInt()).isEqualTo(2);
            JsonNode list = json(get(s.base() + "/v1/sessions"));
            assertThat(list.get("data").size()).isEqualTo(1);
        }
    }

    /** SSE: data lines only, a role chunk, content deltas, a finish chunk with usage, then [DONE]; the text equals the non-streamed reply. */
    @Test
    void streamingFramesAsServerSentEvents() throws Exception {
        String expected;
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "fdkvc", 48, 32)) {
            expected = converse(s.base(), 1, 16).getFirst();
        }
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "fdkvc", 48, 32)) {
            Client c = new Client(s.base(), null);
            c.history.add(new String[] {"user", USERS[0]});
            HttpResponse<String> r = post(s.base() + "/v1/chat/completions", c.body(16, true));
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
            assertThat(r.headers().firstValue("X-Session-Id")).isPresent();
            String[] events = r.body().split("\n\n");
            assertThat(r.body()).endsWith("data: [DONE]\n\n");
            assertThat(events[events.length - 1]).isEqualTo("data: [DONE]");
            StringBuilder text = new StringBuilder();
            JsonNode first = Http.JSON.readTree(events[0].substring(6));
            assertThat(first.get("object").asString()).isEqualTo("chat.completion.chunk");
            assertThat(first.get("choices").get(0).get("delta").get("role").asString()).isEqualTo("assistant");
            for (int i = 0; i < events.length - 1; i++) {
                assertThat(events[i]).startsWith("data: ").doesNotContain("\n");
                JsonNode ch = Http.JSON.readTree(events[i].substring(6)).get("choices").get(0);
                JsonNode content = ch.get("delta").get("content");
                if (content != null) text.append(content.asString());
                if (i < events.length - 2) assertThat(ch.get("finish_reason").isNull()).isTrue();
            }
            JsonNode last = Http.JSON.readTree(events[events.length - 2].substring(6));
            assertThat(last.get("choices").get(0).get("finish_reason").asString()).isIn("stop", "length");
            assertThat(last.get("usage").get("completion_tokens").asInt()).isPositive();
            assertThat(text.toString()).isEqualTo(expected);
        }
    }

    /**
     * A client that disconnects mid-stream: the session then holds the whole reply or none of
     * it, and continuing gives what a server that never saw the cancelled request gives.
     */
    @Test
    void disconnectMidStreamLeavesWholeReplyOrNone() throws Exception {
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "fdkvc", 48, 16)) {
            Client c = new Client(s.base(), "cancel-me");
            String first = c.say(USERS[0], 8);
            c.history.add(new String[] {"user", USERS[1]});
            String body = c.body(400, true);
            s.server().scheduler().pause(true);
            HttpResponse<InputStream> r = Http.CLIENT.send(HttpRequest.newBuilder(URI.create(s.base() + "/v1/chat/completions"))
                    .header("X-Session-Id", "cancel-me").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8));
            assertThat(in.readLine()).startsWith("data: ");   // the role chunk, written before any token
            in.close();                                       // the client goes away
            s.server().scheduler().pause(false);
            // wait until the request is over (committed or rolled back)
            JsonNode session;
            do {
                Thread.sleep(10);
                session = json(get(s.base() + "/v1/sessions/cancel-me"));
            } while (session.get("busy").asBoolean());
            int turns = session.get("turns").asInt();
            assertThat(turns).isIn(1, 2);
            int messages = session.get("messages").asInt();
            assertThat(messages).isEqualTo(2 * turns);
            // continue from the first turn only: if the cancelled reply was rolled back, the session continues
            Client again = new Client(s.base(), "cancel-me");
            again.history.addAll(List.of(new String[] {"user", USERS[0]}, new String[] {"assistant", first}));
            String reply = again.say(USERS[1], 8);
            try (var fresh = TestServers.start(TestServers.options(8, null, null, 4, 8), "fdkvc", 48, 16)) {
                Client ref = new Client(fresh.base(), null);
                ref.say(USERS[0], 8);
                assertThat(reply).isEqualTo(ref.say(USERS[1], 8));
            }
            if (turns == 1) {
                // rolled back: the continuation reused the first turn
                assertThat(again.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isPositive();
            }
        }
    }

    /**
     * With one session in memory and a session directory, a second conversation pushes the first
     * to disk; its next request brings it back and gets the reply an uninterrupted server gives.
     */
    @Test
    void leastRecentlyUsedSessionsGoToDiskAndComeBack(@TempDir Path dir) throws Exception {
        List<String> expected;
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "fdkvc", 40, 16)) {
            expected = converse(s.base(), 3, 10);
        }
        try (var s = TestServers.start(TestServers.options(1, dir, null, 4, 8), "fdkvc", 40, 16)) {
            Client a = new Client(s.base(), null), b = new Client(s.base(), null);
            List<String> ra = new ArrayList<>();
            ra.add(a.say(USERS[0], 10));
            b.say("Another story.", 10);
            JsonNode sa = json(get(s.base() + "/v1/sessions/" + a.lastSessionId));
            assertThat(sa.get("live").asBoolean()).isFalse();
            ra.add(a.say(USERS[1], 10));
            assertThat(a.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isPositive();
            assertThat(json(get(s.base() + "/v1/sessions/" + a.lastSessionId)).get("live").asBoolean()).isTrue();
            assertThat(json(get(s.base() + "/v1/sessions/" + b.lastSessionId)).get("live").asBoolean()).isFalse();
            ra.add(a.say(USERS[2], 10));
            assertThat(ra).isEqualTo(expected);
            // file names are hashes, never the ids
            try (var files = Files.list(dir)) {
                assertThat(files.map(p -> p.getFileName().toString()).toList()).hasSize(2)
                        .allSatisfy(n -> assertThat(n).matches("[0-9a-f]{64}\\.session"));
            }
        }
    }

    /**
     * A stored session keeps its own policy under a server whose default is another; a store
     * written with another cache configuration (turn headroom) is refused with a clear error.
     */
    @Test
    void storedSessionsOfAnotherConfigurationAreRefused(@TempDir Path dir) throws Exception {
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), "fdkvc", 40, 16)) {
            new Client(s.base(), "kept").say(USERS[0], 6);
        }
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), "h2o", 40, 16)) {
            assertThat(json(get(s.base() + "/v1/sessions/kept")).get("policySpec").asString()).startsWith("fdkvc(budget=40");
        }
        java.io.ByteArrayOutputStream log = new java.io.ByteArrayOutputStream();
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), "h2o", 40, 32,
                new java.io.PrintStream(log, true, StandardCharsets.UTF_8))) {
            assertThat(log.toString(StandardCharsets.UTF_8)).contains("written with another cache configuration (maxTurnTokens=16")
                    .contains("this server: maxTurnTokens=32");
            Client c = new Client(s.base(), "kept");
            c.history.add(new String[] {"user", USERS[0]});
            HttpResponse<String> r = post(s.base() + "/v1/chat/completions", c.body(4, false), "X-Session-Id", "kept");
            ErrorsTest.assertError(r, 409, null, "another cache configuration");
            assertThat(json(get(s.base() + "/v1/sessions")).get("data").size()).isZero();
        }
        // a damaged file is refused too, not misread
        try (var files = Files.list(dir)) {
            Path f = files.findFirst().orElseThrow();
            byte[] b = Files.readAllBytes(f);
            b[b.length / 2] ^= 1;
            Files.write(f, b);
        }
        log.reset();
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), "fdkvc", 40, 16,
                new java.io.PrintStream(log, true, StandardCharsets.UTF_8))) {
            assertThat(log.toString(StandardCharsets.UTF_8)).contains("is damaged (CRC mismatch)");
        }
    }

    /** 200 turns: no stream ever holds more than the budget after a turn. */
    @Test
    void twoHundredTurnsStayWithinTheBudget() throws Exception {
        try (var s = TestServers.start(TestServers.options(4, null, null, 4, 8), "fdkvc", 64, 32)) {
            Client c = new Client(s.base(), null);
            String id = null;
            long evictions = 0;
            for (int t = 0; t < 200; t++) {
                c.say("Turn " + t + ": " + USERS[t % USERS.length], 6);
                if (id == null) id = c.lastSessionId;
                assertThat(c.lastSessionId).isEqualTo(id);
                JsonNode st = json(get(s.base() + "/v1/sessions/" + id));
                assertThat(st.get("turns").asInt()).isEqualTo(t + 1);
                assertThat(st.get("largestStreamEntries").asInt()).isLessThanOrEqualTo(64);
                evictions = st.get("evictions").asLong();
            }
            assertThat(evictions).isPositive();
            assertThat(c.last.get("usage").get("prompt_tokens").asInt()).isGreaterThan(64 * 20);
        }
    }

    /** A stop text ends the reply before it (finish_reason stop); a seed makes a sampled reply reproducible. */
    @Test
    void stopTextsAndSeeds() throws Exception {
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "fdkvc", 48, 32)) {
            String url = s.base() + "/v1/chat/completions";
            JsonNode plain = json(post(url, Http.chat(16, false, "user", USERS[0])));
            String full = plain.get("choices").get(0).get("message").get("content").asString();
            assertThat(full.length()).isGreaterThan(8);
            String stop = full.substring(5, 8);
            ObjectNode body = (ObjectNode) Http.JSON.readTree(Http.chat(16, false, "user", USERS[0]));
            body.putArray("stop").add(stop);
            JsonNode cut = json(post(url, Http.JSON.writeValueAsString(body)));
            assertThat(cut.get("choices").get(0).get("message").get("content").asString()).isEqualTo(full.substring(0, full.indexOf(stop)));
            assertThat(cut.get("choices").get(0).get("finish_reason").asString()).isEqualTo("stop");

            ObjectNode sampled = (ObjectNode) Http.JSON.readTree(Http.chat(16, false, "user", USERS[1]));
            sampled.put("temperature", 0.9);
            sampled.put("seed", 42);
            String a = json(post(url, Http.JSON.writeValueAsString(sampled))).get("choices").get(0).get("message").get("content").asString();
            String b = json(post(url, Http.JSON.writeValueAsString(sampled))).get("choices").get(0).get("message").get("content").asString();
            assertThat(b).isEqualTo(a);
        }
    }
}
