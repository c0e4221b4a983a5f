package io.fdkvc.core.policy;

import io.fdkvc.core.param.ParamBinder;
import io.fdkvc.core.param.ParameterException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * Every policy by name: {@link BuiltinPolicies} first, then those of every
 * {@link PolicyProvider} on the class path ({@link ServiceLoader}), in the order found. Loaded
 * once, on first use.
 */
public final class PolicyRegistry {

    /** Creates one per-stream instance from a validated parameter record. */
    @FunctionalInterface
    public interface Factory {
        Policy create(String name, int budget, Record params);
    }

    /**
     * One registered policy: its name, a one-line description, its defaults (the parameter
     * record, which validates in its compact constructor and documents its components with
     * {@link io.fdkvc.core.param.Doc}), the parameters its definition pins, and its factory.
     * Validated at construction: a lowercase name of letters, digits and dashes; pinned values
     * that the parameter record accepts.
     */
    public record Kind(String name, String description, Record defaults, Map<String, Object> pinned, Factory factory) {
        public Kind {
            Objects.requireNonNull(name, "name");
            if (!name.matches("[a-z0-9][a-z0-9._-]{0,63}")) {
                throw new IllegalArgumentException("policy name '" + name + "': lowercase letters, digits, '.', '_' and '-', at most 64");
            }
            Objects.requireNonNull(description, "description");
            Objects.requireNonNull(defaults, "defaults");
            Objects.requireNonNull(factory, "factory");
            pinned = Collections.unmodifiableMap(new LinkedHashMap<>(pinned));
            ParamBinder.bind(defaults, pinned); // every pinned value names a parameter and is in its range
        }

        /** The parameters, in declaration order, with their defaults (a pinned one's value, marked fixed). */
        public List<Parameter> parameters() {
            List<Parameter> out = new ArrayList<>();
            for (ParamBinder.Description d : ParamBinder.describe(defaults)) {
                Object p = pinned.get(d.name());
                out.add(new Parameter(d.name(), d.type(), p != null ? p : d.defaultValue(), p != null, d.doc(), d.range()));
            }
            return out;
        }

        /** Whether the policy never evicts (its streams grow without bound). */
        public boolean unbounded() {
            // a budget the defaults accept (streaming's sinks < budget), for a throwaway instance
            return factory.create(name, 1024, defaults).unbounded();
        }
    }

    /**
     * One parameter of a registered policy, as {@code fdkvc policies} lists it.
     *
     * @param type         {@code double}, {@code int} or {@code long}
     * @param defaultValue the default, or the value the policy pins
     * @param fixed        whether the policy pins it (a user may not set it)
     * @param range        the valid range as documented ("(0,1]", "&gt;= 1"), or ""
     */
    public record Parameter(String name, String type, Object defaultValue, boolean fixed, String doc, String range) {}

    private static final class Holder {
        static final Map<String, Kind> KINDS = load();
    }

    private PolicyRegistry() {}

    private static Map<String, Kind> load() {
        Map<String, Kind> kinds = new LinkedHashMap<>();
        add(kinds, new BuiltinPolicies());
        try {
            for (PolicyProvider p : ServiceLoader.load(PolicyProvider.class, PolicyRegistry.class.getClassLoader())) {
                if (p.getClass() != BuiltinPolicies.class) add(kinds, p);
            }
        } catch (ServiceConfigurationError e) {
            throw new IllegalStateException("a policy provider on the class path cannot be loaded: " + e.getMessage(), e);
        }
        return Collections.unmodifiableMap(kinds);
    }

    private static void add(Map<String, Kind> kinds, PolicyProvider p) {
        for (Kind k : p.kinds()) {
            if (kinds.putIfAbsent(k.name(), k) != null) {
                throw new IllegalStateException("policy provider " + p.getClass().getName() + " registers '" + k.name()
                        + "', a name already taken");
            }
        }
    }

    /** All policy names, in registry order. */
    public static List<String> names() {
        return new ArrayList<>(Holder.KINDS.keySet());
    }

    public static List<Kind> kinds() {
        return new ArrayList<>(Holder.KINDS.values());
    }

    /** @throws ParameterException naming {@code policy} for an unknown name */
    public static Kind kind(String name) {
        Kind k = name == null ? null : Holder.KINDS.get(name);
        if (k == null) {
            throw new ParameterException("policy", "unknown policy '" + io.fdkvc.core.Untrusted.excerpt(String.valueOf(name))
                    + "' (known: " + String.join(", ", names()) + ")");
        }
        return k;
    }

    /** A validated spec with every parameter at its default. */
    public static PolicySpec spec(String name, int budget) {
        return spec(name, budget, Map.of());
    }

    /**
     * A validated spec: the policy's defaults, its pinned values, then {@code params}. A value
     * that contradicts a pinned one is refused rather than silently overridden.
     *
     * @throws ParameterException naming the offending parameter
     */
    public static PolicySpec spec(String name, int budget, Map<String, ?> params) {
        return template(name, params).spec(budget);
    }

    /**
     * The policy with its parameters bound and validated, before a budget is chosen (an
     * evaluation that gives each dialogue its own budget makes one spec per budget from it).
     *
     * @throws ParameterException naming the offending parameter
     */
    public static PolicyTemplate template(String name, Map<String, ?> params) {
        Kind k = kind(name);
        Map<String, Object> values = new LinkedHashMap<>(k.pinned());
        for (Map.Entry<String, ?> e : params.entrySet()) {
            Object pinned = k.pinned().get(e.getKey());
            if (pinned != null) {
                Object given = e.getValue();
                double g;
                try {
                    g = given instanceof Number n ? n.doubleValue() : Double.parseDouble(String.valueOf(given).trim());
                } catch (NumberFormatException ex) {
                    throw new ParameterException(e.getKey(), "must be a number, got '" + io.fdkvc.core.Untrusted.excerpt(String.valueOf(given)) + "'");
                }
                if (g != ((Number) pinned).doubleValue()) {
                    throw new ParameterException(e.getKey(), "is fixed at " + pinned + " by policy '" + name + "', got " + given);
                }
            }
            values.put(e.getKey(), e.getValue());
        }
        return new PolicyTemplate(name, ParamBinder.bind(k.defaults(), values), k);
    }
}
