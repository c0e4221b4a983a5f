package io.fdkvc.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server process killed with SIGKILL after two turns and started again on its session
 * directory continues the conversation with the greedy reply an uninterrupted server gives.
 */
class RestartTest {
    static Process spawn(Path dir) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-Dfdkvc.shared=" + System.getProperty("fdkvc.shared"), "-cp", System.getProperty("java.class.path"),
                TestServerMain.class.getName(), dir.toString(), "fdkvc", "40", "16"));
        return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    static String base(Process p) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        for (String line; (line = r.readLine()) != null; ) {
            if (line.startsWith("PORT ")) return "http://127.0.0.1:" + line.substring(5).strip();
        }
        throw new IllegalStateException("server process ended without a port");
    }

    @Test
    void killNineAndRestartGivesTheSameGreedyReply(@TempDir Path dir) throws Exception {
        List<String> expected;
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "fdkvc", 40, 16)) {
            expected = SessionsTest.converse(s.base(), 3, 10);
        }
        Process first = spawn(dir);
        SessionsTest.Client c;
        try {
            c = new SessionsTest.Client(base(first), null);
            c.say(SessionsTest.USERS[0], 10);
            c.say(SessionsTest.USERS[1], 10);
        } finally {
            first.destroyForcibly(); // SIGKILL: no shutdown hook, no flush
            first.waitFor();
        }
        Process second = spawn(dir);
        try {
            SessionsTest.Client again = new SessionsTest.Client(base(second), null);
            again.history.addAll(c.history);
            String third = again.say(SessionsTest.USERS[2], 10);
            assertThat(again.lastSessionId).isEqualTo(c.lastSessionId);
            assertThat(again.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isPositive();
            assertThat(List.of(c.history.get(1)[1], c.history.get(3)[1], third)).isEqualTo(expected);
        } finally {
            second.destroyForcibly();
            second.waitFor();
        }
    }
}
