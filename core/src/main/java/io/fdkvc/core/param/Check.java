package io.fdkvc.core.param;

/** Range checks used by the compact constructors of parameter records. Never clamps. */
public final class Check {
    private Check() {}

    public static double finite(String name, double v) {
        if (!Double.isFinite(v)) throw new ParameterException(name, "must be a finite number, got " + v);
        return v;
    }

    public static double atLeast(String name, double v, double min) {
        finite(name, v);
        if (v < min) throw new ParameterException(name, "must be >= " + min + ", got " + v);
        return v;
    }

    /** min &lt;= v &lt;= max */
    public static double inClosed(String name, double v, double min, double max) {
        finite(name, v);
        if (v < min || v > max) throw new ParameterException(name, "must be in [" + min + ", " + max + "], got " + v);
        return v;
    }

    /** min &lt;= v &lt; max */
    public static double inHalfOpen(String name, double v, double min, double max) {
        finite(name, v);
        if (v < min || v >= max) throw new ParameterException(name, "must be in [" + min + ", " + max + "), got " + v);
        return v;
    }

    /** min &lt; v &lt;= max */
    public static double inOpenClosed(String name, double v, double min, double max) {
        finite(name, v);
        if (v <= min || v > max) throw new ParameterException(name, "must be in (" + min + ", " + max + "], got " + v);
        return v;
    }

    public static int atLeast(String name, int v, int min) {
        if (v < min) throw new ParameterException(name, "must be >= " + min + ", got " + v);
        return v;
    }

    /**
     * {@code text} (a command-line argument) as a whole number in [min, max]; anything else is a
     * {@link ParameterException} naming {@code name} and quoting a short, escaped excerpt.
     */
    public static int wholeNumber(String name, String text, int min, int max) {
        int v;
        try {
            v = Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new ParameterException(name, "must be a whole number in [" + min + ", " + max + "], got '"
                    + io.fdkvc.core.Untrusted.excerpt(text) + "'");
        }
        if (v < min || v > max) throw new ParameterException(name, "must be in [" + min + ", " + max + "], got " + v);
        return v;
    }
}
