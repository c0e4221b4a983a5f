package io.fdkvc.bench.kernels;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.Check;
import io.fdkvc.engine.tensor.GgmlType;
import java.util.ArrayList;
import java.util.List;

/**
 * The kernel benchmarks' command-line checks: a bad argument ends the run with one line that
 * names it and the usage, and exit status 2, never a stack trace. Whole numbers go through
 * core's {@link Check#wholeNumber}.
 */
final class BenchArgs {
    private BenchArgs() {}

    /** The arguments every matrix benchmark starts with: TYPES ROWS COLS [SECONDS]. */
    record Matrix(List<GgmlType> types, int rows, int cols, double seconds) {}

    /**
     * TYPES ROWS COLS [SECONDS] from the start of {@code a}, which may hold up to {@code more}
     * further arguments for the benchmark's own use; the shape checked against this JVM's heap
     * ({@link RandomTensor#checkShape}). SECONDS defaults to 10.
     */
    static Matrix matrix(String[] a, int more) {
        if (a.length < 3 || a.length > 4 + more) throw new IllegalArgumentException("expected 3 to " + (4 + more) + " arguments, got " + a.length);
        int rows = whole("ROWS", a[1], 1, Integer.MAX_VALUE);
        int cols = whole("COLS", a[2], 1, Integer.MAX_VALUE);
        double seconds = a.length > 3 ? seconds(a[3]) : 10;
        RandomTensor.checkShape(rows, cols);
        return new Matrix(types(a[0], cols), rows, cols, seconds);
    }

    /** The comma-separated weight types, each with a block that divides {@code cols}. */
    static List<GgmlType> types(String list, int cols) {
        List<GgmlType> types = new ArrayList<>();
        for (String tn : list.split(",")) {
            GgmlType t;
            try {
                t = GgmlType.valueOf(tn.strip());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("TYPES: unknown weight type '" + io.fdkvc.core.Untrusted.excerpt(tn)
                        + "', one of " + java.util.Arrays.toString(GgmlType.values()));
            }
            if (cols % t.blockSize != 0) throw new IllegalArgumentException("COLS: must be a multiple of " + t + "'s block, " + t.blockSize);
            types.add(t);
        }
        return types;
    }

    /** {@code text} as a whole number in [min, max]; anything else names {@code name}. */
    static int whole(String name, String text, int min, int max) {
        return Check.wholeNumber(name, text, min, max);
    }

    /** Seconds of measuring, in (0, 3600]. */
    static double seconds(String s) {
        double seconds;
        try {
            seconds = Double.parseDouble(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("SECONDS: must be a number in (0, 3600], got '" + io.fdkvc.core.Untrusted.excerpt(s) + "'");
        }
        if (!(seconds > 0 && seconds <= 3600)) throw new IllegalArgumentException("SECONDS: must be in (0, 3600], got " + seconds);
        return seconds;
    }

    /**
     * {@code parse}'s value, or, when it refuses the arguments (an IllegalArgumentException or
     * core's InputException), {@link #refuse} with the benchmark's name and usage.
     */
    static <T> T orRefuse(String bench, String usage, java.util.function.Supplier<T> parse) {
        try {
            return parse.get();
        } catch (IllegalArgumentException | InputException e) { // an unknown type, a bad number or shape
            refuse(bench, usage, e);
            throw new AssertionError("refuse exits");
        }
    }

    /**
     * Prints why the arguments were refused (an IllegalArgumentException: an unknown type, or a
     * check here; an InputException: core's checks) in one line, control characters masked, at
     * most 200 of them, and exits 2.
     */
    static void refuse(String bench, String usage, RuntimeException e) {
        String m = String.valueOf(e.getMessage()).replaceAll("\\p{Cntrl}", "?");
        System.err.println(bench + ": " + (m.length() > 200 ? m.substring(0, 200) + "..." : m) + "; usage: " + usage);
        System.exit(2);
    }
}
