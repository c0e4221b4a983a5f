package io.fdkvc.engine.tokenizer;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Finds the strings of control and user-defined tokens in text: leftmost match, longest first. */
final class SpecialTokens {
    /** Candidates by first character, longest string first. */
    private final Map<Character, int[]> byFirstChar = new HashMap<>();
    private final BitSet firstChars = new BitSet(1 << 16);
    private final String[] tokens;

    SpecialTokens(String[] tokens, int[] types) {
        this.tokens = tokens;
        Map<Character, List<Integer>> lists = new HashMap<>();
        Map<String, Boolean> seen = new HashMap<>();
        for (int id = 0; id < tokens.length; id++) {
            String s = tokens[id];
            boolean special = types[id] == Tokenizer.CONTROL || types[id] == Tokenizer.USER_DEFINED;
            if (!special || s.isEmpty() || seen.putIfAbsent(s, Boolean.TRUE) != null) {
                continue;
            }
            lists.computeIfAbsent(s.charAt(0), c -> new ArrayList<>()).add(id);
            firstChars.set(s.charAt(0));
        }
        lists.forEach((c, ids) -> {
            ids.sort(Comparator.comparingInt((Integer id) -> -tokens[id].length()).thenComparingInt(id -> id));
            byFirstChar.put(c, ids.stream().mapToInt(Integer::intValue).toArray());
        });
    }

    boolean isEmpty() {
        return byFirstChar.isEmpty();
    }

    /**
     * The first special token at or after {@code from}: {@code (start << 32) | id}, or -1.
     * Packed into a long so that the scan allocates nothing.
     */
    long find(String text, int from) {
        for (int pos = from; pos < text.length(); pos++) {
            char c = text.charAt(pos);
            if (!firstChars.get(c)) {
                continue;
            }
            for (int id : byFirstChar.get(c)) {
                if (text.startsWith(tokens[id], pos)) {
                    return ((long) pos << 32) | id;
                }
            }
        }
        return -1;
    }
}
