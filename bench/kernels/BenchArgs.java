import io.fdkvc.engine.tensor.GgmlType;
import java.util.ArrayList;
import java.util.List;

/**
 * The kernel benchmarks' command-line checks: a bad argument ends the run with one line that
 * names it and the usage, and exit status 2, never a stack trace. Compiled with the benchmark that
 * uses it (Java's source launcher finds this file beside the one it runs).
 */
final class BenchArgs {
    private BenchArgs() {}

    /** The comma-separated weight types, each with a block that divides {@code cols}. */
    static List<GgmlType> types(String list, int cols) {
        List<GgmlType> types = new ArrayList<>();
        for (String tn : list.split(",")) {
            GgmlType t = GgmlType.valueOf(tn.strip());
            if (cols % t.blockSize != 0) throw new IllegalArgumentException("COLS must be a multiple of " + t + "'s block, " + t.blockSize);
            types.add(t);
        }
        return types;
    }

    /** Seconds of measuring, in (0, 3600]. */
    static double seconds(String s) {
        double seconds = Double.parseDouble(s);
        if (!(seconds > 0 && seconds <= 3600)) throw new IllegalArgumentException("SECONDS must be in (0, 3600]");
        return seconds;
    }

    /** Prints why the arguments were refused (control characters masked, at most 200 of them) and exits 2. */
    static void refuse(String bench, String usage, IllegalArgumentException e) {
        String m = String.valueOf(e.getMessage()).replaceAll("\\p{Cntrl}", "?");
        System.err.println(bench + ": " + (m.length() > 200 ? m.substring(0, 200) + "..." : m) + "; usage: " + usage);
        System.exit(2);
    }
}
