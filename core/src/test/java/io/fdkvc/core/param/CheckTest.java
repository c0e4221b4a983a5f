package io.fdkvc.core.param;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Command-line whole numbers: in range they parse, anything else is one short line naming the argument. */
class CheckTest {
    @Test
    void wholeNumbersInRangeParseWithSurroundingSpace() {
        assertThat(Check.wholeNumber("BATCH", " 7 ", 1, 64)).isEqualTo(7);
        assertThat(Check.wholeNumber("BATCH", "1", 1, 64)).isEqualTo(1);
        assertThat(Check.wholeNumber("BATCH", "64", 1, 64)).isEqualTo(64);
    }

    @Test
    void outOfRangeNamesTheArgumentAndTheRange() {
        assertThatThrownBy(() -> Check.wholeNumber("BATCH", "65", 1, 64)).isInstanceOf(ParameterException.class)
                .hasMessage("BATCH: must be in [1, 64], got 65");
        assertThatThrownBy(() -> Check.wholeNumber("BATCH", "-1", 1, 64)).hasMessage("BATCH: must be in [1, 64], got -1");
    }

    @Test
    void garbageIsQuotedEscapedAndCut() {
        assertThatThrownBy(() -> Check.wholeNumber("C", "1e3", 1, 10)).hasMessage("C: must be a whole number in [1, 10], got '1e3'");
        // beyond int: not a whole number this parser takes, reported as such rather than wrapped
        assertThatThrownBy(() -> Check.wholeNumber("C", "99999999999", 1, 10)).hasMessageContaining("got '99999999999'");
        String hostile = "\u001b[2J" + "9".repeat(10_000);
        assertThatThrownBy(() -> Check.wholeNumber("C", hostile, 1, 10))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\u001b").hasSizeLessThan(300).contains("\\u001b"));
    }
}
