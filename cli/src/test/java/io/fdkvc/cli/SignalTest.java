package io.fdkvc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM during {@code eval} leaves nothing behind: a child JVM runs a long evaluation into
 * {@code out/new/parents/report}; once its hidden temporary report exists, the test sends
 * SIGTERM ({@link Process#destroy()} on Unix) and checks that the shutdown hook removed the
 * temporary folder and the parents the run created.
 */
@DisabledOnOs(OS.WINDOWS)
class SignalTest {
    @TempDir
    Path dir;

    @Test
    void sigtermDuringEvalRemovesTheTemporaryReportAndTheCreatedParents() throws Exception {
        Path out = dir.resolve("new").resolve("parents").resolve("report");
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.add("--add-modules=jdk.incubator.vector");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("io.fdkvc.cli.Main");
        cmd.addAll(List.of("eval", "--dialogues", "5000", "--threads", "1", "--quiet", "--out", out.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("child.log").toFile()).start();
        try {
            Path parent = out.getParent();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!hasTemporaryReport(parent)) {
                assertThat(p.isAlive()).as("the child ended early: " + Files.readString(dir.resolve("child.log"))).isTrue();
                assertThat(System.nanoTime()).as("no temporary report after 60 s").isLessThan(deadline);
                Thread.sleep(50);
            }
            p.destroy(); // SIGTERM
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the child stopped").isTrue();
        } finally {
            p.destroyForcibly();
        }
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left.map(Path::getFileName).map(Path::toString).toList()).as("what the run left in " + dir).containsExactly("child.log");
        }
    }

    private static boolean hasTemporaryReport(Path parent) throws Exception {
        if (!Files.isDirectory(parent)) return false;
        try (Stream<Path> s = Files.list(parent)) {
            return s.anyMatch(f -> f.getFileName().toString().startsWith(".report.tmp-"));
        }
    }
}
