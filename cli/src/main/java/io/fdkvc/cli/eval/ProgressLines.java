package io.fdkvc.cli.eval;

import io.fdkvc.eval.synthetic.Progress;
import java.io.PrintWriter;
import java.util.Locale;

/**
 * A progress bar made of lines: one line each time another 10% is done, so that it reads well in
 * CI logs and through pipes (no carriage returns). Safe to call from worker threads.
 */
public final class ProgressLines implements Progress {
    private final PrintWriter err;
    private final String label;
    private final String unit;
    private final long start = System.nanoTime();
    private int lastTenth;

    public ProgressLines(PrintWriter err, String label, String unit) {
        this.err = err;
        this.label = label;
        this.unit = unit;
    }

    @Override
    public synchronized void update(int done, int total) {
        if (total <= 0) return;
        int tenth = (int) (10L * done / total);
        if (tenth <= lastTenth) return;
        lastTenth = tenth;
        int filled = tenth * 2;
        err.println(String.format(Locale.ROOT, "%s [%s%s] %3d%% %d/%d %s, %.1f s", label, "#".repeat(filled), ".".repeat(20 - filled),
                tenth * 10, done, total, unit, (System.nanoTime() - start) / 1e9));
        err.flush();
    }
}
