package io.fdkvc.eval.report;

import java.util.Map;

/**
 * What a report says about how it was made.
 *
 * @param command     the command line that produced it
 * @param started     ISO-8601 start time
 * @param fdkvcParams the FD-KVC parameters of the run (tuned or spec defaults plus -p)
 * @param fdkvcSource where those parameters come from ("tuned defaults", "spec defaults")
 * @param seconds     wall-clock seconds of the run (simulation and statistics)
 * @param threads     worker threads
 * @param cpuSeconds  CPU seconds the process used over the same span (all threads; NaN if unknown)
 */
public record RunInfo(String command, String started, Map<String, Object> fdkvcParams, String fdkvcSource, double seconds, int threads, double cpuSeconds) {
    /** CPU seconds used by this process so far (all threads), NaN where the JVM does not say. */
    public static double processCpuSeconds() {
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            long ns = os.getProcessCpuTime();
            return ns < 0 ? Double.NaN : ns / 1e9;
        }
        return Double.NaN;
    }
}
