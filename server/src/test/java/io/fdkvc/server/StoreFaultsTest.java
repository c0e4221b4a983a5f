package io.fdkvc.server;

import static io.fdkvc.server.Http.get;
import static io.fdkvc.server.Http.json;
import static io.fdkvc.server.Http.post;
import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.server.SessionsTest.Client;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;

/**
 * The session store under faults, on a real server over loopback: turns durable before they are
 * acknowledged (no race after {@code [DONE]}), a full and a read-only session directory (real
 * tmpfs mounts, and the same cases through an in-process fault-injecting store), bad entries in the directory, damaged sessions at run time.
 */
class StoreFaultsTest {
    static final String POLICY = "fdkvc";
    static final int BUDGET = 40, TURN = 16;

    /** One streamed turn read up to {@code [DONE]} only (the next request goes out at once, as SDK loops do). */
    record Streamed(int status, String text, JsonNode usage, String sessionId, String error) {}

    static Streamed stream(String base, Client c, int maxTokens, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                .POST(HttpRequest.BodyPublishers.ofString(c.body(maxTokens, true))).header("Content-Type", "application/json");
        for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
        HttpResponse<InputStream> r = Http.CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        String id = r.headers().firstValue("X-Session-Id").orElse(null);
        BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8));
        if (r.statusCode() != 200) {
            StringBuilder all = new StringBuilder();
            for (String l; (l = in.readLine()) != null; ) all.append(l);
            in.close();
            return new Streamed(r.statusCode(), null, null, id, all.toString());
        }
        StringBuilder text = new StringBuilder();
        JsonNode usage = null;
        String error = null;
        for (String line; (line = in.readLine()) != null; ) {
            if (line.equals("data: [DONE]")) break;
            if (!line.startsWith("data: ")) continue;
            JsonNode ev = Http.JSON.readTree(line.substring(6));
            if (ev.has("error")) error = ev.get("error").toString();
            else {
                JsonNode d = ev.get("choices").get(0).get("delta");
                if (d != null && d.has("content")) text.append(d.get("content").asString());
                if (ev.has("usage") && !ev.get("usage").isNull()) usage = ev.get("usage");
            }
        }
        in.close(); // not waiting for the end of the response
        return new Streamed(200, text.toString(), usage, id, error);
    }

    static long metric(String base, String name) {
        for (String line : get(base + "/metrics").body().split("\n")) {
            if (line.startsWith(name + " ")) return (long) Double.parseDouble(line.substring(name.length() + 1));
        }
        throw new AssertionError("no metric " + name);
    }

    static List<String> leftovers(Path dir) throws Exception {
        try (var files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.contains(".tmp")).toList();
        }
    }

    /** The greedy replies of an uninterrupted server without a store. */
    static List<String> reference(int turns, int maxTokens) throws Exception {
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), POLICY, BUDGET, TURN)) {
            return SessionsTest.converse(s.base(), turns, maxTokens);
        }
    }

    @Test
    void turnsSentTheInstantDoneArrivesAllSucceedWithCachedTokens(@TempDir Path dir) throws Exception {
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), POLICY, BUDGET, TURN)) {
            for (String header : new String[] {"named", null}) {
                Client c = new Client(s.base(), header);
                String id = null;
                for (int t = 0; t < 20; t++) {
                    c.history.add(new String[] {"user", SessionsTest.USERS[t % SessionsTest.USERS.length]});
                    Streamed r = header == null ? stream(s.base(), c, 6) : stream(s.base(), c, 6, "X-Session-Id", header);
                    assertThat(r.status()).as("turn %d: %s", t, r.error()).isEqualTo(200);
                    assertThat(r.error()).as("turn %d", t).isNull();
                    c.history.add(new String[] {"assistant", r.text()});
                    if (t == 0) id = r.sessionId();
                    else {
                        assertThat(r.sessionId()).as("turn %d continues the session", t).isEqualTo(id);
                        assertThat(r.usage().get("prompt_tokens_details").get("cached_tokens").asInt()).as("turn %d", t).isPositive();
                    }
                }
                // every acknowledged turn is in the store
                assertThat(metric(s.base(), "fdkvc_session_store_writes_total")).isEqualTo(header == null ? 40 : 20);
                assertThat(json(get(s.base() + "/v1/sessions/" + id)).get("turns").asInt()).isEqualTo(20);
            }
        }
    }

    // ---- full and read-only directories: real tmpfs mounts -------------------------------------

    /** Mounts a tmpfs at {@code dir}; the test is skipped, loudly, when the kernel refuses (not root, no CAP_SYS_ADMIN). */
    static void mount(Path dir, String options) throws Exception {
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", options, "tmpfs", dir.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor() != 0) {
            String why = "SKIPPED: cannot mount a tmpfs for the full/read-only session directory test (" + out + "); run as root";
            System.err.println("*** " + why + " ***");
            Assumptions.abort(why);
        }
    }

    /** A fresh tmpfs under {@code tmp}, unmounted by the caller. */
    static Path tmpfs(Path tmp, String options) throws Exception {
        Path dir = tmp.resolve("mounted");
        Files.createDirectories(dir);
        mount(dir, options);
        return dir;
    }

    static void remount(Path dir, String options) throws Exception {
        assertThat(new ProcessBuilder("mount", "-o", "remount," + options, dir.toString()).inheritIO().start().waitFor()).isZero();
    }

    static void umount(Path dir) throws Exception {
        new ProcessBuilder("umount", "-l", dir.toString()).inheritIO().start().waitFor();
    }

    /** Fills a file system until it refuses another byte. */
    static void fill(Path file) throws Exception {
        byte[] block = new byte[4096];
        try (var out = Files.newOutputStream(file)) {
            while (true) out.write(block);
        } catch (java.io.IOException full) {
            assertThat(full.getMessage()).contains("No space left");
        }
    }

    /**
     * A session directory that can be made full or read-only: a real tmpfs ({@code mounted}; the
     * test is skipped loudly where the kernel refuses the mount) or the directory store under
     * {@link FaultyStore} ({@code injected}), so the cases run everywhere.
     */
    static final class Disk implements AutoCloseable {
        final boolean mounted;
        final Path dir;
        private FaultyStore store;
        private FaultyStore.Fault initial = FaultyStore.Fault.NONE;

        Disk(String kind, Path tmp) throws Exception {
            mounted = kind.equals("mounted");
            dir = mounted ? tmpfs(tmp, "size=4m") : tmp.resolve("store");
            Files.createDirectories(dir);
        }

        TestServers.Running start(ChatServer.Options o, PrintStream log) throws Exception {
            if (mounted) return TestServers.start(o, POLICY, BUDGET, TURN, log);
            return TestServers.start(o, POLICY, BUDGET, TURN, log, m -> {
                store = new FaultyStore(SessionManager.directory(m, dir));
                store.fault = initial;
                return store;
            });
        }

        void full(boolean on) throws Exception {
            if (!mounted) store.fault = on ? FaultyStore.Fault.FULL : FaultyStore.Fault.NONE;
            else if (on) fill(dir.resolve("filler"));
            else Files.delete(dir.resolve("filler"));
        }

        void readOnly(boolean on) throws Exception {
            FaultyStore.Fault f = on ? FaultyStore.Fault.READ_ONLY : FaultyStore.Fault.NONE;
            if (mounted) remount(dir, on ? "ro" : "rw");
            else if (store != null) store.fault = f;
            initial = f; // for the next server started on it
        }

        @Override
        public void close() throws Exception {
            if (mounted) umount(dir);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mounted", "injected"})
    void aFullSessionDirectoryFailsTheTurnAndLeavesTheSessionAtItsStoredTurn(String kind, @TempDir Path tmp) throws Exception {
        List<String> expected = reference(3, 8);
        try (Disk disk = new Disk(kind, tmp); var s = disk.start(TestServers.options(4, disk.dir, null, 4, 8), System.err)) {
            Client c = new Client(s.base(), null);
            assertThat(c.say(SessionsTest.USERS[0], 8)).isEqualTo(expected.get(0));
            String id = c.lastSessionId;
            disk.full(true);
            // strict: non-streamed, the client gets 507 in OpenAI's shape; streamed, the error event
            c.history.add(new String[] {"user", SessionsTest.USERS[1]});
            ErrorsTest.assertError(post(s.base() + "/v1/chat/completions", c.body(8, false)), 507, null, "No space left");
            Streamed st = stream(s.base(), c, 8);
            assertThat(st.error()).contains("store_full");
            assertThat(metric(s.base(), "fdkvc_session_store_failures_total")).isEqualTo(2);
            assertThat(leftovers(disk.dir)).isEmpty();
            HttpResponse<String> health = get(s.base() + "/health");
            assertThat(health.statusCode()).isEqualTo(503);
            assertThat(json(health).get("store").asString()).contains("out of space");
            JsonNode session = json(get(s.base() + "/v1/sessions/" + id));
            assertThat(session.get("turns").asInt()).isEqualTo(1);
            // space again: the turn is retried and gives the reply of a server that never failed
            disk.full(false);
            assertThat(get(s.base() + "/health").statusCode()).isEqualTo(200);
            c.history.removeLast();
            assertThat(c.say(SessionsTest.USERS[1], 8)).isEqualTo(expected.get(1));
            assertThat(c.lastSessionId).isEqualTo(id);
            assertThat(c.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isPositive();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mounted", "injected"})
    void bestEffortKeepsAnUnstoredSessionInMemoryAndSaysDegraded(String kind, @TempDir Path tmp) throws Exception {
        List<String> expected = reference(3, 8);
        try (Disk disk = new Disk(kind, tmp)) {
            var d = TestServers.options(1, disk.dir, null, 4, 8);
            var o = TestServers.with(d, "best-effort", d.maxPromptTokens(), d.readTimeoutSeconds(), d.maxConnections(), d.maxBodyBytes());
            try (var s = disk.start(o, System.err)) {
                Client c = new Client(s.base(), null);
                c.say(SessionsTest.USERS[0], 8);
                disk.full(true);
                assertThat(c.say(SessionsTest.USERS[1], 8)).isEqualTo(expected.get(1));
                HttpResponse<String> health = get(s.base() + "/health");
                assertThat(health.statusCode()).isEqualTo(200);
                assertThat(json(health).get("status").asString()).isEqualTo("degraded");
                assertThat(json(health).get("unstoredSessions").asInt()).isEqualTo(1);
                assertThat(metric(s.base(), "fdkvc_session_store_failures_total")).isEqualTo(1);
                assertThat(metric(s.base(), "fdkvc_unstored_sessions")).isEqualTo(1);
                // another conversation with --sessions 1 does not push the unstored one out of memory
                Client other = new Client(s.base(), null);
                other.say("Another story.", 4);
                assertThat(json(get(s.base() + "/v1/sessions/" + c.lastSessionId)).get("live").asBoolean()).isTrue();
                assertThat(metric(s.base(), "fdkvc_unstored_sessions")).isEqualTo(2);
                assertThat(leftovers(disk.dir)).isEmpty();
                // space again: each session is stored with its next turn
                disk.full(false);
                assertThat(c.say(SessionsTest.USERS[2], 8)).isEqualTo(expected.get(2));
                assertThat(metric(s.base(), "fdkvc_unstored_sessions")).isEqualTo(1);
                assertThat(json(get(s.base() + "/health")).get("status").asString()).isEqualTo("degraded");
                other.say("And then?", 4);
                assertThat(metric(s.base(), "fdkvc_unstored_sessions")).isZero();
                assertThat(json(get(s.base() + "/health")).get("status").asString()).isEqualTo("ok");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mounted", "injected"})
    void aReadOnlySessionDirectoryFailsTheTurnWith503AndDoesNotBlockStartUp(String kind, @TempDir Path tmp) throws Exception {
        List<String> expected = reference(3, 8);
        try (Disk disk = new Disk(kind, tmp)) {
            Path dir = disk.dir;
            Client c;
            try (var s = disk.start(TestServers.options(4, dir, null, 4, 8), System.err)) {
                c = new Client(s.base(), "kept");
                c.say(SessionsTest.USERS[0], 8);
                disk.readOnly(true);
                c.history.add(new String[] {"user", SessionsTest.USERS[1]});
                ErrorsTest.assertError(post(s.base() + "/v1/chat/completions", c.body(8, false), "X-Session-Id", "kept"), 503, null,
                        "Read-only file system");
                assertThat(metric(s.base(), "fdkvc_session_store_failures_total")).isEqualTo(1);
                assertThat(json(get(s.base() + "/v1/sessions/kept")).get("turns").asInt()).isEqualTo(1);
                assertThat(leftovers(dir)).isEmpty();
                c.history.removeLast();
            }
            if (disk.mounted) {
                // a leftover temporary file in a read-only directory does not stop the next start
                disk.readOnly(false);
                Files.write(dir.resolve(new DirectoryStore(dir, new SessionCodec("m", "c", null)).key("kept") + ".tmp0123"), new byte[10]);
                disk.readOnly(true);
            }
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            try (var s = disk.start(TestServers.options(4, dir, null, 4, 8), new PrintStream(log, true, StandardCharsets.UTF_8))) {
                String said = log.toString(StandardCharsets.UTF_8);
                assertThat(said).contains("is not writable");
                if (disk.mounted) assertThat(said).contains("cannot remove");
                HttpResponse<String> health = get(s.base() + "/health");
                assertThat(health.statusCode()).isEqualTo(503);
                assertThat(json(health).get("store").asString()).contains("not writable");
                disk.readOnly(false);
                assertThat(get(s.base() + "/health").statusCode()).isEqualTo(200);
                Client again = new Client(s.base(), "kept");
                again.history.addAll(c.history);
                assertThat(again.say(SessionsTest.USERS[1], 8)).isEqualTo(expected.get(1));
                assertThat(again.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isPositive();
            }
        }
    }

    // ---- bad entries and damaged sessions -------------------------------------------------------

    @Test
    void badEntriesInTheSessionDirectoryAreSkippedAndTheServerServes(@TempDir Path dir) throws Exception {
        List<String> expected = reference(2, 8);
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), POLICY, BUDGET, TURN)) {
            new Client(s.base(), "good").say(SessionsTest.USERS[0], 8);
            new Client(s.base(), "cut").say(SessionsTest.USERS[0], 8);
            new Client(s.base(), "swapped").say(SessionsTest.USERS[2], 8);
        }
        DirectoryStore names = new DirectoryStore(dir, new SessionCodec("m", "c", null));
        Path cut = dir.resolve(names.key("cut"));
        byte[] whole = Files.readAllBytes(cut);
        Files.write(cut, java.util.Arrays.copyOf(whole, whole.length / 3));
        // another session's file under this one's name
        Files.copy(dir.resolve(names.key("good")), dir.resolve(names.key("swapped")), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.createDirectory(dir.resolve("x.session"));
        Files.writeString(dir.resolve("notes.txt"), "not a session");
        Files.writeString(dir.resolve("abc.session"), "not a session either");
        Files.write(dir.resolve(names.key("good") + ".tmp77"), new byte[5]);
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), POLICY, BUDGET, TURN,
                new PrintStream(log, true, StandardCharsets.UTF_8))) {
            String said = log.toString(StandardCharsets.UTF_8);
            assertThat(said.lines().filter(l -> l.contains("session store:")).count()).as(said).isEqualTo(6);
            assertThat(said).contains("x.session: not a regular file").contains("notes.txt: not a session file")
                    .contains("abc.session is not an fdkvc session file").contains("is damaged (CRC mismatch)").contains("holds another session's id")
                    .contains("left by an interrupted write");
            assertThat(metric(s.base(), "fdkvc_session_store_skipped_total")).isEqualTo(6);
            assertThat(Files.exists(dir.resolve(names.key("good") + ".tmp77"))).isFalse();
            // the good session continues
            Client good = new Client(s.base(), "good");
            good.history.addAll(List.of(new String[] {"user", SessionsTest.USERS[0]}, new String[] {"assistant", expected.get(0)}));
            assertThat(good.say(SessionsTest.USERS[1], 8)).isEqualTo(expected.get(1));
            assertThat(good.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isPositive();
            // the truncated one: 409 once, naming why; then its id starts over
            Client again = new Client(s.base(), "cut");
            again.history.add(new String[] {"user", SessionsTest.USERS[0]});
            ErrorsTest.assertError(post(s.base() + "/v1/chat/completions", again.body(8, false), "X-Session-Id", "cut"), 409, null,
                    "is damaged");
            again.history.clear();
            assertThat(again.say(SessionsTest.USERS[0], 8)).isEqualTo(expected.get(0));
            assertThat(again.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isZero();
            // a refused one is deleted on request
            assertThat(Http.send("DELETE", s.base() + "/v1/sessions/swapped", null).statusCode()).isEqualTo(200);
            assertThat(Files.exists(dir.resolve(names.key("swapped")))).isFalse();
        }
    }

    @Test
    void aSessionDamagedAtRunTimeCanBeReplacedOrDeleted(@TempDir Path dir) throws Exception {
        DirectoryStore names = new DirectoryStore(dir, new SessionCodec("m", "c", null));
        try (var s = TestServers.start(TestServers.options(1, dir, null, 4, 8), POLICY, BUDGET, TURN)) {
            Client a = new Client(s.base(), null);
            a.say(SessionsTest.USERS[0], 8);
            String id = a.lastSessionId;
            Client named = new Client(s.base(), "named");
            named.say(SessionsTest.USERS[2], 8); // another transcript than a's
            // --sessions 1: both are on disk only now, or one of them; damage both files
            for (String x : List.of(id, "named")) {
                Path f = dir.resolve(names.key(x));
                byte[] b = Files.readAllBytes(f);
                b[b.length / 2] ^= 1;
                Files.write(f, b);
            }
            new Client(s.base(), null).say("Push them out of memory.", 4);
            new Client(s.base(), null).say("And once more.", 4);
            // the whole history resent without an id: a new session, never a 409
            a.say(SessionsTest.USERS[1], 8);
            assertThat(a.lastSessionId).isNotEqualTo(id);
            assertThat(a.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isZero();
            // with its id: 409 once naming the damage, and DELETE removes the stored value
            named.history.add(new String[] {"user", SessionsTest.USERS[1]});
            ErrorsTest.assertError(post(s.base() + "/v1/chat/completions", named.body(8, false), "X-Session-Id", "named"), 409, null,
                    "damaged");
            assertThat(Http.send("DELETE", s.base() + "/v1/sessions/named", null).statusCode()).isEqualTo(200);
            assertThat(Files.exists(dir.resolve(names.key("named")))).isFalse();
            assertThat(Http.send("DELETE", s.base() + "/v1/sessions/" + id, null).statusCode()).isEqualTo(200);
            assertThat(Files.exists(dir.resolve(names.key(id)))).isFalse();
            assertThat(Http.send("DELETE", s.base() + "/v1/sessions/never-was", null).statusCode()).isEqualTo(404);
        }
    }

    @Test
    void aSessionRefusedAtStartUpCanBeDeleted(@TempDir Path dir) throws Exception {
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), POLICY, BUDGET, TURN)) {
            new Client(s.base(), "old").say(SessionsTest.USERS[0], 4);
        }
        Path f = dir.resolve(new DirectoryStore(dir, new SessionCodec("m", "c", null)).key("old"));
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), "h2o", BUDGET, TURN)) {
            assertThat(Files.exists(f)).isTrue();
            assertThat(Http.send("DELETE", s.base() + "/v1/sessions/old", null).statusCode()).isEqualTo(200);
            assertThat(Files.exists(f)).isFalse();
        }
    }
}
