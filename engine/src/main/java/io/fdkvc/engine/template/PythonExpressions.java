package io.fdkvc.engine.template;

import com.hubspot.jinjava.el.ExtendedSyntaxBuilder;
import com.hubspot.jinjava.el.TruthyTypeConverter;
import com.hubspot.jinjava.el.ext.AdditionOperator;
import com.hubspot.jinjava.el.ext.ExtendedParser;
import jinjava.de.odysseus.el.ExpressionFactoryImpl;
import jinjava.de.odysseus.el.tree.TreeStore;
import jinjava.de.odysseus.el.tree.impl.Parser;
import jinjava.de.odysseus.el.tree.impl.ast.AstBinary;
import jinjava.de.odysseus.el.tree.impl.ast.AstNode;
import jinjava.javax.el.ExpressionFactory;

/**
 * The expression language Jinjava parses template expressions with, with Jinja's operators where
 * Jinjava's differ: {@code +} is {@link PythonAddition}. Jinjava's parser names its operators as
 * constants, so this parser swaps them as it builds each binary node; everything else (filters,
 * tests, literals, precedence) stays Jinjava's. Like Jinjava's own factory it caches no parsed
 * expressions.
 */
final class PythonExpressions {
    private PythonExpressions() {}

    static ExpressionFactory factory() {
        return new ExpressionFactoryImpl(new TreeStore(new Builder(), null), new TruthyTypeConverter());
    }

    private static final class Builder extends ExtendedSyntaxBuilder {
        /** The features Jinjava's own factory gives its builder (EL's JEE6 profile). */
        Builder() {
            super(Feature.METHOD_INVOCATIONS, Feature.VARARGS);
        }

        @Override
        protected Parser createParser(String expression) {
            return new ExtendedParser(this, expression) {
                @Override
                protected AstBinary createAstBinary(AstNode left, AstNode right, AstBinary.Operator operator) {
                    return super.createAstBinary(left, right, operator == AdditionOperator.OP ? PythonAddition.OP : operator);
                }
            };
        }
    }
}
