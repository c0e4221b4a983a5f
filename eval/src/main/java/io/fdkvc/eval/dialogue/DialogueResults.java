package io.fdkvc.eval.dialogue;

import io.fdkvc.eval.report.MetricResult;
import java.util.List;

/**
 * What a dialogue evaluation hands to the report: tidy result rows (scenario = the dataset's
 * name) and a markdown section that references the PNG plots written beside the report.
 */
public record DialogueResults(List<MetricResult> results, String markdown) {
    public DialogueResults {
        results = List.copyOf(results);
    }
}
