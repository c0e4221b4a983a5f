package io.fdkvc.eval.report;

import io.fdkvc.eval.synthetic.SyntheticResults;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The paper's headline claims (FD-KVC, arXiv 2608.18098: five scenarios, 600 dialogues, FD-KVC
 * against H2O) and how each is judged against our 95% intervals. The paper's H2O is
 * {@code h2o-paper} (the spec, "Special cases"); the reference {@code h2o} is shown beside it.
 */
public final class PaperClaims {
    private PaperClaims() {}

    /** How a claim is compared: a relative improvement (0 = no effect) or a ratio (1 = no effect). */
    public enum Kind { IMPROVEMENT, RATIO }

    /** One claim: the row of ours it corresponds to (policy fdkvc, metric prefix + the H2O variant). */
    public record Claim(String label, String scenario, String metricPrefix, double paperValue, Kind kind) {}

    public static final List<Claim> CLAIMS = List.of(
            new Claim("composite late-turn alignment", SyntheticResults.COMPOSITE, SyntheticResults.IMPROVEMENT_VS, 0.067, Kind.IMPROVEMENT),
            new Claim("topic shift", "topic-shift", SyntheticResults.IMPROVEMENT_VS, 1.27, Kind.IMPROVEMENT),
            new Claim("gradual evolution", "gradual-drift", SyntheticResults.IMPROVEMENT_VS, 0.87, Kind.IMPROVEMENT),
            new Claim("mixed topics", "mixed-topics", SyntheticResults.IMPROVEMENT_VS, 0.30, Kind.IMPROVEMENT),
            new Claim("adaptation to a new topic (topic shift)", "topic-shift", SyntheticResults.SPEEDUP_VS, 3.6, Kind.RATIO),
            new Claim("adaptation, all scenarios with changes", SyntheticResults.COMPOSITE, SyntheticResults.SPEEDUP_VS, 3.6, Kind.RATIO));

    /** The paper's topic diversity of FD-KVC, "the highest of all methods". */
    public static final double PAPER_DIVERSITY = 0.806;

    /**
     * The verdict on a claimed value against our interval: inside it; same direction but a
     * smaller or larger effect; no significant effect; or the opposite effect.
     */
    public static String verdict(double claimed, MetricResult ours, Kind kind) {
        if (ours == null || Double.isNaN(ours.mean())) return "not measured";
        double none = kind == Kind.IMPROVEMENT ? 0 : 1;
        if (ours.ciLow() <= claimed && claimed <= ours.ciHigh()) return "reproduces (claim inside our CI)";
        boolean claimPositive = claimed > none;
        if (ours.ciLow() > none) {
            if (!claimPositive) return "does not reproduce (opposite direction)";
            return claimed > ours.ciHigh() ? "partly: same direction, smaller effect" : "partly: same direction, larger effect";
        }
        if (ours.ciHigh() < none) return claimPositive ? "does not reproduce: FD-KVC worse" : "same direction, different size";
        return "does not reproduce: no significant difference";
    }

    /**
     * Effects whose whole interval lies within +-0.5% are called negligible: with 600 paired
     * dialogues the intervals are so narrow that a 0.01% difference is "significant", and calling
     * that a confirmed component would overstate it.
     */
    public static final double NEGLIGIBLE = 0.005;

    /** A verdict on an ablation: does removing the component lower FD-KVC's composite alignment? */
    public static String ablationVerdict(MetricResult improvementOverAblation) {
        if (improvementOverAblation == null || Double.isNaN(improvementOverAblation.mean())) return "not measured";
        if (Math.abs(improvementOverAblation.ciLow()) < NEGLIGIBLE && Math.abs(improvementOverAblation.ciHigh()) < NEGLIGIBLE) {
            return "negligible (the whole interval within +-0.5%)";
        }
        if (improvementOverAblation.ciLow() > 0) return "confirmed (the component helps)";
        if (improvementOverAblation.ciHigh() < 0) return "contradicted (FD-KVC better without it)";
        return "not confirmed (no significant difference)";
    }

    /** "+6.7%" for an improvement, "3.60x" for a ratio. */
    public static String format(double v, Kind kind) {
        if (Double.isNaN(v)) return "n/a";
        return kind == Kind.IMPROVEMENT ? String.format(Locale.ROOT, "%+.2f%%", 100 * v) : String.format(Locale.ROOT, "%.2fx", v);
    }

    /** The value with its interval, e.g. "+3.1% [+1.2%, +5.0%]". */
    public static String formatInterval(MetricResult r, Kind kind) {
        if (r == null || Double.isNaN(r.mean())) return "n/a";
        return format(r.mean(), kind) + " [" + format(r.ciLow(), kind) + ", " + format(r.ciHigh(), kind) + "]";
    }

    /** The ablation policies present in a run, in registry order. */
    public static List<String> ablations(List<String> policies) {
        List<String> out = new ArrayList<>();
        for (String p : policies) if (p.startsWith("fdkvc-")) out.add(p);
        return out;
    }
}
