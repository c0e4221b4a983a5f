package io.fdkvc.server;

import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyParams;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * A conversation's own cache policy, from the request extension
 * {@code "fdkvc": {"policy": NAME, "budget": N, "params": {NAME: VALUE, ...}}} that OpenAI
 * clients simply omit. Validated by the command line's rule ({@link PolicyParams#spec}); errors
 * are 400 naming the field ({@code fdkvc.policy}, {@code fdkvc.budget}, {@code fdkvc.params.gamma}).
 *
 * <p>Omitted parts come from the server's own policy: without {@code policy}, the server's policy
 * with its parameters (those given override them); without {@code budget}, the server's budget.
 * The budget is at most the operator's {@code --max-budget}; a policy that never evicts
 * ({@code full}) may be chosen only when the server itself runs one, since its memory has no bound.
 */
final class PolicyChoice {
    static final String FIELD = "fdkvc";
    private static final Set<String> KEYS = Set.of("policy", "budget", "params");

    private PolicyChoice() {}

    /** The spec a request asks for, or null when it names none (the session keeps its own, a new one takes the server's). */
    static PolicySpec parse(JsonNode ext, PolicySpec server, int maxBudget) {
        if (ext == null || ext.isNull()) return null;
        if (!ext.isObject()) throw ApiError.invalid(FIELD, "'fdkvc' must be an object with policy, budget and params");
        for (String k : ext.propertyNames()) {
            if (!KEYS.contains(k)) {
                throw ApiError.invalid(FIELD + "." + k, "unknown field 'fdkvc." + ApiError.excerpt(k).replace("'", "")
                        + "' (policy, budget, params)");
            }
        }
        JsonNode p = ext.get("policy");
        String name;
        Map<String, Object> params = new LinkedHashMap<>();
        if (p == null || p.isNull()) {
            name = server.kind().name();
            Map<String, Object> own = server.parameterValues();
            for (String free : PolicyParams.free(server.kind())) params.put(free, own.get(free));
        } else if (p.isString()) {
            name = p.asString();
        } else {
            throw ApiError.invalid(FIELD + ".policy", "'fdkvc.policy' must be a policy name (GET /v1/policies lists them)");
        }
        int budget = server.budget();
        JsonNode b = ext.get("budget");
        if (b != null && !b.isNull()) {
            if (!b.isIntegralNumber() || !b.canConvertToInt() || b.asInt() < 1 || b.asInt() > maxBudget) {
                throw ApiError.invalid(FIELD + ".budget", "'fdkvc.budget' must be an integer in 1.." + maxBudget
                        + " (this server's --max-budget)");
            }
            budget = b.asInt();
        }
        Map<String, Object> given = new LinkedHashMap<>();
        JsonNode ps = ext.get("params");
        if (ps != null && !ps.isNull()) {
            if (!ps.isObject()) throw ApiError.invalid(FIELD + ".params", "'fdkvc.params' must be an object of NAME: number");
            for (Map.Entry<String, JsonNode> e : ps.properties()) {
                JsonNode v = e.getValue();
                if (!v.isNumber()) {
                    throw ApiError.invalid(FIELD + ".params." + e.getKey(), "'fdkvc.params." + ApiError.excerpt(e.getKey()).replace("'", "")
                            + "' must be a number");
                }
                given.put(e.getKey(), v.numberValue());
            }
        }
        params.putAll(given);
        PolicySpec spec;
        try {
            spec = PolicyParams.spec(name, budget, params);
        } catch (ParameterException e) {
            String where = e.parameter().equals("policy") || e.parameter().equals("budget") ? FIELD + "." + e.parameter()
                    : given.containsKey(e.parameter()) ? FIELD + ".params." + e.parameter() : FIELD;
            throw ApiError.invalid(where, where + ": " + e.problem());
        }
        if (spec.kind().unbounded() && !server.kind().unbounded()) {
            throw ApiError.invalid(FIELD + ".policy", "fdkvc.policy: '" + name + "' never evicts, so its memory has no bound; "
                    + "this server runs " + server.name() + " (known: " + String.join(", ", PolicyRegistry.names()) + ")");
        }
        return spec;
    }
}
