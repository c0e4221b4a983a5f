package io.fdkvc.eval.synthetic;

import io.fdkvc.core.param.ParameterException;

/**
 * The synthetic dialogue generator's knobs (docs/evaluation.md has the table and the reasons for
 * each default). Validated at construction; an error is a {@link ParameterException} naming the
 * component (the command line maps it to its option).
 *
 * @param turns          T, turns per dialogue ({@code --turns})
 * @param entriesPerTurn n, cache entries each turn appends ({@code --entries-per-turn})
 * @param queries        m, query rows per turn ({@code --queries})
 * @param dim            d, key/value/query dimension ({@code --dim})
 * @param budget         B, entries a bounded policy keeps after a turn ({@code --budget})
 * @param noise          sigma, length of the noise vector relative to the unit topic vector ({@code --noise})
 * @param sharpness      s, logit of a query row for a key of the same direction ({@code --sharpness})
 */
public record GeneratorConfig(int turns, int entriesPerTurn, int queries, int dim, int budget, double noise, double sharpness) {

    /** The benchmark's defaults, fixed before any result was seen. */
    public static final GeneratorConfig DEFAULTS = new GeneratorConfig(24, 16, 4, 64, 64, 1.0, 4.0);

    /** Most floats in one of a dialogue's arrays (T * max(n, m) * d). */
    public static final long MAX_FLOATS = 1L << 25;

    public GeneratorConfig {
        // topic-return needs three phases and the late third at least one turn
        atLeast("turns", turns, 3);
        atLeast("entriesPerTurn", entriesPerTurn, 1);
        atLeast("queries", queries, 1);
        atLeast("dim", dim, 2);
        atLeast("budget", budget, 1);
        if (!Double.isFinite(noise) || noise < 0) throw new ParameterException("noise", "must be a finite number >= 0, got " + noise);
        if (!Double.isFinite(sharpness) || sharpness <= 0) {
            throw new ParameterException("sharpness", "must be a finite number > 0, got " + sharpness);
        }
        // A worker holds a dialogue's keys and values (and a full cache of them): keep each array
        // well inside a Java array and a laptop's memory.
        long floats = (long) turns * Math.max(entriesPerTurn, queries) * dim;
        if (floats > MAX_FLOATS) {
            throw new ParameterException("turns", "turns x entries per turn x dim = " + turns + " x " + entriesPerTurn + " x " + dim
                    + " floats per dialogue is more than this simulator holds (" + MAX_FLOATS + ")");
        }
    }

    private static void atLeast(String parameter, int v, int min) {
        if (v < min) throw new ParameterException(parameter, "must be >= " + min + ", got " + v);
    }

    /** Total entries of a dialogue, T * n. */
    public int totalEntries() {
        return turns * entriesPerTurn;
    }

    /** First turn of the "late" third: T - floor(T/3). */
    public int lateFrom() {
        return Metrics.lateFrom(turns);
    }

    /** Norm of keys and query rows, kappa = sqrt(s * sqrt(d)), so that q.k/sqrt(d) = s cos(q,k). */
    public double vectorNorm() {
        return Math.sqrt(sharpness * Math.sqrt(dim));
    }

    public GeneratorConfig withTurns(int t) { return new GeneratorConfig(t, entriesPerTurn, queries, dim, budget, noise, sharpness); }
}
