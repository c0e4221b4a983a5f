package io.fdkvc.eval.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ResultsCsvTest {
    @Test
    void tidyFormWithTheDocumentedHeader() {
        String csv = ResultsCsv.format(List.of(
                new MetricResult("topic-shift", "fdkvc", "late_turn_alignment", 0.8125, 0.75, 0.875, 120),
                new MetricResult("stable-topic", "h2o", "topic_diversity", 1, 1, 1, 120),
                new MetricResult("topic-shift", "h2o", "adaptation_turns", Double.NaN, Double.NaN, Double.NaN, 0)));
        assertThat(csv.split("\n")).containsExactly(
                "scenario,policy,metric,mean,ci_low,ci_high,n",
                "topic-shift,fdkvc,late_turn_alignment,0.8125,0.75,0.875,120",
                "stable-topic,h2o,topic_diversity,1.0,1.0,1.0,120",
                "topic-shift,h2o,adaptation_turns,NaN,NaN,NaN,0");
        assertThat(ResultsCsv.HEADER).isEqualTo("scenario,policy,metric,mean,ci_low,ci_high,n");
    }

    @Test
    void fieldsWithCommasOrQuotesAreQuoted() {
        assertThat(ResultsCsv.field("plain")).isEqualTo("plain");
        assertThat(ResultsCsv.field("a,b")).isEqualTo("\"a,b\"");
        assertThat(ResultsCsv.field("say \"hi\"")).isEqualTo("\"say \"\"hi\"\"\"");
    }

    @Test
    void numbersRoundTrip() {
        double v = 0.1 + 0.2;
        assertThat(Double.parseDouble(ResultsCsv.number(v))).isEqualTo(v);
        assertThat(ResultsCsv.number(-3)).isEqualTo("-3.0");
    }
}
