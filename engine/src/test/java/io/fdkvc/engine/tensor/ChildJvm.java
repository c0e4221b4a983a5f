package io.fdkvc.engine.tensor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A fresh JVM for the tests whose subject is fixed when a class loads (the vector width, the
 * kernel properties, which tensor class initialises first) or is the JIT itself: the test's
 * class path, the Vector API module, native access, the given options, a main class and its
 * arguments; stdin closed. Its output (stdout and stderr together) goes to a file, so that the
 * time limit holds even if the JVM hangs with its output open.
 */
record ChildJvm(int exitValue, String output) {
    /** Runs the JVM to its end; an AssertionError with its output if it runs past {@code seconds}. */
    static ChildJvm run(long seconds, List<String> options, Class<?> main, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(options);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        Path log = Files.createTempFile("fdkvc-child-jvm", ".txt");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            p.getOutputStream().close();
            boolean ended = p.waitFor(seconds, TimeUnit.SECONDS);
            if (!ended) p.destroyForcibly().waitFor();
            String output = Files.readString(log, StandardCharsets.UTF_8);
            if (!ended) throw new AssertionError(main.getSimpleName() + " " + String.join(" ", args) + ": the JVM ran past " + seconds + " s; its output:\n" + output);
            return new ChildJvm(p.exitValue(), output);
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
