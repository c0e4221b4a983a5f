package io.fdkvc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * The launcher's standard-input guard, run as the launcher has it: with descriptor 0 closed
 * ({@code <&-}) the JVM must get /dev/null, not whatever file it opens first; with an open
 * descriptor 0 nothing changes.
 */
@EnabledOnOs(OS.LINUX)
class LauncherTest {
    static String guard() throws Exception {
        List<String> lines = Files.readAllLines(Path.of("..", "fdkvc"), StandardCharsets.UTF_8);
        List<String> guard = lines.stream().filter(l -> l.startsWith("if ! { exec 9<&0; }")).toList();
        assertThat(guard).as("the guard line in ./fdkvc").hasSize(1);
        return guard.getFirst();
    }

    static String run(String script) throws Exception {
        Process p = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    }

    @Test
    void aClosedStdinBecomesDevNull() throws Exception {
        assertThat(run("exec 0<&-; " + guard() + "; readlink /proc/$$/fd/0")).isEqualTo("/dev/null");
        // without the guard, descriptor 0 stays closed and the next file opened would take it
        assertThat(run("exec 0<&-; readlink /proc/$$/fd/0 || echo closed")).endsWith("closed");
    }

    @Test
    void anOpenStdinIsLeftAlone() throws Exception {
        assertThat(run("exec 0</etc/hostname; " + guard() + "; readlink /proc/$$/fd/0; readlink /proc/$$/fd/9 || echo no9"))
                .startsWith("/etc/hostname").endsWith("no9");
    }
}
