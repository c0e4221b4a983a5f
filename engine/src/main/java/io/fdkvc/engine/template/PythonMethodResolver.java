package io.fdkvc.engine.template;

import io.fdkvc.core.InputException;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELException;
import jinjava.javax.el.ELResolver;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;

/**
 * The Python methods Hugging Face chat templates call on strings ({@code content.strip()},
 * {@code content.split('</think>')[-1]}, {@code content.startswith('<tool_response>')}, ...),
 * with Python's semantics rather than Java's ({@code split} takes a literal separator, not a regex,
 * and keeps empty parts; {@code strip(chars)} strips those characters), and Python slices with a
 * step ({@code messages[::-1]}), which Jinjava cannot parse: {@link #rewriteSlices} turns every
 * subscript slice into a call of {@code fdkvc_slice(start, stop, step)} that this resolver answers.
 * Methods it does not know fall through to Jinjava's own resolvers.
 */
final class PythonMethodResolver extends ELResolver {
    static final String SLICE = "fdkvc_slice";

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (!(method instanceof String name) || base == null) {
            return null;
        }
        Object[] p = params == null ? new Object[0] : params;
        Object result;
        if (base instanceof String s) {
            result = string(s, name, p);
        } else if (name.equals(APPEND) && base instanceof List<?> list) {
            @SuppressWarnings("unchecked")
            List<Object> items = (List<Object>) list;
            items.add(p.length > 0 ? p[0] : null);
            result = "";
        } else if (base instanceof List<?> && LIST_MUTATORS.contains(name)) {
            throw new ELException("access to attribute '" + name + "' of 'list' object is unsafe.");
        } else if (base instanceof java.util.Map<?, ?> && DICT_MUTATORS.contains(name)) {
            throw new ELException("access to attribute '" + name + "' of 'dict' object is unsafe.");
        } else if (name.equals(SLICE) && (base instanceof Collection<?> || base instanceof Object[])) {
            List<Object> items = base instanceof Collection<?> c ? new ArrayList<>(c) : new ArrayList<>(List.of((Object[]) base));
            result = slice(items, p);
        } else {
            return null;
        }
        if (result == NOT_MINE) {
            return null;
        }
        context.setPropertyResolved(true);
        return result;
    }

    private static final Object NOT_MINE = new Object();

    /**
     * The list method the loop-filter rewrite calls ({@link #unrollLoopFilter}); templates themselves
     * cannot change a list or dict: Hugging Face renders in Jinja's immutable sandbox, where
     * {@code .append()}, {@code .update()}, ... raise a SecurityError with these messages.
     */
    static final String APPEND = "fdkvc_append";
    private static final java.util.Set<String> LIST_MUTATORS = java.util.Set.of("append", "clear", "pop", "reverse", "insert",
            "sort", "extend", "remove");
    private static final java.util.Set<String> DICT_MUTATORS = java.util.Set.of("clear", "pop", "popitem", "setdefault", "update");

    private static Object string(String s, String name, Object[] p) {
        return switch (name) {
            case "strip" -> strip(s, chars(p, name), true, true);
            case "lstrip" -> strip(s, chars(p, name), true, false);
            case "rstrip" -> strip(s, chars(p, name), false, true);
            case "startswith" -> affix(s, arg(p, 0, name), true);
            case "endswith" -> affix(s, arg(p, 0, name), false);
            case "split" -> split(s, p.length > 0 ? (String) p[0] : null, p.length > 1 ? toInt(p[1]) : -1);
            case "rsplit" -> rsplit(s, p.length > 0 ? (String) p[0] : null, p.length > 1 ? toInt(p[1]) : -1);
            case "splitlines" -> new ArrayList<>(s.lines().toList());
            case "upper" -> s.toUpperCase(Locale.ROOT);
            case "lower" -> s.toLowerCase(Locale.ROOT);
            case "title" -> title(s);
            case "capitalize" -> s.isEmpty() ? s : s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1).toLowerCase(Locale.ROOT);
            case "replace" -> replace(s, str(arg(p, 0, name)), str(arg(p, 1, name)), p.length > 2 ? toInt(p[2]) : -1);
            case "find" -> (long) s.indexOf(str(arg(p, 0, name)));
            case "rfind" -> (long) s.lastIndexOf(str(arg(p, 0, name)));
            case "count" -> count(s, str(arg(p, 0, name)));
            case "join" -> join(s, arg(p, 0, name));
            case "format" -> format(s, p);
            case "isdigit" -> !s.isEmpty() && s.chars().allMatch(Character::isDigit);
            case "isalpha" -> !s.isEmpty() && s.chars().allMatch(Character::isLetter);
            case "isalnum" -> !s.isEmpty() && s.chars().allMatch(Character::isLetterOrDigit);
            case "isspace" -> !s.isEmpty() && s.chars().allMatch(c -> isSpace((char) c));
            case "isupper" -> s.chars().anyMatch(Character::isLetter) && s.equals(s.toUpperCase(Locale.ROOT));
            case "islower" -> s.chars().anyMatch(Character::isLetter) && s.equals(s.toLowerCase(Locale.ROOT));
            case SLICE -> {
                List<Object> chars = new ArrayList<>();
                s.codePoints().forEach(cp -> chars.add(Character.toString(cp)));
                StringBuilder sb = new StringBuilder();
                for (Object c : slice(chars, p)) sb.append(c);
                yield sb.toString();
            }
            default -> NOT_MINE;
        };
    }

    private static Object arg(Object[] p, int i, String method) {
        if (i >= p.length) {
            throw new ELException("str." + method + "() needs argument " + (i + 1));
        }
        return p[i];
    }

    private static String str(Object o) {
        return o == null ? "None" : o.toString();
    }

    private static String chars(Object[] p, String method) {
        return p.length == 0 || p[0] == null ? null : p[0].toString();
    }

    private static int toInt(Object o) {
        if (o instanceof Number n) return n.intValue();
        throw new ELException("expected an integer, got " + o);
    }

    /** Python's str.isspace() for one char: Unicode whitespace, including no-break spaces and U+0085. */
    static boolean isSpace(char c) {
        return Character.isWhitespace(c) || Character.isSpaceChar(c) || c == '\u0085';
    }

    static String strip(String s, String chars, boolean left, boolean right) {
        int from = 0, to = s.length();
        while (left && from < to && stripped(s.charAt(from), chars)) from++;
        while (right && to > from && stripped(s.charAt(to - 1), chars)) to--;
        return s.substring(from, to);
    }

    private static boolean stripped(char c, String chars) {
        return chars == null ? isSpace(c) : chars.indexOf(c) >= 0;
    }

    private static boolean affix(String s, Object what, boolean start) {
        if (what instanceof Collection<?> options) { // Python accepts a tuple of prefixes
            for (Object o : options) {
                if (affix(s, o, start)) return true;
            }
            return false;
        }
        String a = str(what);
        return start ? s.startsWith(a) : s.endsWith(a);
    }

    /** Python's str.split: a literal separator keeping empty parts; none: runs of whitespace, no empty parts. */
    static List<String> split(String s, String sep, int maxSplit) {
        List<String> out = new ArrayList<>();
        if (sep == null) {
            int i = 0, n = s.length();
            while (true) {
                while (i < n && isSpace(s.charAt(i))) i++;
                if (i == n) break;
                if (maxSplit >= 0 && out.size() == maxSplit) {
                    out.add(strip(s.substring(i), null, false, true));
                    break;
                }
                int j = i;
                while (j < n && !isSpace(s.charAt(j))) j++;
                out.add(s.substring(i, j));
                i = j;
            }
            return out;
        }
        if (sep.isEmpty()) throw new ELException("empty separator");
        int from = 0;
        while (maxSplit < 0 || out.size() < maxSplit) {
            int at = s.indexOf(sep, from);
            if (at < 0) break;
            out.add(s.substring(from, at));
            from = at + sep.length();
        }
        out.add(s.substring(from));
        return out;
    }

    static List<String> rsplit(String s, String sep, int maxSplit) {
        if (maxSplit < 0 || sep == null) {
            return sep == null && maxSplit >= 0 ? rsplitWhitespace(s, maxSplit) : split(s, sep, -1);
        }
        if (sep.isEmpty()) throw new ELException("empty separator");
        List<String> out = new ArrayList<>();
        int to = s.length();
        while (out.size() < maxSplit) {
            int at = s.lastIndexOf(sep, to - sep.length());
            if (at < 0) break;
            out.addFirst(s.substring(at + sep.length(), to));
            to = at;
        }
        out.addFirst(s.substring(0, to));
        return out;
    }

    private static List<String> rsplitWhitespace(String s, int maxSplit) {
        List<String> out = new ArrayList<>();
        int j = s.length();
        while (true) {
            while (j > 0 && isSpace(s.charAt(j - 1))) j--;
            if (j == 0) break;
            if (out.size() == maxSplit) {
                out.addFirst(strip(s.substring(0, j), null, true, false));
                break;
            }
            int i = j;
            while (i > 0 && !isSpace(s.charAt(i - 1))) i--;
            out.addFirst(s.substring(i, j));
            j = i;
        }
        return out;
    }

    private static String title(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean prevCased = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            sb.append(prevCased ? Character.toLowerCase(c) : Character.toTitleCase(c));
            prevCased = Character.isLetter(c);
        }
        return sb.toString();
    }

    private static String replace(String s, String old, String with, int count) {
        if (count < 0) return s.replace(old, with);
        StringBuilder sb = new StringBuilder();
        int from = 0;
        for (int k = 0; k < count; k++) {
            int at = s.indexOf(old, from);
            if (at < 0) break;
            sb.append(s, from, at).append(with);
            from = at + old.length();
            if (old.isEmpty()) {
                if (from < s.length()) sb.append(s.charAt(from));
                from++;
            }
        }
        if (from <= s.length()) sb.append(s, Math.min(from, s.length()), s.length());
        return sb.toString();
    }

    private static long count(String s, String sub) {
        if (sub.isEmpty()) return s.length() + 1L;
        long n = 0;
        for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) n++;
        return n;
    }

    private static String join(String sep, Object items) {
        if (!(items instanceof Iterable<?> it)) throw new ELException("str.join() needs a sequence");
        StringBuilder sb = new StringBuilder();
        boolean first = true;
        for (Object o : it) {
            if (!first) sb.append(sep);
            sb.append(str(o));
            first = false;
        }
        return sb.toString();
    }

    /**
     * Python's {@code str.format} with positional fields: "{}" takes the next argument, "{0}" the
     * one numbered; "{{" and "}}" are braces. Named fields and format specs are refused.
     */
    private static String format(String s, Object[] args) {
        StringBuilder sb = new StringBuilder();
        int next = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if ((c == '{' || c == '}') && i + 1 < s.length() && s.charAt(i + 1) == c) {
                sb.append(c);
                i++;
            } else if (c == '{') {
                int close = s.indexOf('}', i);
                String field = close < 0 ? null : s.substring(i + 1, close);
                if (field == null || !field.matches("\\d*")) {
                    throw new ELException("str.format(): only positional fields ({} or {0}) are supported, not '"
                            + (field == null ? s.substring(i) : "{" + field + "}") + "'");
                }
                int index = field.isEmpty() ? next++ : Integer.parseInt(field);
                if (index >= args.length) {
                    throw new ELException("str.format(): replacement index " + index + " out of range");
                }
                sb.append(str(args[index]));
                i = close;
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /** Python's items[start:stop:step] (each may be null), with its clamping of out-of-range bounds. */
    static List<Object> slice(List<Object> items, Object[] p) {
        int n = items.size();
        Object a = p.length > 0 ? p[0] : null, b = p.length > 1 ? p[1] : null, c = p.length > 2 ? p[2] : null;
        int step = c == null ? 1 : toInt(c);
        if (step == 0) throw new ELException("slice step cannot be zero");
        int start, stop;
        if (step > 0) {
            start = a == null ? 0 : clamp(toInt(a), n, 0, n);
            stop = b == null ? n : clamp(toInt(b), n, 0, n);
        } else {
            start = a == null ? n - 1 : clamp(toInt(a), n, -1, n - 1);
            stop = b == null ? -1 : clamp(toInt(b), n, -1, n - 1);
        }
        List<Object> out = new ArrayList<>();
        for (int i = start; step > 0 ? i < stop : i > stop; i += step) out.add(items.get(i));
        return out;
    }

    private static int clamp(int i, int n, int lo, int hi) {
        if (i < 0) i += n;
        return Math.max(lo, Math.min(hi, i));
    }

    // ---- rewriting slices -----------------------------------------------------------------

    /**
     * The template with every subscript slice inside {@code {{ }}} and {@code {% %}} rewritten as a
     * method call: {@code messages[::-1]} becomes {@code messages.fdkvc_slice(none, none, -1)},
     * {@code x[1:]} {@code x.fdkvc_slice(1, none, none)}. String literals and raw blocks are left
     * alone, comments become a tag that renders nothing ({@link #commentAsTag}), lstrip_blocks is
     * applied ({@link #lstripBlock}); a bracket that follows no value ({@code [1, 2]}, a list) is no subscript. Keyword
     * arguments get their value in parentheses ({@link #keywordArgument}).
     */
    static String rewriteSlices(String template) {
        StringBuilder out = new StringBuilder(template.length());
        int i = 0, n = template.length(), filters = 0, loops = 0;
        java.util.ArrayDeque<String> blocks = new java.util.ArrayDeque<>();
        // loop.previtem and loop.nextitem, which Jinjava lacks, read the list each loop goes over
        boolean neighbours = template.contains("previtem") || template.contains("nextitem");
        java.util.ArrayDeque<String> loopLists = new java.util.ArrayDeque<>();
        while (i < n) {
            int open = nextTag(template, i);
            if (open < 0) {
                out.append(template, i, n);
                break;
            }
            char kind = template.charAt(open + 1);
            String close = kind == '{' ? "}}" : kind == '%' ? "%}" : "#}";
            int end = kind == '#' ? template.indexOf(close, open + 2) : endOfExpression(template, open + 2, close);
            if (end < 0) { // unterminated: leave the rest for Jinjava to report
                out.append(template, i, n);
                break;
            }
            String inner = template.substring(open + 2, end);
            int textEnd = kind == '{' ? open : lstripBlock(template, i, open, inner);
            if (kind != '{' && inner.startsWith("+")) {
                inner = inner.substring(1);
            }
            if (kind == '#') {
                out.append(template, i, textEnd).append(commentAsTag(inner));
                i = end + 2;
                continue;
            }
            out.append(template, i, textEnd).append(template, open, open + 2);
            String statement = kind == '%' ? inner.replaceFirst("^[-+]?\\s*", "") : "";
            if (kind == '%') {
                trackBlocks(statement, blocks);
            }
            if (neighbours && !loopLists.isEmpty()) {
                inner = neighbourItems(inner, loopLists.peek());
            }
            if (statement.startsWith("endfor") && !loopLists.isEmpty()) {
                loopLists.pop();
            }
            if (statement.startsWith("for ") && hasLoopFilter(statement)) {
                loopLists.push("fdkvc_filtered_" + filters);
                out.append(unrollLoopFilter(inner, statement, filters++)).append(close);
                i = end + 2;
                continue;
            }
            // a macro's signature keeps its defaults as written (Jinjava parses them itself)
            boolean verbatim = statement.startsWith("macro ");
            String rewritten = verbatim ? inner : rewriteExpression(groupNotInTag(inner));
            if (statement.startsWith("for ")) {
                rewritten = iterateKeys(rewritten);
                if (neighbours) {
                    String list = "fdkvc_loop_" + loops++;
                    loopLists.push(list);
                    rewritten = listedLoop(rewritten, list);
                }
            }
            out.append(rewritten).append(close);
            i = end + 2;
            if (statement.matches("raw\\s*-?\\s*")) { // a raw block's text is Jinjava's to copy, tags and all
                java.util.regex.Matcher endRaw = END_RAW.matcher(template).region(i, n);
                int stop = endRaw.find() ? endRaw.start() : n;
                out.append(template, i, stop);
                i = stop;
            }
        }
        return out.toString();
    }

    /**
     * Jinja's lstrip_blocks, done here because Jinjava's strips the spaces before a block tag
     * even in the middle of a line: where the text {@code [start, open)} before a block or
     * comment tag ends in spaces and tabs that begin a line, the end of the text without them;
     * {@code open} itself where the tag is not first on its line or opts out with {@code +}.
     */
    private static int lstripBlock(String template, int start, int open, String inner) {
        if (inner.startsWith("+")) {
            return open;
        }
        int k = open;
        while (k > start && (template.charAt(k - 1) == ' ' || template.charAt(k - 1) == '\t')) {
            k--;
        }
        boolean lineStart = k == 0 || (k > start && template.charAt(k - 1) == '\n');
        return lineStart ? k : open;
    }

    private static final java.util.regex.Pattern END_RAW = java.util.regex.Pattern.compile("\\{%[-+]?\\s*endraw\\b");

    /** The name of the tag {@link #commentAsTag} writes, which renders nothing. */
    static final String COMMENT = "fdkvc_comment";

    /**
     * A comment ({@code {# inner #}}) as a tag that renders nothing, with the comment's {@code -}
     * marks: Jinja strips around a comment exactly as around a block tag (marks, trim_blocks,
     * lstrip_blocks), but Jinjava drops comments before it strips, so a {@code -%}} before a
     * comment would strip the text after the comment too.
     */
    private static String commentAsTag(String inner) {
        String before = inner.startsWith("-") ? "-" : "";
        String after = inner.length() > before.length() && inner.endsWith("-") ? "-" : "";
        return "{%" + before + " " + COMMENT + " " + after + "%}";
    }

    private static final java.util.Set<String> BLOCKS = java.util.Set.of("for", "if", "macro", "call", "filter",
            "generation", "block", "with", "raw", "autoescape");

    /**
     * Follows the nesting of block tags to refuse {@code for ... else}, which Jinjava renders
     * wrongly (its else branch runs after every item instead of only for an empty loop).
     */
    private static void trackBlocks(String statement, java.util.ArrayDeque<String> blocks) {
        String word = statement.split("[\\s(]", 2)[0].replaceAll("-$", "");
        if (BLOCKS.contains(word) || (word.equals("set") && !statement.contains("="))) {
            blocks.push(word);
        } else if (word.startsWith("end") && !blocks.isEmpty()) {
            blocks.pop();
        } else if (word.equals("else") && "for".equals(blocks.peek())) {
            throw new InputException("the template has a for ... else block, which Jinjava does not render as Jinja does");
        }
    }

    /**
     * {@code loop.previtem} and {@code loop.nextitem} as reads of the loop's list {@code list}
     * (none before the first and after the last item).
     */
    private static String neighbourItems(String tag, String list) {
        return tag.replace("loop.previtem", "(" + list + "[loop.index0 - 1] if loop.index0 > 0 else none)")
                .replace("loop.nextitem", "(" + list + "[loop.index0 + 1] if not loop.last else none)");
    }

    /**
     * A loop tag ({@code for T in I}, the text between "{%" and "%}") as two tags that first keep
     * the iterable in {@code list}, then loop over it: "{% set list = I -%}{%- for T in list %}".
     * The tag's whitespace control stays at its ends.
     */
    private static String listedLoop(String tag, String list) {
        int from = tag.indexOf("for ") + "for ".length();
        int[] in = topLevelWord(tag, "in", from);
        if (in == null) {
            return tag;
        }
        int end = tag.length();
        if (end > in[1] && (tag.charAt(end - 1) == '-' || tag.charAt(end - 1) == '+')) end--;
        String iterable = tag.substring(in[1], end).strip();
        if (iterable.endsWith(" recursive")) {
            return tag;
        }
        return tag.substring(0, tag.indexOf("for ")) + "set " + list + " = " + iterable + " -%}{%- for "
                + tag.substring(from, in[1]) + list + " " + tag.substring(end);
    }

    /** The global function that gives what a Jinja loop iterates: a mapping's keys, any other value itself. */
    static final String ITERATE = "fdkvc_iterate";
    /** {@link #ITERATE} for a bare name, given as text too. */
    static final String ITERATE_NAMED = "fdkvc_iterate_named";

    /** The call of {@link #ITERATE} (or, for a bare name, {@link #ITERATE_NAMED}) on {@code iterable}. */
    private static String iteration(String iterable) {
        return iterable.matches("[A-Za-z_][A-Za-z0-9_]*") ? ITERATE_NAMED + "(" + iterable + ", '" + iterable + "')"
                : ITERATE + "(" + iterable + ")";
    }

    /**
     * {@code for x in d}: Jinja iterates a mapping's keys, Jinjava its values. A loop with one
     * target gets its iterable through {@link #ITERATE} (with its name when it is a bare name);
     * {@code for k, v in ...} is left alone.
     * {@code tag} is the text between "{%" and "%}".
     */
    private static String iterateKeys(String tag) {
        int from = tag.indexOf("for ") + "for ".length();
        int[] in = topLevelWord(tag, "in", from);
        if (in == null || tag.substring(from, in[0]).contains(",")) {
            return tag;
        }
        int end = tag.length();
        if (end > in[1] && (tag.charAt(end - 1) == '-' || tag.charAt(end - 1) == '+')) end--;
        String iterable = tag.substring(in[1], end).strip();
        String suffix = "";
        if (iterable.endsWith(" recursive")) {
            iterable = iterable.substring(0, iterable.length() - " recursive".length()).strip();
            suffix = " recursive";
        }
        // a bare name also goes as text, so that a None (a name bound to null) can be told from an undefined name
        return tag.substring(0, in[1]) + iteration(iterable) + suffix + " " + tag.substring(end);
    }

    /**
     * A filtered loop ({@code for T in I if C}), which Jinjava would run over every item, as two
     * loops: the first collects the items that pass C into a list, the second loops over that list,
     * so that {@code loop.index}, {@code loop.last} and {@code loop.length} count the filtered items
     * as in Jinja. Returns the text between "{%" and "%}"; the tag's whitespace control stays at its
     * ends.
     */
    private static String unrollLoopFilter(String inner, String statement, int k) {
        String left = inner.stripLeading().startsWith("-") ? "-" : inner.stripLeading().startsWith("+") ? "+" : "";
        String right = inner.stripTrailing().endsWith("-") ? "-" : "";
        String body = statement.stripTrailing();
        if (!right.isEmpty()) body = body.substring(0, body.length() - 1).stripTrailing();
        int[] in = topLevelWord(body, "in", 0);
        int[] iff = in == null ? null : topLevelWord(body, "if", in[1]);
        if (iff == null) {
            throw new InputException("cannot read the filtered loop '" + statement.strip() + "'");
        }
        String target = body.substring("for ".length(), in[0]).strip();
        String iterable = rewriteExpression(body.substring(in[1], iff[0]));
        if (!target.contains(",")) {
            iterable = iteration(iterable.strip());
        }
        String condition = rewriteExpression(groupNot(body.substring(iff[1])));
        String list = "fdkvc_filtered_" + k;
        String item = target.contains(",") ? "[" + target + "]" : target;
        return left + " set " + list + " = [] -%}{%- for " + target + " in " + iterable + " -%}{%- if " + condition
                + " -%}{%- do " + list + "." + APPEND + "(" + item + ") -%}{%- endif -%}{%- endfor -%}{%- for " + target + " in "
                + list + " " + right;
    }

    /**
     * Where the keyword {@code word} stands alone (whitespace on both sides) at the top level of
     * {@code s}, outside strings and brackets, at or after {@code from}: {start, end} of the keyword
     * with its surrounding whitespace, or null.
     */
    private static int[] topLevelWord(String s, String word, int from) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\s+" + word + "\\s+").matcher(s);
        int depth = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\'' || c == '"') {
                int end = endOfString(s, i);
                if (end < 0) return null;
                i = end;
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                depth--;
            } else if (depth == 0 && i >= from && Character.isWhitespace(c) && m.region(i, s.length()).lookingAt()) {
                return new int[] {i, m.end()};
            }
        }
        return null;
    }

    /**
     * Whether a for statement has Jinja's loop filter: an "if" at the top level after "in" with no
     * "else" after it (which would make it a conditional expression).
     */
    static boolean hasLoopFilter(String statement) {
        StringBuilder bare = new StringBuilder(); // the statement with string literals and bracketed parts blanked
        int depth = 0;
        for (int i = 0; i < statement.length(); i++) {
            char c = statement.charAt(i);
            if (c == '\'' || c == '"') {
                int end = endOfString(statement, i);
                if (end < 0) break;
                i = end;
                bare.append(' ');
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                depth--;
            } else if (depth == 0) {
                bare.append(c);
            }
        }
        String b = " " + bare.toString().replaceAll("\\s+", " ") + " ";
        int in = b.indexOf(" in ");
        int iff = in < 0 ? -1 : b.indexOf(" if ", in + 3);
        return iff >= 0 && !b.substring(iff).contains(" else ");
    }

    private static int nextTag(String t, int from) {
        for (int i = t.indexOf('{', from); i >= 0 && i + 1 < t.length(); i = t.indexOf('{', i + 1)) {
            char c = t.charAt(i + 1);
            if (c == '{' || c == '%' || c == '#') return i;
        }
        return -1;
    }

    /** Where {@code close} ends the tag starting at {@code from}, skipping string literals; -1 if never. */
    private static int endOfExpression(String t, int from, String close) {
        for (int i = from; i < t.length(); i++) {
            char c = t.charAt(i);
            if (c == '\'' || c == '"') {
                i = endOfString(t, i);
                if (i < 0) return -1;
            } else if (t.startsWith(close, i)) {
                return i;
            }
        }
        return -1;
    }

    /** Index of the quote closing the literal that opens at {@code i}; -1 if unterminated. */
    private static int endOfString(String t, int i) {
        char q = t.charAt(i);
        for (int j = i + 1; j < t.length(); j++) {
            char c = t.charAt(j);
            if (c == '\\') j++;
            else if (c == q) return j;
        }
        return -1;
    }

    /** {@link #groupNot} on a tag's text, leaving its whitespace-control marks ("-", "+") at its ends. */
    private static String groupNotInTag(String inner) {
        int from = 0, to = inner.length();
        if (from < to && (inner.charAt(from) == '-' || inner.charAt(from) == '+')) from++;
        if (to > from && (inner.charAt(to - 1) == '-' || inner.charAt(to - 1) == '+')) to--;
        return inner.substring(0, from) + groupNot(inner.substring(from, to)) + inner.substring(to);
    }

    private static final java.util.Set<String> KEYWORDS = java.util.Set.of("and", "or", "not", "if", "elif", "else",
            "in", "is", "set", "for", "return", "with");

    /**
     * Jinja's unary {@code not} binds looser than comparisons and tests ({@code not x is defined}
     * is {@code not (x is defined)}, {@code not a|length == 1} is {@code not (a|length == 1)}) but
     * tighter than {@code and}/{@code or}; Jinjava applies it to the next operand alone. Each unary
     * {@code not} gets its operand in parentheses: up to the next top-level {@code and}, {@code or},
     * {@code if}, {@code else}, comma or closing bracket. {@code x not in y} and
     * {@code x is not t} are left alone.
     */
    static String groupNot(String e) {
        StringBuilder out = new StringBuilder(e.length() + 8);
        int n = e.length();
        for (int i = 0; i < n; ) {
            char c = e.charAt(i);
            if (c == '\'' || c == '"') {
                i = copyLiteral(e, i, out);
                continue;
            }
            if (c == 'n' && e.startsWith("not", i) && i + 3 < n && Character.isWhitespace(e.charAt(i + 3))
                    && (i == 0 || !isNameChar(e.charAt(i - 1))) && unaryPosition(out)) {
                int start = i + 3;
                int end = endOfNotOperand(e, start);
                out.append("not (").append(groupNot(e.substring(start, end).strip())).append(')');
                if (end < n && !Character.isWhitespace(e.charAt(end))) out.append(' ');
                i = end;
                continue;
            }
            out.append(c);
            i++;
        }
        return out.toString();
    }

    private static boolean isNameChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }

    /** Whether a "not" after {@code before} is unary: after nothing, an operator, a bracket or a keyword other than "is". */
    private static boolean unaryPosition(CharSequence before) {
        int k = before.length() - 1;
        while (k >= 0 && Character.isWhitespace(before.charAt(k))) k--;
        if (k < 0) return true;
        char c = before.charAt(k);
        if (!isNameChar(c)) {
            return c != ')' && c != ']' && c != '}' && c != '\'' && c != '"';
        }
        int j = k;
        while (j >= 0 && isNameChar(before.charAt(j))) j--;
        String word = before.subSequence(j + 1, k + 1).toString();
        return KEYWORDS.contains(word) && !word.equals("is");
    }

    /** Where the operand of a unary "not" starting at {@code from} ends. */
    private static int endOfNotOperand(String e, int from) {
        int depth = 0;
        for (int i = from; i < e.length(); i++) {
            char c = e.charAt(i);
            if (c == '\'' || c == '"') {
                int end = endOfString(e, i);
                if (end < 0) return e.length();
                i = end;
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth == 0) return i;
                depth--;
            } else if (depth == 0 && c == ',') {
                return i;
            } else if (depth == 0 && Character.isWhitespace(c)) {
                for (String stop : new String[] {"and", "or", "if", "else"}) {
                    int w = i + 1;
                    while (w < e.length() && Character.isWhitespace(e.charAt(w))) w++;
                    if (e.startsWith(stop, w) && (w + stop.length() == e.length() || !isNameChar(e.charAt(w + stop.length())))) {
                        return i;
                    }
                }
            }
        }
        return e.length();
    }

    /** Copies the string literal that opens at {@code i} to {@code out}; the index after it (the end if unterminated). */
    private static int copyLiteral(String e, int i, StringBuilder out) {
        int end = endOfString(e, i);
        int next = end < 0 ? e.length() : end + 1;
        out.append(e, i, next);
        return next;
    }

    static String rewriteExpression(String e) {
        StringBuilder out = new StringBuilder(e.length());
        int i = 0, n = e.length();
        while (i < n) {
            char c = e.charAt(i);
            if (c == '\'' || c == '"') {
                i = copyLiteral(e, i, out);
                continue;
            }
            if ((c == '+' || c == '-') && i + 1 < n && Character.isDigit(e.charAt(i + 1)) && endsWithOperand(out)) {
                // Jinjava scans "n+1" as n followed by the number +1; Jinja reads n + 1
                out.append(' ').append(c).append(' ');
                i++;
                continue;
            }
            if (c == '(') {
                int close = matching(e, i);
                if (close > 0) {
                    out.append('(');
                    List<String> args = topLevelParts(e.substring(i + 1, close), ',');
                    for (int k = 0; k < args.size(); k++) {
                        if (k > 0) out.append(',');
                        out.append(keywordArgument(args.get(k)));
                    }
                    out.append(')');
                    i = close + 1;
                    continue;
                }
            }
            if (c == '[' && followsValue(out)) {
                int close = matching(e, i);
                if (close > 0) {
                    List<String> parts = topLevelParts(e.substring(i + 1, close), ':');
                    if (parts.size() >= 2 && parts.size() <= 3) {
                        out.append('.').append(SLICE).append('(');
                        for (int k = 0; k < 3; k++) {
                            String part = k < parts.size() ? parts.get(k).strip() : "";
                            if (k > 0) out.append(", ");
                            out.append(part.isEmpty() ? "none" : rewriteExpression(part));
                        }
                        out.append(')');
                        i = close + 1;
                        continue;
                    }
                }
            }
            out.append(c);
            i++;
        }
        return out.toString();
    }

    /**
     * Whether the text so far ends right at an operand (a name, a number, ')' or ']') so that a
     * following '+' or '-' is binary; not after an exponent's 'e' ("1e-5").
     */
    private static boolean endsWithOperand(CharSequence s) {
        int k = s.length() - 1;
        if (k < 0) return false;
        char c = s.charAt(k);
        if (c == ')' || c == ']') return true;
        if (!Character.isLetterOrDigit(c) && c != '_') return false;
        int j = k;
        while (j >= 0 && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_' || s.charAt(j) == '.')) j--;
        String token = s.subSequence(j + 1, k + 1).toString();
        return !token.matches("[0-9][0-9.]*[eE]");
    }

    /** Whether the text so far ends with a value a subscript can follow: a name, a literal, ')' or ']'. */
    private static boolean followsValue(CharSequence s) {
        int k = s.length() - 1;
        while (k >= 0 && Character.isWhitespace(s.charAt(k))) k--;
        if (k < 0) return false;
        char c = s.charAt(k);
        if (c == ')' || c == ']' || c == '\'' || c == '"') return true;
        if (!Character.isLetterOrDigit(c) && c != '_') return false;
        // a keyword before a list literal ("in [1, 2]", "if [..]") is no value
        int j = k;
        while (j >= 0 && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) j--;
        String word = s.subSequence(j + 1, k + 1).toString();
        return !List.of("in", "if", "else", "and", "or", "not", "is", "return", "elif", "set").contains(word);
    }

    /** Index of the bracket closing the one at {@code open} (strings and nesting skipped); -1 if none. */
    private static int matching(String e, int open) {
        int depth = 0;
        for (int i = open; i < e.length(); i++) {
            char c = e.charAt(i);
            if (c == '\'' || c == '"') {
                i = endOfString(e, i);
                if (i < 0) return -1;
            } else if (c == '[' || c == '(' || c == '{') {
                depth++;
            } else if (c == ']' || c == ')' || c == '}') {
                if (--depth == 0) return c == (e.charAt(open) == '[' ? ']' : e.charAt(open) == '(' ? ')' : '}') ? i : -1;
            }
        }
        return -1;
    }

    private static final java.util.regex.Pattern KEYWORD = java.util.regex.Pattern.compile("(\\s*[A-Za-z_][A-Za-z0-9_]*\\s*=)(?!=)(.*)", java.util.regex.Pattern.DOTALL);

    /**
     * An argument of a call, rewritten; a keyword argument's value in parentheses: Jinjava binds
     * {@code n=x|length - 1} as {@code (n=x|length) - 1}, Jinja as {@code n=(x|length - 1)}.
     */
    private static String keywordArgument(String arg) {
        java.util.regex.Matcher m = KEYWORD.matcher(arg);
        if (m.matches() && !m.group(2).isBlank()) {
            return m.group(1) + "(" + rewriteExpression(m.group(2)) + ")";
        }
        return rewriteExpression(arg);
    }

    /** {@code inner} split at {@code sep} outside strings and brackets. */
    private static List<String> topLevelParts(String inner, char sep) {
        List<String> parts = new ArrayList<>();
        int depth = 0, start = 0;
        for (int i = 0; i < inner.length(); i++) {
            char c = inner.charAt(i);
            if (c == '\'' || c == '"') {
                int end = endOfString(inner, i);
                if (end < 0) return List.of(inner);
                i = end;
            } else if (c == '[' || c == '(' || c == '{') {
                depth++;
            } else if (c == ']' || c == ')' || c == '}') {
                depth--;
            } else if (c == sep && depth == 0) {
                parts.add(inner.substring(start, i));
                start = i + 1;
            }
        }
        parts.add(inner.substring(start));
        return parts;
    }

    // ---- the rest of ELResolver: this resolver only invokes methods ----

    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {}

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }
}
