package io.fdkvc.cli.eval;

import io.fdkvc.core.Limits;
import picocli.CommandLine.Option;

/**
 * How a long evaluation run uses the machine and the terminal, shared by {@code eval} and
 * {@code tune}: worker threads and whether progress lines are printed.
 */
public final class WorkerOptions {
    @Option(names = "--threads", paramLabel = "N", description = "worker threads (default: the available processors)")
    Integer threads;

    @Option(names = "--quiet", description = "no progress lines on stderr")
    public boolean quiet;

    /** The worker threads: --threads, or the available processors; checked against {@link Limits#MAX_THREADS}. */
    public int threads() {
        int n = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
        Limits.check("--threads", n, 1, Limits.MAX_THREADS);
        return n;
    }
}
