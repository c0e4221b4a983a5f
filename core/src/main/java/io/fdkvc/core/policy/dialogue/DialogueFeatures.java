package io.fdkvc.core.policy.dialogue;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

/**
 * The entry embedding {@code fdkvc-dialogue} reads in a conversation memory: a hashed bag of an
 * utterance's content words followed by a speaker tag.
 *
 * <p>Why lexical: the context a turn needs is mostly slot values (a restaurant's name, a time, a
 * city) that the turn itself does not say; sentence embeddings place "book it for 7 pm at Sushi
 * Bistro" near any other booking request and do not tell which values it carries. Word identity
 * does: two utterances that share a value share a bucket here.
 *
 * <p>Layout ({@link #DIMENSION} floats): {@code [0, LEXICAL)} one bucket per hashed content word
 * (lower-cased letters/digits runs, minus a short stop list), value 1, or 2 for a word with a
 * digit (times, dates, counts, prices) or a capital inside a sentence (names: restaurants,
 * cities, films; on sgd-train this lifted the tuning objective by 0.003), non-negative and not normalised, so that the element-wise
 * maximum over entries is the set of words they said; {@code LEXICAL} = 1 when the speaker is the
 * user, {@code LEXICAL + 1} = 1 for any other speaker (the assistant, the system); both 0 when the
 * speaker is unknown. A turn's query embedding carries the tag of the speaker who writes next.
 */
public final class DialogueFeatures {
    /** Hash buckets of the lexical part. */
    public static final int LEXICAL = 1024;
    /** The whole vector: lexical part plus two speaker slots. */
    public static final int DIMENSION = LEXICAL + 2;

    /** Who said an utterance. */
    public enum Speaker { USER, ASSISTANT, UNKNOWN }

    // Function words and dialogue fillers: they are in almost every turn and name no value.
    private static final Set<String> STOP = Set.of(
            "a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "for", "with", "from", "by", "as",
            "is", "are", "was", "were", "be", "been", "am", "do", "does", "did", "have", "has", "had", "will", "would",
            "can", "could", "should", "shall", "may", "might", "must", "i", "you", "he", "she", "it", "we", "they", "me",
            "my", "your", "our", "their", "its", "this", "that", "these", "those", "there", "here", "what", "which", "who",
            "how", "when", "where", "why", "any", "some", "all", "not", "no", "yes", "so", "too", "also", "just", "very",
            "please", "thanks", "thank", "ok", "okay", "sure", "great", "good", "like", "want", "need", "help", "else",
            "anything", "something", "that's", "s", "t", "m", "re", "ll", "d", "ve", "about", "up", "out", "one");

    private DialogueFeatures() {}

    /** A new vector for {@code text} said by {@code speaker}. */
    public static float[] of(String text, Speaker speaker) {
        float[] out = new float[DIMENSION];
        write(text, speaker, out, 0);
        return out;
    }

    /** Writes the features of {@code text} into {@code out[off, off + DIMENSION)} (overwriting them). */
    public static void write(String text, Speaker speaker, float[] out, int off) {
        java.util.Arrays.fill(out, off, off + DIMENSION, 0f);
        String s = text.toLowerCase(Locale.ROOT);
        int n = s.length();
        int i = 0;
        boolean sentenceStart = true;
        while (i < n) {
            while (i < n && !Character.isLetterOrDigit(s.charAt(i))) {
                char ch = s.charAt(i);
                if (ch == '.' || ch == '?' || ch == '!') sentenceStart = true;
                i++;
            }
            int from = i;
            // A capital inside a sentence marks a name (a restaurant, a city, a film): a slot value.
            boolean name = !sentenceStart && from < n && text.length() == n && Character.isUpperCase(text.charAt(from));
            sentenceStart = false;
            boolean digit = false;
            while (i < n && (Character.isLetterOrDigit(s.charAt(i)) || (s.charAt(i) == '\'' && i + 1 < n && Character.isLetter(s.charAt(i + 1))))) {
                digit |= Character.isDigit(s.charAt(i));
                i++;
            }
            if (i == from) continue;
            String w = s.substring(from, i);
            if (STOP.contains(w)) continue;
            int b = bucket(w);
            out[off + b] = Math.max(out[off + b], digit || name ? 2f : 1f);
        }
        switch (speaker) {
            case USER -> out[off + LEXICAL] = 1f;
            case ASSISTANT -> out[off + LEXICAL + 1] = 1f;
            case UNKNOWN -> { }
        }
    }

    /** The speaker who writes after {@code s} in a two-party conversation. */
    public static Speaker next(Speaker s) {
        return switch (s) {
            case USER -> Speaker.ASSISTANT;
            case ASSISTANT -> Speaker.USER;
            case UNKNOWN -> Speaker.UNKNOWN;
        };
    }

    /** FNV-1a over the word's UTF-8 bytes: stable across JVMs and runs (String.hashCode is too, but mixes poorly in the low bits). */
    static int bucket(String w) {
        int h = 0x811c9dc5;
        for (byte x : w.getBytes(StandardCharsets.UTF_8)) {
            h ^= x & 0xff;
            h *= 0x01000193;
        }
        return Math.floorMod(h, LEXICAL);
    }
}
