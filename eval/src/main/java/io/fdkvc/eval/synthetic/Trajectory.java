package io.fdkvc.eval.synthetic;

import java.util.Arrays;

/**
 * What the simulator records for one policy on one dialogue, turn by turn (NaN where undefined,
 * e.g. the retained past at turn 0). Reused across dialogues by a worker.
 */
public final class Trajectory {
    /** cos(read-out over C_{t-1} + the turn's entries, u_t). */
    public final double[] alignment;
    /** cos(read-out over C_{t-1} alone, u_t). */
    public final double[] alignmentPast;
    /** Attention mass of the turn's mean query over C_{t-1} on entries of the current topic. */
    public final double[] pastMassOnCurrent;
    /** Share of C_t's entries on the current topic. */
    public final double[] retention;
    /** Topic diversity of the cache after the last turn. */
    public double diversity;
    /** Entries held after the last turn. */
    public int finalSize;

    public Trajectory(int turns) {
        alignment = new double[turns];
        alignmentPast = new double[turns];
        pastMassOnCurrent = new double[turns];
        retention = new double[turns];
    }

    void clear() {
        Arrays.fill(alignment, Double.NaN);
        Arrays.fill(alignmentPast, Double.NaN);
        Arrays.fill(pastMassOnCurrent, Double.NaN);
        Arrays.fill(retention, Double.NaN);
        diversity = Double.NaN;
        finalSize = 0;
    }
}
