package io.fdkvc.engine.template;

import com.hubspot.jinjava.objects.SafeString;

/**
 * Jinja's {@code Markup} (markupsafe), the string {@code |safe} returns, on Jinjava's
 * {@link SafeString}: text known to be safe HTML. Adding a plain string to it escapes that string
 * first, whichever side it is on, and the sum is Markup again; this holds even with autoescaping
 * off, as Hugging Face renders, so {@code "name: "|safe + tool|tojson} prints the JSON's quotes as
 * {@code &#34;}. Printing Markup prints its text unchanged.
 */
final class Markup {
    private Markup() {}

    /** {@code a + b} where at least one is Markup and both are strings. */
    static SafeString concat(Object a, Object b) {
        return new SafeString(escape(a) + escape(b));
    }

    /** markupsafe's {@code escape}: Markup as it is, a plain string with {@code & < > " '} as entities. */
    static String escape(Object v) {
        if (v instanceof SafeString s) {
            return s.getValue();
        }
        String text = String.valueOf(v);
        StringBuilder sb = null;
        for (int i = 0; i < text.length(); i++) {
            String entity = switch (text.charAt(i)) {
                case '&' -> "&amp;";
                case '<' -> "&lt;";
                case '>' -> "&gt;";
                case '"' -> "&#34;";
                case '\'' -> "&#39;";
                default -> null;
            };
            if (entity != null && sb == null) {
                sb = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (sb != null) {
                if (entity != null) sb.append(entity);
                else sb.append(text.charAt(i));
            }
        }
        return sb == null ? text : sb.toString();
    }
}
