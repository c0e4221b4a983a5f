package io.fdkvc.engine.template;

import java.time.ZonedDateTime;
import java.time.format.TextStyle;
import java.util.Locale;

/**
 * Python's {@code strftime} directives (C locale) for {@code strftime_now}, which Llama 3.1+
 * templates call as {@code strftime_now("%d %b %Y")}. Covers the directives templates use, and
 * glibc's {@code %-d} (no padding); an unknown directive is written as it is, as glibc does.
 */
final class PythonStrftime {
    private PythonStrftime() {}

    static String format(String format, ZonedDateTime t) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                sb.append(c);
                continue;
            }
            char d = format.charAt(++i);
            boolean pad = true;
            if (d == '-' && i + 1 < format.length()) {
                pad = false;
                d = format.charAt(++i);
            }
            switch (d) {
                case 'Y' -> sb.append(t.getYear());
                case 'y' -> num(sb, t.getYear() % 100, 2, pad);
                case 'm' -> num(sb, t.getMonthValue(), 2, pad);
                case 'd' -> num(sb, t.getDayOfMonth(), 2, pad);
                case 'e' -> sb.append(pad && t.getDayOfMonth() < 10 ? " " : "").append(t.getDayOfMonth());
                case 'j' -> num(sb, t.getDayOfYear(), 3, pad);
                case 'H' -> num(sb, t.getHour(), 2, pad);
                case 'I' -> num(sb, (t.getHour() + 11) % 12 + 1, 2, pad);
                case 'M' -> num(sb, t.getMinute(), 2, pad);
                case 'S' -> num(sb, t.getSecond(), 2, pad);
                case 'p' -> sb.append(t.getHour() < 12 ? "AM" : "PM");
                case 'B' -> sb.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.US));
                case 'b', 'h' -> sb.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.US));
                case 'A' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.US));
                case 'a' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.US));
                case 'w' -> sb.append(t.getDayOfWeek().getValue() % 7);
                case 'u' -> sb.append(t.getDayOfWeek().getValue());
                case 'F' -> sb.append(format("%Y-%m-%d", t));
                case 'T' -> sb.append(format("%H:%M:%S", t));
                case '%' -> sb.append('%');
                default -> sb.append('%').append(pad ? "" : "-").append(d);
            }
        }
        return sb.toString();
    }

    private static void num(StringBuilder sb, int v, int width, boolean pad) {
        String s = Integer.toString(v);
        if (pad) sb.repeat('0', Math.max(0, width - s.length()));
        sb.append(s);
    }
}
