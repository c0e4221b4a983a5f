package io.fdkvc.eval.report;

/**
 * One row of {@code results.csv} (tidy form): a metric of one policy on one scenario (or dataset),
 * its mean over {@code n} dialogues and its 95% bootstrap interval.
 */
public record MetricResult(String scenario, String policy, String metric, double mean, double ciLow, double ciHigh, int n) {}
