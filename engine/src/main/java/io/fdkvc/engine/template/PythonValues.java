package io.fdkvc.engine.template;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The conversation's data as a template prints it: Python's {@code str()} of a dict or list is its
 * {@code repr} ({@code {'role': 'user', 'n': 1, 'x': None, 'ok': True}}), not Java's
 * {@code {role=user, ...}}. {@link #of} copies maps and lists into {@link Dict} and {@link PyList},
 * which print so; everything else stays as it is.
 */
final class PythonValues {
    private PythonValues() {}

    /** A JSON-like value with every map a {@link Dict} and every collection a {@link PyList}. */
    static Object of(Object value) {
        if (value instanceof Dict || value instanceof PyList) {
            return value;
        }
        if (value instanceof Map<?, ?> m) {
            Dict d = new Dict();
            m.forEach((k, v) -> d.put(String.valueOf(k), of(v)));
            return d;
        }
        if (value instanceof Collection<?> c) {
            PyList l = new PyList(c.size());
            for (Object o : c) {
                l.add(of(o));
            }
            return l;
        }
        return value;
    }

    /** A dict that prints as Python's repr. */
    static final class Dict extends LinkedHashMap<String, Object> {
        @Override
        public String toString() {
            return repr(this);
        }
    }

    /** A list that prints as Python's repr. */
    static final class PyList extends ArrayList<Object> {
        PyList(int capacity) {
            super(capacity);
        }

        @Override
        public String toString() {
            return repr(this);
        }
    }

    /** Python's {@code repr} of a value from JSON: None, True, 1, 1.5, 'text', [...], {...}. */
    static String repr(Object v) {
        StringBuilder sb = new StringBuilder();
        repr(sb, v);
        return sb.toString();
    }

    private static void repr(StringBuilder sb, Object v) {
        switch (v) {
            case null -> sb.append("None");
            case Boolean b -> sb.append(b ? "True" : "False");
            case Double d -> sb.append(PythonJson.pyFloat(d));
            case Float f -> sb.append(PythonJson.pyFloat(f));
            case CharSequence s -> string(sb, s.toString());
            case Map<?, ?> m -> {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) sb.append(", ");
                    repr(sb, e.getKey());
                    sb.append(": ");
                    repr(sb, e.getValue());
                    first = false;
                }
                sb.append('}');
            }
            case Collection<?> c -> {
                sb.append('[');
                boolean first = true;
                for (Object o : c) {
                    if (!first) sb.append(", ");
                    repr(sb, o);
                    first = false;
                }
                sb.append(']');
            }
            default -> sb.append(v);
        }
    }

    /** Python's string repr: single quotes unless the text has one and no double quote. */
    private static void string(StringBuilder sb, String s) {
        char q = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        sb.append(q);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c == q) {
                        sb.append('\\').append(c);
                    } else if (c < 0x20 || c == 0x7f) {
                        sb.append(String.format("\\x%02x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append(q);
    }
}
