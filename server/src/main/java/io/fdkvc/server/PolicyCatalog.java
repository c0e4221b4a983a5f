package io.fdkvc.server;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code GET /v1/policies}: the policy registry as {@code fdkvc policies} lists it (the same
 * {@link PolicyRegistry.Kind#parameters()}), with what this server allows a request to choose
 * ({@link PolicyChoice}): its default policy, its {@code --max-budget}, and whether each policy
 * may be chosen.
 */
final class PolicyCatalog {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private PolicyCatalog() {}

    static ObjectNode of(PolicySpec serverPolicy, int maxBudget) {
        ObjectNode root = JSON.createObjectNode();
        root.put("object", "list");
        ObjectNode d = root.putObject("default");
        d.put("policy", serverPolicy.kind().name());
        d.put("budget", serverPolicy.budget());
        put(d.putObject("params"), serverPolicy.parameterValues());
        root.put("maxBudget", maxBudget);
        boolean serverUnbounded = serverPolicy.kind().unbounded();
        ArrayNode data = root.putArray("data");
        for (PolicyRegistry.Kind k : PolicyRegistry.kinds()) {
            ObjectNode o = data.addObject();
            o.put("name", k.name());
            o.put("object", "policy");
            o.put("description", k.description());
            boolean unbounded = k.unbounded();
            o.put("unbounded", unbounded);
            o.put("selectable", !unbounded || serverUnbounded);
            ArrayNode ps = o.putArray("params");
            for (PolicyRegistry.Parameter p : k.parameters()) {
                ObjectNode q = ps.addObject();
                q.put("name", p.name());
                q.put("type", p.type());
                put(q, "default", p.defaultValue());
                q.put("fixed", p.fixed());
                q.put("range", p.range());
                q.put("description", p.doc());
            }
        }
        return root;
    }

    private static void put(ObjectNode o, Map<String, Object> values) {
        for (Map.Entry<String, Object> e : values.entrySet()) put(o, e.getKey(), e.getValue());
    }

    private static void put(ObjectNode o, String key, Object v) {
        switch (v) {
            case Integer i -> o.put(key, i);
            case Long l -> o.put(key, l);
            case Double x -> o.put(key, x);
            default -> o.put(key, String.valueOf(v));
        }
    }
}
