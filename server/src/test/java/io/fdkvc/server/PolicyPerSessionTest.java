package io.fdkvc.server;

import static io.fdkvc.server.Http.get;
import static io.fdkvc.server.Http.json;
import static io.fdkvc.server.Http.post;
import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A policy and budget per conversation (the {@code "fdkvc"} request extension), {@code GET
 * /v1/policies} and {@code GET /v1/sessions/{id}/cache}, on one server whose own policy is
 * {@code full} (so every policy may be chosen) with {@code --max-budget 64}.
 */
class PolicyPerSessionTest {
    static TestServers.Running server;
    static final int MAX_BUDGET = 64;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(new ChatServer.Options("127.0.0.1", 0, 8, null, null, 4, 8, 32, 64 * 1024, 0f, 1f, "strict", MAX_BUDGET),
                "full", 32, 64);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** A conversation under its own session id, sending its whole history with an extension on every request. */
    static final class Chat {
        final String base, id;
        final ObjectNode ext;
        final List<String[]> history = new ArrayList<>();
        JsonNode last;

        Chat(String base, String id, ObjectNode ext) {
            this.base = base;
            this.id = id;
            this.ext = ext;
        }

        HttpResponse<String> send(String user, int maxTokens) {
            history.add(new String[] {"user", user});
            ObjectNode root = Http.JSON.createObjectNode();
            root.put("temperature", 0);
            root.put("max_tokens", maxTokens);
            if (ext != null) root.set("fdkvc", ext);
            ArrayNode ms = root.putArray("messages");
            for (String[] m : history) ms.addObject().put("role", m[0]).put("content", m[1]);
            HttpResponse<String> r = post(base + "/v1/chat/completions", Http.JSON.writeValueAsString(root), "X-Session-Id", id);
            if (r.statusCode() == 200) {
                last = json(r);
                history.add(new String[] {"assistant", last.get("choices").get(0).get("message").get("content").asString()});
            } else {
                history.removeLast();
            }
            return r;
        }

        JsonNode say(String user, int maxTokens) {
            HttpResponse<String> r = send(user, maxTokens);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            return last;
        }

        JsonNode cache(String query) {
            HttpResponse<String> r = get(base + "/v1/sessions/" + id + "/cache" + query);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            return json(r);
        }

        JsonNode session() {
            return json(get(base + "/v1/sessions/" + id));
        }
    }

    static ObjectNode ext(String policy, Integer budget) {
        ObjectNode e = Http.JSON.createObjectNode();
        if (policy != null) e.put("policy", policy);
        if (budget != null) e.put("budget", budget);
        return e;
    }

    static void assertError(HttpResponse<String> r, int status, String param) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        JsonNode e = json(r).get("error");
        assertThat(e.get("param").asString()).as(r.body()).isEqualTo(param);
        assertThat(e.get("message").asString()).isNotBlank();
        assertThat(e.get("type").asString()).isEqualTo("invalid_request_error");
    }

    static HttpResponse<String> postRaw(String extJson) {
        String body = "{\"temperature\":0,\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"fdkvc\":" + extJson + "}";
        return post(server.base() + "/v1/chat/completions", body);
    }

    @Test
    void everyBadExtensionIs400NamingItsField() {
        int sessionsBefore = json(get(server.base() + "/v1/sessions")).get("data").size();
        assertError(postRaw("7"), 400, "fdkvc");
        assertError(postRaw("{\"colour\":\"red\"}"), 400, "fdkvc.colour");
        assertError(postRaw("{\"policy\":3}"), 400, "fdkvc.policy");
        assertError(postRaw("{\"policy\":\"lru-deluxe\"}"), 400, "fdkvc.policy");
        assertError(postRaw("{\"policy\":\"window\",\"budget\":0}"), 400, "fdkvc.budget");
        assertError(postRaw("{\"policy\":\"window\",\"budget\":2.5}"), 400, "fdkvc.budget");
        assertError(postRaw("{\"policy\":\"window\",\"budget\":\"16\"}"), 400, "fdkvc.budget");
        assertError(postRaw("{\"policy\":\"window\",\"budget\":" + (MAX_BUDGET + 1) + "}"), 400, "fdkvc.budget");
        assertError(postRaw("{\"policy\":\"fdkvc\",\"params\":[1]}"), 400, "fdkvc.params");
        assertError(postRaw("{\"policy\":\"fdkvc\",\"params\":{\"gamma\":\"high\"}}"), 400, "fdkvc.params.gamma");
        assertError(postRaw("{\"policy\":\"fdkvc\",\"params\":{\"gamma\":1.5}}"), 400, "fdkvc.params.gamma");
        assertError(postRaw("{\"policy\":\"window\",\"params\":{\"gamma\":0.9}}"), 400, "fdkvc.params.gamma");
        assertError(postRaw("{\"policy\":\"h2o-paper\",\"params\":{\"tau\":0.1}}"), 400, "fdkvc.params.tau");
        assertError(postRaw("{\"policy\":\"streaming\",\"budget\":4,\"params\":{\"sinks\":4}}"), 400, "fdkvc.params.sinks");
        // none of those left a session behind
        assertThat(json(get(server.base() + "/v1/sessions")).get("data")).hasSize(sessionsBefore);
        // a valid one passes, with an integral number accepted for a double parameter
        assertThat(postRaw("{\"policy\":\"fdkvc\",\"budget\":16,\"params\":{\"gamma\":1}}").statusCode()).isEqualTo(200);
    }

    @Test
    void aSessionKeepsItsPolicyForLifeAndReportsIt() {
        Chat c = new Chat(server.base(), "life", ext("window", 24));
        c.say("Once upon a time there was a cat.", 4);
        JsonNode s = c.session();
        assertThat(s.get("policy").asString()).isEqualTo("window");
        assertThat(s.get("budget").asInt()).isEqualTo(24);
        // the same choice again, and no choice at all, continue it
        c.say("What did the cat do?", 4);
        Chat plain = new Chat(server.base(), "life", null);
        plain.history.addAll(c.history);
        plain.say("Tell me about the dog.", 4);
        // another policy, or another budget, is a conflict and changes nothing
        for (ObjectNode other : List.of(ext("fdkvc", 24), ext("window", 32))) {
            Chat x = new Chat(server.base(), "life", other);
            x.history.addAll(plain.history);
            HttpResponse<String> r = x.send("Where did they go?", 4);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
            assertThat(json(r).get("error").get("param").asString()).isEqualTo("fdkvc");
        }
        JsonNode after = c.session();
        assertThat(after.get("turns").asInt()).isEqualTo(3);
        assertThat(after.get("policy").asString()).isEqualTo("window");
        // a new session without an extension runs the server's policy
        Chat d = new Chat(server.base(), "default-policy", null);
        d.say("Hello.", 2);
        assertThat(d.session().get("policy").asString()).isEqualTo("full");
        assertThat(d.session().get("budget").asInt()).isEqualTo(32);
    }

    /**
     * window keeps each stream's last {@code budget} positions, so its held counts and last-turn
     * evictions are known in closed form; full, in the same server on the same conversation,
     * keeps everything.
     */
    @Test
    void twoPoliciesInOneServerHoldWhatEachPromises() {
        int budget = 16;
        Chat w = new Chat(server.base(), "win", ext("window", budget));
        Chat f = new Chat(server.base(), "all", ext("full", null));
        int previousTotal = 0;
        for (String u : SessionsTest.USERS) {
            w.say(u, 6);
            f.say(u, 6);
            JsonNode cw = w.cache(""), cf = f.cache("");
            int n = cw.get("streams").asInt();
            assertThat(n).isEqualTo(cw.get("layers").asInt() * cw.get("kvHeads").asInt());
            int total = cw.get("totalTokens").asInt();
            for (JsonNode t : cw.get("tokens")) {
                int p = t.get("position").asInt();
                assertThat(t.get("held").asInt()).as("window position %d of %d", p, total).isEqualTo(p >= total - budget ? n : 0);
            }
            for (JsonNode t : cf.get("tokens")) assertThat(t.get("held").asInt()).isEqualTo(n);
            // evicted by this turn's update: what the window held before and no longer does
            List<Integer> expected = new ArrayList<>();
            for (int p = Math.max(0, previousTotal - budget); p < total - budget; p++) expected.add(p);
            List<Integer> got = new ArrayList<>();
            for (JsonNode e : cw.get("evictedLastTurn")) {
                got.add(e.get("position").asInt());
                assertThat(e.get("streams").asInt()).isEqualTo(n);
            }
            assertThat(got).isEqualTo(expected);
            assertThat(cf.get("evictedLastTurn")).isEmpty();
            previousTotal = total;
        }
        assertThat(w.session().get("largestStreamEntries").asInt()).isEqualTo(budget);
    }

    @Test
    void theCacheViewAgreesWithTheSessionAndTheTurns() {
        Chat c = new Chat(server.base(), "view", ext("fdkvc", 20));
        List<JsonNode> replies = new ArrayList<>();
        for (String u : SessionsTest.USERS) replies.add(c.say(u, 8));
        JsonNode v = c.cache("?layers=true");
        JsonNode s = c.session();
        int n = v.get("streams").asInt(), layers = v.get("layers").asInt(), kvHeads = v.get("kvHeads").asInt();
        int budget = v.get("budget").asInt();
        assertThat(budget).isEqualTo(20);
        assertThat(v.get("policy").asString()).isEqualTo("fdkvc");
        assertThat(v.get("totalTokens").asInt()).isEqualTo(s.get("tokens").asInt());
        assertThat(v.get("totalEntries").asLong()).isEqualTo(s.get("totalEntries").asLong());
        long sumHeld = 0;
        long[] perLayer = new long[layers];
        int[] userTokens = new int[replies.size() + 1], replyTokens = new int[replies.size() + 1];
        StringBuilder[] text = new StringBuilder[replies.size() + 1];
        for (int i = 0; i < text.length; i++) text[i] = new StringBuilder();
        for (JsonNode t : v.get("tokens")) {
            int held = t.get("held").asInt();
            assertThat(held).isBetween(0, n);
            sumHeld += held;
            int layerSum = 0;
            for (int k = 0; k < layers; k++) {
                int h = t.get("layers").get(k).asInt();
                assertThat(h).isBetween(0, kvHeads);
                layerSum += h;
                perLayer[k] += h;
            }
            assertThat(layerSum).isEqualTo(held);
            int turn = t.get("turn").asInt();
            assertThat(turn).isBetween(1, replies.size());
            if (t.get("role").asString().equals("user")) {
                userTokens[turn]++;
            } else {
                assertThat(t.get("role").asString()).isEqualTo("assistant");
                replyTokens[turn]++;
                text[turn].append(t.get("text").asString());
            }
        }
        assertThat(sumHeld).isEqualTo(s.get("totalEntries").asLong()).isLessThanOrEqualTo((long) n * budget);
        for (long l : perLayer) assertThat(l).isLessThanOrEqualTo((long) kvHeads * budget);
        for (int t = 1; t <= replies.size(); t++) {
            JsonNode r = replies.get(t - 1), u = r.get("usage");
            assertThat(userTokens[t]).isEqualTo(u.get("prompt_tokens").asInt() - u.get("prompt_tokens_details").get("cached_tokens").asInt());
            if (r.get("choices").get(0).get("finish_reason").asString().equals("length")) {
                assertThat(replyTokens[t]).isEqualTo(u.get("completion_tokens").asInt());
            }
            assertThat(text[t].toString().strip()).isEqualTo(r.get("choices").get(0).get("message").get("content").asString().strip());
        }
        // a window of the transcript
        JsonNode part = c.cache("?from=5&limit=7");
        assertThat(part.get("from").asInt()).isEqualTo(5);
        assertThat(part.get("count").asInt()).isEqualTo(7);
        assertThat(part.get("tokens")).hasSize(7);
        for (int i = 0; i < 7; i++) {
            JsonNode a = part.get("tokens").get(i), b = v.get("tokens").get(5 + i);
            assertThat(a.get("position").asInt()).isEqualTo(5 + i);
            assertThat(a.get("held").asInt()).isEqualTo(b.get("held").asInt());
            assertThat(a.get("turn").asInt()).isEqualTo(b.get("turn").asInt());
        }
        assertThat(c.cache("?from=100000").get("tokens")).isEmpty();
    }

    @Test
    void cacheBoundsAreRefusedCleanly() {
        Chat c = new Chat(server.base(), "bounds", null);
        c.say("Hi.", 2);
        String url = server.base() + "/v1/sessions/bounds/cache";
        assertError(get(url + "?limit=0"), 400, "limit");
        assertError(get(url + "?limit=" + (CacheView.MAX_LIMIT + 1)), 400, "limit");
        assertError(get(url + "?from=-1"), 400, "from");
        assertError(get(url + "?from=abc"), 400, "from");
        assertError(get(url + "?layers=maybe"), 400, "layers");
        HttpResponse<String> missing = get(server.base() + "/v1/sessions/nobody/cache");
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(json(missing).get("error").get("code").asString()).isEqualTo("not_found");
    }

    @Test
    void policiesListTheRegistryWithDefaultsAndRanges() {
        JsonNode root = json(get(server.base() + "/v1/policies"));
        assertThat(root.get("maxBudget").asInt()).isEqualTo(MAX_BUDGET);
        assertThat(root.get("default").get("policy").asString()).isEqualTo("full");
        List<String> names = new ArrayList<>();
        for (JsonNode p : root.get("data")) names.add(p.get("name").asString());
        assertThat(names).isEqualTo(PolicyRegistry.names());
        JsonNode fd = null, paper = null;
        for (JsonNode p : root.get("data")) {
            if (p.get("name").asString().equals("fdkvc")) fd = p;
            if (p.get("name").asString().equals("h2o-paper")) paper = p;
            assertThat(p.get("selectable").asBoolean()).isTrue(); // the server runs full: every policy may be chosen
            PolicyRegistry.Kind k = PolicyRegistry.kind(p.get("name").asString());
            assertThat(p.get("description").asString()).isEqualTo(k.description());
            assertThat(p.get("params")).hasSize(k.parameters().size());
        }
        JsonNode gamma = fd.get("params").get(0);
        assertThat(gamma.get("name").asString()).isEqualTo("gamma");
        assertThat(gamma.get("default").asDouble()).isEqualTo(0.85);
        assertThat(gamma.get("range").asString()).isEqualTo("(0,1]");
        assertThat(gamma.get("fixed").asBoolean()).isFalse();
        JsonNode tau = null;
        for (JsonNode q : paper.get("params")) if (q.get("name").asString().equals("tau")) tau = q;
        assertThat(tau.get("fixed").asBoolean()).isTrue();
        assertThat(tau.get("default").asDouble()).isEqualTo(0.0);
    }

    @Test
    void aBoundedServerRefusesAnUnboundedChoiceAndItsOwnBudgetAboveTheCap() throws Exception {
        try (var s = TestServers.start(TestServers.options(4, null, null, 2, 4), "window", 32, 16)) {
            String body = "{\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"fdkvc\":{\"policy\":\"full\"}}";
            assertError(post(s.base() + "/v1/chat/completions", body), 400, "fdkvc.policy");
            JsonNode full = null;
            for (JsonNode p : json(get(s.base() + "/v1/policies")).get("data")) if (p.get("name").asString().equals("full")) full = p;
            assertThat(full.get("selectable").asBoolean()).isFalse();
            assertThat(full.get("unbounded").asBoolean()).isTrue();
        }
        var o = new ChatServer.Options("127.0.0.1", 0, 4, null, null, 2, 4, 32, 64 * 1024, 0f, 1f, "strict", 16);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> o.checkDefaultPolicy(PolicyRegistry.spec("window", 32)))
                .hasMessageContaining("--max-budget 16");
    }

    /** A stored session comes back with its own policy and continues; its cache view is the one it left. */
    @Test
    void storedSessionsKeepTheirPolicy(@TempDir Path dir) throws Exception {
        JsonNode before;
        List<String[]> history;
        try (var s = TestServers.start(TestServers.options(4, dir, null, 2, 4), "full", 32, 16)) {
            Chat c = new Chat(s.base(), "kept", ext("window", 12));
            c.say(SessionsTest.USERS[0], 6);
            c.say(SessionsTest.USERS[1], 6);
            before = c.cache("");
            history = c.history;
        }
        try (var s = TestServers.start(TestServers.options(4, dir, null, 2, 4), "full", 32, 16)) {
            Chat c = new Chat(s.base(), "kept", null);
            assertThat(c.session().get("policy").asString()).isEqualTo("window");
            assertThat(c.session().get("budget").asInt()).isEqualTo(12);
            JsonNode after = c.cache("");
            assertThat(after.get("tokens")).isEqualTo(before.get("tokens"));
            c.history.addAll(history);
            c.say(SessionsTest.USERS[2], 6);
            assertThat(c.session().get("largestStreamEntries").asInt()).isEqualTo(12);
            assertThat(c.cache("").get("tokens").get(0).get("turn").asInt()).isEqualTo(1);
        }
    }

    /**
     * A session file of the first format (written by the server before sessions had their own
     * policy: window, budget 24, two turns, session id "legacy") loads as a session of the
     * server's policy when that is the one it was written with, and continues; under another
     * policy it is refused.
     */
    @Test
    void aFirstFormatFileStillLoads(@TempDir Path dir) throws Exception {
        Path golden = Path.of(PolicyPerSessionTest.class.getResource("/sessions/v1-window24.session").toURI());
        java.nio.file.Files.copy(golden, dir.resolve("4621e289f44ddbabd2b3e1fd5277e5bb81d5efb72102be7009d3fc8196edb36c.session"));
        try (var s = TestServers.start(TestServers.options(4, dir, null, 2, 4), "window", 24, 64)) {
            Chat c = new Chat(s.base(), "legacy", null);
            JsonNode info = c.session();
            assertThat(info.get("policy").asString()).isEqualTo("window");
            assertThat(info.get("turns").asInt()).isEqualTo(2);
            assertThat(info.get("tokens").asInt()).isEqualTo(62);
            JsonNode v = c.cache("");
            long held = 0;
            for (JsonNode t : v.get("tokens")) {
                assertThat(t.get("turn").asInt()).isZero();
                assertThat(t.get("role").asString()).isEqualTo("unknown");
                held += t.get("held").asInt();
                assertThat(t.get("held").asInt()).isEqualTo(t.get("position").asInt() >= 62 - 24 ? v.get("streams").asInt() : 0);
            }
            assertThat(held).isEqualTo(info.get("totalEntries").asLong());
            c.history.add(new String[] {"user", "Once upon a time there was a cat."});
            c.history.add(new String[] {"assistant", "Anna,"});
            c.history.add(new String[] {"user", "What did the cat do?"});
            c.history.add(new String[] {"assistant", "Anna,"});
            JsonNode r = c.say("Tell me about the dog.", 6);
            assertThat(r.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isEqualTo(62);
            JsonNode after = c.cache("?from=62");
            assertThat(after.get("tokens").get(0).get("turn").asInt()).isEqualTo(3);
            assertThat(after.get("tokens").get(0).get("role").asString()).isEqualTo("user");
        }
        try (var s = TestServers.start(TestServers.options(4, dir, null, 2, 4), "fdkvc", 24, 64, new java.io.PrintStream(
                java.io.OutputStream.nullOutputStream()))) {
            // rewritten as version 2 by the third turn, it keeps window whatever the server runs
            assertThat(new Chat(s.base(), "legacy", null).session().get("policy").asString()).isEqualTo("window");
        }
    }

    @Test
    void aFirstFormatFileOfAnotherPolicyIsRefused(@TempDir Path dir) throws Exception {
        Path golden = Path.of(PolicyPerSessionTest.class.getResource("/sessions/v1-window24.session").toURI());
        java.nio.file.Files.copy(golden, dir.resolve("4621e289f44ddbabd2b3e1fd5277e5bb81d5efb72102be7009d3fc8196edb36c.session"));
        var log = new java.io.ByteArrayOutputStream();
        try (var s = TestServers.start(TestServers.options(4, dir, null, 2, 4), "fdkvc", 24, 64, new java.io.PrintStream(log, true))) {
            assertThat(get(s.base() + "/v1/sessions/legacy").statusCode()).isEqualTo(404);
            HttpResponse<String> r = post(s.base() + "/v1/chat/completions", Http.chat(2, false, "user", "Hi"), "X-Session-Id", "legacy");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
            assertThat(log.toString()).contains("another cache configuration");
        }
    }
}
