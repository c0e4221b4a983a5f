package io.fdkvc.eval.report;

import java.util.List;
import java.util.Locale;

/** results.csv in tidy form: one row per (scenario, policy, metric). */
public final class ResultsCsv {
    public static final String HEADER = "scenario,policy,metric,mean,ci_low,ci_high,n";

    private ResultsCsv() {}

    public static String format(List<MetricResult> rows) {
        StringBuilder sb = new StringBuilder(HEADER).append('\n');
        for (MetricResult r : rows) {
            sb.append(field(r.scenario())).append(',').append(field(r.policy())).append(',').append(field(r.metric())).append(',')
                    .append(number(r.mean())).append(',').append(number(r.ciLow())).append(',').append(number(r.ciHigh())).append(',')
                    .append(r.n()).append('\n');
        }
        return sb.toString();
    }

    /** Round-trip exact (shortest repr), NaN for an undefined value (pandas and R read it as missing). */
    public static String number(double v) {
        if (Double.isNaN(v)) return "NaN";
        if (v == Math.rint(v) && Math.abs(v) < 1e15) return String.format(Locale.ROOT, "%.1f", v);
        return Double.toString(v);
    }

    /** RFC 4180 quoting, only where needed. */
    public static String field(String s) {
        if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0 && s.indexOf('\r') < 0) return s;
        return '"' + s.replace("\"", "\"\"") + '"';
    }
}
