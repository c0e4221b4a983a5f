package io.fdkvc.engine.chat;

import io.fdkvc.engine.tokenizer.TokenDecoder;
import java.util.List;

/**
 * The text of a reply as it is generated, for printing while it grows: decodes tokens (holding
 * back unfinished UTF-8 characters, via {@link TokenDecoder}), ends the reply at the first stop
 * string ("\nUser:" for a plain-text chat), and releases only text that cannot turn out to be
 * the beginning of a stop string.
 */
public final class ReplyText {
    private final TokenDecoder decoder;
    private final List<String> stops;
    private final StringBuilder text = new StringBuilder();
    private int released;
    private boolean stopped;

    public ReplyText(TokenDecoder decoder, List<String> stops) {
        this.decoder = decoder;
        this.stops = stops;
    }

    /** Adds a generated token; returns the text that may be printed now (possibly empty). */
    public String add(int token) {
        if (stopped) return "";
        int before = text.length();
        decoder.next(token, text);
        return release(before, false);
    }

    /** Ends the reply: returns the text still held back (minus a stop string). */
    public String finish() {
        if (stopped) return "";
        int before = text.length();
        decoder.flush(text);
        return release(before, true);
    }

    /** Whether a stop string ended the reply. */
    public boolean stopped() {
        return stopped;
    }

    /** The reply so far, without a stop string. */
    public String text() {
        return text.toString();
    }

    private String release(int before, boolean all) {
        int longest = 0;
        for (String s : stops) longest = Math.max(longest, s.length());
        int from = Math.max(0, before - longest);
        int cut = -1;
        for (String s : stops) {
            int i = text.indexOf(s, from);
            if (i >= 0 && (cut < 0 || i < cut)) cut = i;
        }
        if (cut >= 0) {
            text.setLength(cut);
            stopped = true;
            return take(cut);
        }
        if (all) return take(text.length());
        // hold back the longest tail that is a prefix of a stop string
        int hold = 0;
        for (String s : stops) {
            for (int k = Math.min(s.length() - 1, text.length() - released); k > hold; k--) {
                if (tailEquals(s, k)) {
                    hold = k;
                    break;
                }
            }
        }
        return take(text.length() - hold);
    }

    /** Whether the last k chars of the text equal the first k of s. */
    private boolean tailEquals(String s, int k) {
        int o = text.length() - k;
        for (int i = 0; i < k; i++) if (text.charAt(o + i) != s.charAt(i)) return false;
        return true;
    }

    private String take(int upTo) {
        if (upTo <= released) return "";
        String s = text.substring(released, upTo);
        released = upTo;
        return s;
    }
}
