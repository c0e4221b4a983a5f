package io.fdkvc.eval.report;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.eval.synthetic.GeneratorConfig;
import io.fdkvc.eval.synthetic.Scenario;
import io.fdkvc.eval.synthetic.SyntheticResults;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** results.json: the run's configuration, the tidy rows, the paper's claims and the per-turn curves. */
public final class ResultsJson {
    private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    private ResultsJson() {}

    public static String format(SyntheticResults r, RunInfo info, List<MetricResult> extraRows) {
        ObjectNode root = JSON.createObjectNode();
        root.put("command", info.command());
        root.put("started", info.started());
        root.put("seconds", info.seconds());
        root.put("threads", info.threads());
        putNumber(root, "cpu_seconds", info.cpuSeconds());
        ObjectNode cfg = root.putObject("config");
        GeneratorConfig g = r.config().generator();
        cfg.put("turns", g.turns());
        cfg.put("entries_per_turn", g.entriesPerTurn());
        cfg.put("queries", g.queries());
        cfg.put("dim", g.dim());
        cfg.put("budget", g.budget());
        cfg.put("noise", g.noise());
        cfg.put("sharpness", g.sharpness());
        cfg.put("dialogues", r.config().dialogues());
        cfg.put("seed", r.config().seed());
        ArrayNode sc = cfg.putArray("scenarios");
        for (Scenario s : r.config().scenarios()) sc.add(s.id());
        ObjectNode pol = cfg.putObject("policies");
        for (PolicySpec p : r.config().policies()) {
            ObjectNode o = pol.putObject(p.name());
            for (Map.Entry<String, Object> e : p.parameterValues().entrySet()) o.put(e.getKey(), String.valueOf(e.getValue()));
        }
        cfg.put("fdkvc_source", info.fdkvcSource());

        ArrayNode rows = root.putArray("results");
        for (MetricResult m : r.table()) addRow(rows, m);
        for (MetricResult m : extraRows) addRow(rows, m);

        ArrayNode claims = root.putArray("paper_claims");
        for (PaperClaims.Claim c : PaperClaims.CLAIMS) {
            ObjectNode o = claims.addObject();
            o.put("claim", c.label());
            o.put("scenario", c.scenario());
            o.put("paper", c.paperValue());
            for (String h : SyntheticResults.H2O) {
                MetricResult ours = r.config().policyIndex(SyntheticResults.FDKVC) < 0 ? null
                        : r.find(c.scenario(), SyntheticResults.FDKVC, c.metricPrefix() + h);
                ObjectNode v = o.putObject("vs_" + h);
                putNumber(v, "mean", ours == null ? Double.NaN : ours.mean());
                putNumber(v, "ci_low", ours == null ? Double.NaN : ours.ciLow());
                putNumber(v, "ci_high", ours == null ? Double.NaN : ours.ciHigh());
                v.put("verdict", PaperClaims.verdict(c.paperValue(), ours, c.kind()));
            }
        }

        ObjectNode curves = root.putObject("curves");
        for (Scenario s : r.config().scenarios()) {
            ObjectNode so = curves.putObject(s.id());
            for (PolicySpec p : r.config().policies()) {
                ObjectNode po = so.putObject(p.name());
                putArray(po, "alignment_by_turn", r.curve(SyntheticResults.Curve.ALIGNMENT, s, p.name()));
                putArray(po, "current_topic_share_by_turn", r.curve(SyntheticResults.Curve.RETENTION, s, p.name()));
                putArray(po, "past_attention_on_current_topic_by_turn", r.curve(SyntheticResults.Curve.PAST_MASS_ON_CURRENT, s, p.name()));
                if (s.hasTopicChanges()) putArray(po, "past_attention_on_new_topic_by_turns_since_change", r.adaptationCurve(s, p.name()));
            }
        }
        return JSON.writeValueAsString(root) + "\n";
    }

    /**
     * Appends {@code m} to {@code rows} as a tidy row object: scenario, policy, metric, mean,
     * ci_low, ci_high (null where undefined) and n. Shared with the dialogue evaluation's json.
     */
    public static void addRow(ArrayNode rows, MetricResult m) {
        ObjectNode o = rows.addObject();
        o.put("scenario", m.scenario());
        o.put("policy", m.policy());
        o.put("metric", m.metric());
        putNumber(o, "mean", m.mean());
        putNumber(o, "ci_low", m.ciLow());
        putNumber(o, "ci_high", m.ciHigh());
        o.put("n", m.n());
    }

    /** JSON has no NaN: an undefined value is null. */
    private static void putNumber(ObjectNode o, String k, double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) o.putNull(k); else o.put(k, v);
    }

    private static void putArray(ObjectNode o, String k, double[] v) {
        ArrayNode a = o.putArray(k);
        for (double x : v) {
            if (Double.isNaN(x)) a.addNull(); else a.add(x);
        }
    }
}
