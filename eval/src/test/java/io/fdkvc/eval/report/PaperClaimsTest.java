package io.fdkvc.eval.report;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PaperClaimsTest {
    private static MetricResult iv(double mean, double lo, double hi) {
        return new MetricResult("s", "fdkvc", "m", mean, lo, hi, 100);
    }

    @Test
    void improvementVerdicts() {
        PaperClaims.Kind k = PaperClaims.Kind.IMPROVEMENT;
        assertThat(PaperClaims.verdict(0.067, iv(0.06, 0.05, 0.08), k)).startsWith("reproduces");
        assertThat(PaperClaims.verdict(1.27, iv(0.04, 0.03, 0.05), k)).isEqualTo("partly: same direction, smaller effect");
        assertThat(PaperClaims.verdict(0.01, iv(0.04, 0.03, 0.05), k)).isEqualTo("partly: same direction, larger effect");
        assertThat(PaperClaims.verdict(0.3, iv(0.0, -0.01, 0.01), k)).isEqualTo("does not reproduce: no significant difference");
        assertThat(PaperClaims.verdict(0.3, iv(-0.1, -0.12, -0.08), k)).isEqualTo("does not reproduce: FD-KVC worse");
        assertThat(PaperClaims.verdict(0.3, null, k)).isEqualTo("not measured");
    }

    @Test
    void ratioVerdictsUseOneAsNoEffect() {
        PaperClaims.Kind k = PaperClaims.Kind.RATIO;
        assertThat(PaperClaims.verdict(3.6, iv(1.0, 0.9, 1.1), k)).isEqualTo("does not reproduce: no significant difference");
        assertThat(PaperClaims.verdict(3.6, iv(2.0, 1.5, 2.5), k)).isEqualTo("partly: same direction, smaller effect");
        assertThat(PaperClaims.verdict(3.6, iv(0.1, 0.08, 0.12), k)).isEqualTo("does not reproduce: FD-KVC worse");
        assertThat(PaperClaims.verdict(3.6, iv(3.5, 3.0, 4.0), k)).startsWith("reproduces");
    }

    @Test
    void ablationVerdicts() {
        assertThat(PaperClaims.ablationVerdict(iv(0.02, 0.01, 0.03))).startsWith("confirmed");
        assertThat(PaperClaims.ablationVerdict(iv(-0.02, -0.03, -0.01))).startsWith("contradicted");
        assertThat(PaperClaims.ablationVerdict(iv(0.0, -0.01, 0.01))).startsWith("not confirmed");
        assertThat(PaperClaims.ablationVerdict(iv(0.001, 0.0005, 0.002))).startsWith("negligible");
        assertThat(PaperClaims.ablationVerdict(iv(-0.001, -0.002, -0.0005))).startsWith("negligible");
        assertThat(PaperClaims.ablationVerdict(iv(0.004, 0.003, 0.006))).startsWith("confirmed");
    }

    @Test
    void formats() {
        assertThat(PaperClaims.format(0.067, PaperClaims.Kind.IMPROVEMENT)).isEqualTo("+6.70%");
        assertThat(PaperClaims.format(-0.1, PaperClaims.Kind.IMPROVEMENT)).isEqualTo("-10.00%");
        assertThat(PaperClaims.format(3.6, PaperClaims.Kind.RATIO)).isEqualTo("3.60x");
    }
}
