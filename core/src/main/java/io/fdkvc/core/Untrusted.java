package io.fdkvc.core;

/**
 * The one place where text that came from outside (a file's bytes, a JSON field name, a model's
 * metadata key, an exception message) is made safe to print on one terminal line: control
 * characters (C0, DEL, C1, and the Unicode line/paragraph separators and bidirectional controls)
 * are escaped as {@code \n}, {@code \t} or {@code \}{@code uXXXX}, so no newline splits a message
 * and no escape sequence reaches the terminal, and excerpts are capped so that a 50 MB string
 * never becomes a 50 MB error line.
 */
public final class Untrusted {
    /** Characters an excerpt of untrusted text keeps before it is cut. */
    public static final int EXCERPT_CHARS = 100;
    /** Characters a whole error line keeps (the top-level handler's cap). */
    public static final int LINE_CHARS = 1000;

    private Untrusted() {}

    /** {@code text} escaped and cut to {@link #EXCERPT_CHARS}: for a piece of input quoted in a message. */
    public static String excerpt(CharSequence text) {
        return escape(text, EXCERPT_CHARS);
    }

    /** {@code text} escaped and cut to {@link #LINE_CHARS}: for a whole message. */
    public static String line(CharSequence text) {
        return escape(text, LINE_CHARS);
    }

    /**
     * {@code text} with every control character escaped, cut after {@code max} characters of
     * output with a note of how much was left out. Null reads as "null".
     */
    public static String escape(CharSequence text, int max) {
        if (text == null) return "null";
        int n = text.length();
        StringBuilder sb = new StringBuilder(Math.min(n, max) + 16);
        int i = 0;
        for (; i < n && sb.length() < max; i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\\' -> sb.append('\\');
                default -> {
                    if (isControl(c)) sb.append(String.format("\\u%04x", (int) c));
                    else if (Character.isHighSurrogate(c) && (i + 1 >= n || !Character.isLowSurrogate(text.charAt(i + 1)))) sb.append("\\ufffd");
                    else if (Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(text.charAt(i - 1)))) sb.append("\\ufffd");
                    else sb.append(c);
                }
            }
        }
        // never end on half a surrogate pair
        if (sb.length() > 0 && Character.isHighSurrogate(sb.charAt(sb.length() - 1))) {
            sb.setLength(sb.length() - 1);
            i--;
        }
        if (i < n) sb.append("...(").append(n - i).append(" more characters)");
        return sb.toString();
    }

    /** True for characters that must not reach a terminal raw. */
    static boolean isControl(char c) {
        return c < 0x20 || (c >= 0x7f && c <= 0x9f)
                || c == '\u2028' || c == '\u2029'                  // line and paragraph separators
                || (c >= '\u200e' && c <= '\u200f')                // LRM, RLM
                || (c >= '\u202a' && c <= '\u202e')                // bidi embeddings and overrides
                || (c >= '\u2066' && c <= '\u2069')                // bidi isolates
                || c == '\ufeff';                                  // BOM / zero-width no-break space
    }
}
