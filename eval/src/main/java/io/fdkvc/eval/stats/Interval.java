package io.fdkvc.eval.stats;

/** A point estimate with a 95% interval over n samples. */
public record Interval(double mean, double low, double high, int n) {}
