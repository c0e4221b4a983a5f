package io.fdkvc.engine.template;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * JSON as Python's {@code json.dumps(x, ensure_ascii=..., indent=indent, sort_keys=...)} writes
 * it, which is what Hugging Face's {@code tojson} filter does in chat templates: ", " and ": "
 * between items without indent ("," and ": " with one), non-ASCII characters as they are (by
 * default) or as backslash-u escapes ({@code ensure_ascii=True}), floats in Python's
 * {@code repr} ({@code 1.0}, {@code 1e-05}, {@code 1.5e+16}); a generator ({@link PythonGenerator}) is refused.
 */
final class PythonJson {
    private PythonJson() {}

    /** {@code indent < 0}: one line. */
    static String dumps(Object value, int indent, boolean sortKeys) {
        return dumps(value, indent, sortKeys, false);
    }

    /** {@code indent < 0}: one line; {@code ensureAscii}: every non-ASCII UTF-16 unit as a backslash-u escape. */
    static String dumps(Object value, int indent, boolean sortKeys, boolean ensureAscii) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, indent, sortKeys, 0);
        if (!ensureAscii) {
            return sb.toString();
        }
        // non-ASCII characters only occur inside JSON strings, so escaping them afterwards is the same
        StringBuilder ascii = new StringBuilder(sb.length() + 16);
        for (int i = 0; i < sb.length(); i++) {
            char c = sb.charAt(i);
            if (c < 0x80) {
                ascii.append(c);
            } else {
                ascii.append(String.format("\\u%04x", (int) c));
            }
        }
        return ascii.toString();
    }

    private static void write(StringBuilder sb, Object v, int indent, boolean sortKeys, int level) {
        switch (v) {
            case null -> sb.append("null");
            case Boolean b -> sb.append(b ? "true" : "false");
            case Double d -> sb.append(pyFloat(d));
            case Float f -> sb.append(pyFloat(f));
            case BigDecimal d -> sb.append(pyFloat(d.doubleValue()));
            case Number n -> sb.append(n instanceof BigInteger ? n.toString() : Long.toString(n.longValue()));
            case CharSequence s -> string(sb, s.toString());
            case PythonGenerator g -> throw new IllegalArgumentException("Object of type generator is not JSON serializable");
            case Map<?, ?> m -> {
                List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
                if (sortKeys) entries.sort((a, b) -> String.valueOf(a.getKey()).compareTo(String.valueOf(b.getKey())));
                container(sb, '{', '}', entries.size(), indent, level, i -> {
                    string(sb, String.valueOf(entries.get(i).getKey()));
                    sb.append(": ");
                    write(sb, entries.get(i).getValue(), indent, sortKeys, level + 1);
                });
            }
            case Collection<?> c -> {
                List<?> items = new ArrayList<>(c);
                container(sb, '[', ']', items.size(), indent, level, i -> write(sb, items.get(i), indent, sortKeys, level + 1));
            }
            case Object[] a -> container(sb, '[', ']', a.length, indent, level, i -> write(sb, a[i], indent, sortKeys, level + 1));
            default -> string(sb, v.toString());
        }
    }

    private static void container(StringBuilder sb, char open, char close, int n, int indent, int level,
                                  java.util.function.IntConsumer item) {
        sb.append(open);
        if (n == 0) {
            sb.append(close);
            return;
        }
        for (int i = 0; i < n; i++) {
            if (i > 0) sb.append(indent < 0 ? ", " : ",");
            if (indent >= 0) newline(sb, indent * (level + 1));
            item.accept(i);
        }
        if (indent >= 0) newline(sb, indent * level);
        sb.append(close);
    }

    private static void newline(StringBuilder sb, int spaces) {
        sb.append('\n');
        sb.repeat(' ', spaces);
    }

    private static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    /**
     * Python's {@code repr(float)}: the shortest digits that read back as the same double (as
     * Java's {@link Double#toString} finds them), fixed-point for decimal exponents -4..15, else
     * {@code d.ddde±XX}; json.dumps writes NaN and the infinities as NaN, Infinity, -Infinity.
     */
    static String pyFloat(double d) {
        if (Double.isNaN(d)) return "NaN";
        if (Double.isInfinite(d)) return d > 0 ? "Infinity" : "-Infinity";
        if (d == 0) return (1 / d < 0) ? "-0.0" : "0.0";
        BigDecimal exact = new BigDecimal(Double.toString(d)).stripTrailingZeros();
        String digits = exact.unscaledValue().abs().toString();
        int exp = digits.length() - 1 - exact.scale(); // decimal exponent of the first digit
        String sign = d < 0 ? "-" : "";
        if (exp >= -4 && exp < 16) {
            String plain = exact.abs().toPlainString();
            return sign + (plain.contains(".") ? plain : plain + ".0");
        }
        String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
        return sign + mantissa + "e" + (exp < 0 ? "-" : "+") + (Math.abs(exp) < 10 ? "0" : "") + Math.abs(exp);
    }
}
