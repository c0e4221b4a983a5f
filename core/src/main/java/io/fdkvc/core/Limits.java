package io.fdkvc.core;

import io.fdkvc.core.param.ParameterException;

/**
 * The documented upper bounds of every size a user controls (docs/limits.md has the table).
 * Each is far above any real use and low enough that the arrays it implies fit a Java array; what
 * the machine's memory allows is checked separately where the allocation is known
 * ({@link #checkMemory}). A value outside its range is refused before anything is allocated.
 */
public final class Limits {
    /** Entries a bounded policy keeps per stream ({@code --budget}, a trace's {@code policy.budget}). */
    public static final int MAX_BUDGET = 1 << 24;
    /** Vector dimension of a trace ({@code dim}) and of the synthetic benchmark ({@code --dim}). */
    public static final int MAX_DIM = 1 << 16;
    /** Tokens a turn may add before the policy runs ({@code --max-turn-tokens}). */
    public static final int MAX_TURN_TOKENS = 1 << 20;
    /** Prompt tokens processed together ({@code --batch}). */
    public static final int MAX_BATCH = 1 << 12;
    /** Worker threads ({@code --threads}). */
    public static final int MAX_THREADS = 1024;
    /** Tokens one reply or one generation may produce ({@code --max-tokens}). */
    public static final int MAX_NEW_TOKENS = 1 << 24;
    /** Bytes of a trace file or of standard input given to {@code trace}. */
    public static final long MAX_TRACE_BYTES = 1L << 30;
    /** Bytes of one line of a dialogue corpus, after decompression. */
    public static final int MAX_LINE_BYTES = 64 << 20;
    /** Bytes a dialogue corpus may decompress to (a gzip bomb is refused at this size). */
    public static final long MAX_CORPUS_BYTES = 4L << 30;

    private Limits() {}

    /**
     * {@code value} when {@code min <= value <= max}.
     *
     * @throws ParameterException naming {@code parameter}
     */
    public static int check(String parameter, long value, long min, long max) {
        if (value < min || value > max) {
            throw new ParameterException(parameter, "must be in [" + min + ", " + max + "], got " + value
                    + (value > max ? " (the documented limit: docs/limits.md)" : ""));
        }
        return (int) value;
    }

    /**
     * Refuses an allocation of {@code bytes} that this JVM could not hold (more than its maximum
     * heap), naming what asks for it.
     *
     * @throws InputException naming {@code what}
     */
    public static void checkMemory(String what, double bytes) {
        long max = Runtime.getRuntime().maxMemory();
        if (bytes > max) {
            throw new InputException(what + " needs about " + mib(bytes) + " MiB, more than the " + mib(max)
                    + " MiB this JVM may use (docs/limits.md)");
        }
    }

    private static long mib(double bytes) {
        return (long) Math.ceil(bytes / (1 << 20));
    }
}
