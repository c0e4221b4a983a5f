package io.fdkvc.engine.template;

import com.hubspot.jinjava.objects.SafeString;
import jinjava.de.odysseus.el.misc.NumberOperations;
import jinjava.de.odysseus.el.misc.TypeConverter;
import jinjava.de.odysseus.el.tree.impl.ast.AstBinary;
import jinjava.javax.el.ELException;

import java.util.Collection;
import java.util.Map;

/**
 * Jinja's {@code a + b}, which is Python's: strings join with strings, numbers add, lists
 * concatenate, and everything else raises a TypeError, a None or an undefined value (Jinjava's
 * null) above all: Jinja's default {@code Undefined} refuses arithmetic, so {@code 'x' + undefined}
 * is an error in Jinja where Jinjava's own operator would concatenate. A {@link Markup} operand
 * HTML-escapes the plain string added to it, as markupsafe's {@code Markup.__add__} does.
 */
final class PythonAddition extends AstBinary.SimpleOperator {
    static final PythonAddition OP = new PythonAddition();

    private PythonAddition() {}

    @Override
    protected Object apply(TypeConverter converter, Object a, Object b) {
        if (a instanceof SafeString || b instanceof SafeString) {
            if (isText(a) && isText(b)) {
                return Markup.concat(a, b);
            }
        } else if (a instanceof String x && b instanceof String y) {
            return x + y;
        } else if (a instanceof Collection<?> x && b instanceof Collection<?> y) {
            PythonValues.PyList joined = new PythonValues.PyList(x.size() + y.size());
            joined.addAll(x);
            joined.addAll(y);
            return joined;
        } else if (isNumber(a) && isNumber(b)) {
            return NumberOperations.add(converter, number(a), number(b));
        }
        throw new ELException("unsupported operand type(s) for +: " + typeName(a) + " and " + typeName(b));
    }

    private static boolean isText(Object v) {
        return v instanceof String || v instanceof SafeString;
    }

    /** Python's bool is an int: {@code True + 1 == 2}. */
    private static boolean isNumber(Object v) {
        return v instanceof Number || v instanceof Boolean;
    }

    private static Object number(Object v) {
        return v instanceof Boolean b ? (b ? 1L : 0L) : v;
    }

    /** Python's name of a value's type, quoted, for the TypeError's message (Jinjava's null is None or undefined). */
    private static String typeName(Object v) {
        return switch (v) {
            case null -> "None (or an undefined value)";
            case SafeString s -> "'Markup'";
            case String s -> "'str'";
            case Boolean b -> "'bool'";
            case Double d -> "'float'";
            case Float f -> "'float'";
            case Number n -> "'int'";
            case Map<?, ?> m -> "'dict'";
            case Collection<?> c -> "'list'";
            default -> "'" + v.getClass().getSimpleName() + "'";
        };
    }

    @Override
    public String toString() {
        return "+";
    }
}
