package io.fdkvc.engine.template;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import com.hubspot.jinjava.lib.tag.Tag;
import com.hubspot.jinjava.tree.Node;
import com.hubspot.jinjava.tree.TagNode;
import io.fdkvc.core.InputException;
import jinjava.javax.el.CompositeELResolver;
import jinjava.javax.el.ExpressionFactory;

import java.time.Clock;
import java.time.ZonedDateTime;
import java.util.Map;

/**
 * The Jinja environment Hugging Face renders chat templates in, rebuilt on Jinjava:
 * {@code trim_blocks} and {@code lstrip_blocks} on, no trailing newline kept, the loop controls
 * {@code break}/{@code continue}, the globals {@code raise_exception} and {@code strftime_now},
 * Python's {@code +} ({@link PythonExpressions}), the {@code tojson} filter as Python's {@code json.dumps} writes it ({@link PythonJson}), the Python
 * string methods templates call ({@link PythonMethodResolver}: {@code .strip()}, {@code .split()},
 * {@code .startswith()}, ...) and extended slices ({@code messages[::-1]}, rewritten by
 * {@link PythonMethodResolver#rewriteSlices} into a call Jinjava can parse), the {@code generation} block of
 * transformers' AssistantTracker and filter blocks. Jinjava brings {@code namespace},
 * loops, macros and the usual filters itself.
 *
 * <p>One shared engine; rendering is thread-safe (each render has its own interpreter).
 */
final class JinjaEnvironment {
    private static final Jinjava JINJAVA = create();
    /** The message of the last {@code raise_exception} on this thread, during one render. */
    private static final ThreadLocal<String> RAISED = new ThreadLocal<>();
    /** The context variable that lists the caller's variables whose value is None (null). */
    private static final String NONE_NAMES = "fdkvc_none_names";
    /** The clock {@code strftime_now} reads, during one render on this thread. */
    private static final ThreadLocal<Clock> CLOCK = new ThreadLocal<>();

    private JinjaEnvironment() {}

    private static Jinjava create() {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PythonMethodResolver());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        JinjavaConfig config = JinjavaConfig.newBuilder()
                .withElResolver(resolver)
                .withTrimBlocks(true)
                // Jinja allows macros to call themselves (templates format nested JSON schemas so)
                .withEnableRecursiveMacroCalls(true)
                .withMaxMacroRecursionDepth(64)
                // a string literal is text: Jinja does not render "{{ }}" inside one
                .withNestedInterpretationEnabled(false)
                // lstrip_blocks is done on the source (PythonMethodResolver#rewriteSlices): Jinjava's
                // also strips before a tag in the middle of a line
                .withLstripBlocks(false)
                // Jinja drops one trailing newline of the template source (done in render), Jinjava's
                // option drops one of the output, which is not the same
                .withKeepTrailingNewline(true)
                // Jinja's semantics where Jinjava kept its old ones: whitespace control on expressions
                // ({{- x -}}) and parsed strictly, natural operator precedence, backslashes as in Python
                // strings, Python-style printing of values. (LegacyOverrides.ALL also requires
                // whitespace inside tags and evaluates map keys, which HF templates do not expect.)
                .withLegacyOverrides(LegacyOverrides.newBuilder()
                        .withUseTrimmingForNotesAndExpressions(true)
                        .withParseWhitespaceControlStrictly(true)
                        .withUseNaturalOperatorPrecedence(true)
                        .withHandleBackslashInQuotesOnly(true)
                        .withUsePyishObjectMapper(true)
                        .withKeepNullableLoopValues(true)
                        .withAllowAdjacentTextNodes(true)
                        .build())
                .build();
        ExpressionFactory expressions = PythonExpressions.factory();
        Jinjava j = new Jinjava(config) {
            @Override
            public ExpressionFactory getExpressionFactory() {
                return expressions;
            }
        };
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "raise_exception", JinjaEnvironment.class,
                "raiseException", Object.class));
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "strftime_now", JinjaEnvironment.class,
                "strftimeNow", String.class));
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", PythonMethodResolver.ITERATE, JinjaEnvironment.class,
                "iterate", Object.class));
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", PythonMethodResolver.ITERATE_NAMED,
                JinjaEnvironment.class, "iterateNamed", Object.class, String.class));
        j.getGlobalContext().registerFilter(new Trim());
        j.getGlobalContext().registerFilter(new ToJson());
        j.getGlobalContext().registerFilter(new Items());
        j.getGlobalContext().registerTag(new GenerationTag());
        j.getGlobalContext().registerTag(new FilterBlockTag());
        j.getGlobalContext().registerTag(new CommentTag());
        for (String name : PythonGenerator.FILTERS) {
            j.getGlobalContext().registerFilter(PythonGenerator.returningGenerator(j.getGlobalContext().getFilter(name)));
        }
        return j;
    }

    /**
     * Renders {@code template} (already passed through {@link PythonMethodResolver#rewriteSlices}) with
     * {@code context}.
     *
     * @throws InputException for a {@code raise_exception} (its message) or any fatal template error
     *                        (Jinjava's message and line)
     */
    static String render(String template, Map<String, Object> context, Clock clock) {
        RAISED.remove();
        CLOCK.set(clock);
        // templates ask "strftime_now is defined" before calling it: the globals are defined names
        context.putIfAbsent("strftime_now", "strftime_now");
        context.putIfAbsent("raise_exception", "raise_exception");
        java.util.Set<String> none = new java.util.HashSet<>();
        context.forEach((name, value) -> {
            if (value == null) none.add(name);
        });
        context.put(NONE_NAMES, none);
        RenderResult result;
        try {
            result = JINJAVA.renderForResult(template.endsWith("\n") ? template.substring(0, template.length() - 1) : template,
                    context);
        } catch (RuntimeException e) {
            throw new InputException("chat template failed: " + e.getMessage());
        } finally {
            CLOCK.remove();
            String raised = RAISED.get();
            RAISED.remove();
            if (raised != null) {
                throw new InputException("chat template refused the conversation: " + raised);
            }
        }
        for (TemplateError e : result.getErrors()) {
            if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
                throw new InputException("chat template error at line " + e.getLineno() + ": " + e.getMessage());
            }
        }
        return result.getOutput();
    }

    /** What a loop over {@code value} visits, as in Jinja: a mapping's keys (in order), anything else as it is. */
    public static Object iterate(Object value) {
        return value instanceof Map<?, ?> map ? new java.util.ArrayList<>(map.keySet()) : value;
    }

    /**
     * {@link #iterate} of the variable {@code name}: Jinja iterates an undefined name as empty but
     * fails on None, which Jinjava both reads as null; a variable the caller passed as null is
     * None (Hugging Face passes {@code tools=None} when the caller gives no tools).
     */
    public static Object iterateNamed(Object value, String name) {
        if (value == null) {
            JinjavaInterpreter interpreter = JinjavaInterpreter.getCurrent();
            Object none = interpreter == null ? null : interpreter.getContext().get(NONE_NAMES);
            if (none instanceof java.util.Set<?> names && names.contains(name)) {
                throw new IllegalArgumentException("'NoneType' object is not iterable");
            }
        }
        return iterate(value);
    }

    /** {@code raise_exception(message)}: remembers the message and stops the expression. */
    public static Object raiseException(Object message) {
        String text = String.valueOf(message);
        if (RAISED.get() == null) {
            RAISED.set(text);
        }
        throw new IllegalStateException("raise_exception: " + text);
    }

    /** {@code strftime_now(format)}: the render's clock's local time now in Python's strftime format. */
    public static String strftimeNow(String format) {
        Clock clock = CLOCK.get();
        return PythonStrftime.format(format, ZonedDateTime.now(clock == null ? Clock.systemDefaultZone() : clock));
    }

    /** The children of a tag, rendered. */
    private static String renderChildren(TagNode tag, JinjavaInterpreter interpreter) {
        StringBuilder sb = new StringBuilder();
        for (Node child : tag.getChildren()) {
            sb.append(child.render(interpreter).getValue());
        }
        return sb.toString();
    }

    /**
     * {@code {% generation %}...{% endgeneration %}}: transformers' AssistantTracker marks the
     * assistant's tokens with it (for training masks); rendering, it is just its content.
     */
    static final class GenerationTag implements Tag {
        @Override
        public String getName() {
            return "generation";
        }

        @Override
        public String interpret(TagNode tagNode, JinjavaInterpreter interpreter) {
            return renderChildren(tagNode, interpreter);
        }
    }

    /** A comment, which {@link PythonMethodResolver#rewriteSlices} turns into this tag: nothing. */
    static final class CommentTag implements Tag {
        @Override
        public String getName() {
            return PythonMethodResolver.COMMENT;
        }

        @Override
        public String getEndTagName() {
            return null;
        }

        @Override
        public String interpret(TagNode tagNode, JinjavaInterpreter interpreter) {
            return "";
        }
    }

    /** Jinja's filter block, {@code {% filter trim %}...{% endfilter %}}: the content through a filter without arguments. */
    static final class FilterBlockTag implements Tag {
        @Override
        public String getName() {
            return "filter";
        }

        @Override
        public String interpret(TagNode tagNode, JinjavaInterpreter interpreter) {
            String name = tagNode.getHelpers().strip();
            Filter filter = interpreter.getContext().getFilter(name);
            if (filter == null) {
                throw new IllegalArgumentException("unknown filter '" + name + "' in a filter block");
            }
            return String.valueOf(filter.filter(renderChildren(tagNode, interpreter), interpreter));
        }
    }

    /**
     * Jinja's {@code trim} filter, {@code x|trim} and {@code x|trim(chars)}: Python's
     * {@code str.strip}; an undefined value (null here) trims to "" as Jinja's Undefined does.
     */
    static final class Trim implements Filter {
        @Override
        public String getName() {
            return "trim";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            if (var == null) {
                return "";
            }
            String chars = args.length > 0 ? args[0] : null;
            return PythonMethodResolver.strip(String.valueOf(var), chars, true, true);
        }
    }

    /**
     * Jinja's {@code items} filter, {@code for k, v in d|items}: a mapping's (key, value) pairs in
     * order; nothing for an undefined value; a failure for anything else, as in Jinja.
     */
    static final class Items implements Filter {
        @Override
        public String getName() {
            return "items";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            if (var == null) {
                return java.util.List.of();
            }
            if (!(var instanceof Map<?, ?> map)) {
                throw new IllegalArgumentException("Can only get item pairs from a mapping.");
            }
            return new java.util.ArrayList<>(map.entrySet());
        }
    }

    /** Python's {@code json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...)}, as HF's tojson. */
    static final class ToJson implements Filter {
        @Override
        public String getName() {
            return "tojson";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, args, Map.of());
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object indent = kwargs.getOrDefault("indent", args.length > 0 ? args[0] : null);
            boolean sortKeys = Boolean.TRUE.equals(kwargs.get("sort_keys"));
            boolean ensureAscii = Boolean.TRUE.equals(kwargs.get("ensure_ascii"));
            return PythonJson.dumps(var, indent == null ? -1 : ((Number) indent).intValue(), sortKeys, ensureAscii);
        }
    }
}
