package io.fdkvc.server;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's {@code redis-server} for the tests: on a free loopback port, with its own data
 * directory, an append-only file synced at every write (so a killed Redis loses no acknowledged
 * write), started and stopped by the test.
 */
final class RedisServer implements AutoCloseable {
    final Path dir;
    final int port;
    private Process process;

    RedisServer(Path dir) throws IOException, InterruptedException {
        this.dir = Files.createDirectories(dir);
        this.port = freePort();
        start();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    String url() {
        return "redis://127.0.0.1:" + port;
    }

    /** Starts it (again, on the same port and data) and waits until it answers. */
    void start() throws IOException, InterruptedException {
        process = new ProcessBuilder(List.of("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toString(),
                "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no", "--logfile", dir.resolve("redis.log").toString()))
                .redirectErrorStream(true).redirectOutput(dir.resolve("redis.out").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            if (!process.isAlive()) throw new IllegalStateException("redis-server ended: " + Files.readString(dir.resolve("redis.out")));
            try (Socket s = new Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
                s.getOutputStream().write("PING\r\n".getBytes());
                if (s.getInputStream().read() == '+') return;
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) throw new IllegalStateException("redis-server did not answer on port " + port);
            Thread.sleep(20);
        }
    }

    /** SIGKILL: nothing is flushed beyond what it had synced. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null) kill();
    }
}
