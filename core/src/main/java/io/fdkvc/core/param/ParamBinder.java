package io.fdkvc.core.param;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Binds named values (from JSON, the command line or code) onto a parameter record: each
 * component takes the given value or its default, and the record's compact constructor validates.
 * Components may be {@code double}, {@code int} or {@code long}; values may be numbers or strings.
 */
public final class ParamBinder {
    private ParamBinder() {}

    /** One documented parameter of a record, for help texts. */
    public record Description(String name, String type, Object defaultValue, String doc, String range) {}

    /** The components of {@code defaults} by name, in declaration order. */
    public static Map<String, Object> values(Record defaults) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (RecordComponent rc : defaults.getClass().getRecordComponents()) {
            out.put(rc.getName(), read(rc, defaults));
        }
        return out;
    }

    public static List<Description> describe(Record defaults) {
        List<Description> out = new ArrayList<>();
        for (RecordComponent rc : defaults.getClass().getRecordComponents()) {
            Doc doc = rc.getAnnotation(Doc.class);
            out.add(new Description(rc.getName(), rc.getType().getSimpleName(), read(rc, defaults),
                    doc == null ? "" : doc.value(), doc == null ? "" : doc.range()));
        }
        return out;
    }

    /**
     * A copy of {@code defaults} with the named values replaced.
     *
     * @throws ParameterException for an unknown name, a value of the wrong type, or one the record refuses
     */
    public static <R extends Record> R bind(R defaults, Map<String, ?> overrides) {
        @SuppressWarnings("unchecked")
        Class<R> type = (Class<R>) defaults.getClass();
        RecordComponent[] comps = type.getRecordComponents();
        for (String key : overrides.keySet()) {
            boolean known = false;
            for (RecordComponent rc : comps) known |= rc.getName().equals(key);
            if (!known) {
                List<String> names = new ArrayList<>();
                for (RecordComponent rc : comps) names.add(rc.getName());
                throw new ParameterException(key, "unknown parameter (known: " + String.join(", ", names) + ")");
            }
        }
        Object[] args = new Object[comps.length];
        Class<?>[] types = new Class<?>[comps.length];
        for (int i = 0; i < comps.length; i++) {
            RecordComponent rc = comps[i];
            types[i] = rc.getType();
            args[i] = overrides.containsKey(rc.getName())
                    ? convert(rc.getName(), rc.getType(), overrides.get(rc.getName()))
                    : read(rc, defaults);
        }
        try {
            Constructor<R> ctor = type.getDeclaredConstructor(types);
            return ctor.newInstance(args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException re) throw re;
            throw new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot construct " + type.getName(), e);
        }
    }

    private static Object read(RecordComponent rc, Record r) {
        try {
            return rc.getAccessor().invoke(r);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static Object convert(String name, Class<?> type, Object v) {
        if (v == null) throw new ParameterException(name, "must not be null");
        if (type == double.class) {
            double d;
            if (v instanceof Number n) d = n.doubleValue();
            else if (v instanceof String s) d = parseDouble(name, s);
            else throw new ParameterException(name, "must be a number, got " + describe(v));
            if (!Double.isFinite(d)) throw new ParameterException(name, "must be a finite number, got " + v);
            return d;
        }
        if (type == int.class || type == long.class) {
            long l;
            if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
                l = ((Number) v).longValue();
            } else if (v instanceof BigInteger bi) {
                if (bi.bitLength() > 63) throw new ParameterException(name, "is out of range: " + v);
                l = bi.longValue();
            } else if (v instanceof Number n) {
                BigDecimal bd = new BigDecimal(n.toString());
                try {
                    l = bd.longValueExact();
                } catch (ArithmeticException e) {
                    throw new ParameterException(name, "must be an integer, got " + v);
                }
            } else if (v instanceof String s) {
                try {
                    l = Long.parseLong(s.trim());
                } catch (NumberFormatException e) {
                    throw new ParameterException(name, "must be an integer, got '" + s + "'");
                }
            } else {
                throw new ParameterException(name, "must be an integer, got " + describe(v));
            }
            if (type == int.class) {
                if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) throw new ParameterException(name, "is out of range: " + v);
                return (int) l;
            }
            return l;
        }
        throw new IllegalStateException("unsupported parameter type " + type + " for " + name);
    }

    private static double parseDouble(String name, String s) {
        try {
            return Double.parseDouble(s.trim());
        } catch (NumberFormatException e) {
            throw new ParameterException(name, "must be a number, got '" + s + "'");
        }
    }

    private static String describe(Object v) {
        if (v instanceof String) return "a string";
        if (v instanceof Boolean) return "a boolean";
        if (v instanceof Map) return "an object";
        if (v instanceof List) return "an array";
        return v.getClass().getSimpleName();
    }
}
