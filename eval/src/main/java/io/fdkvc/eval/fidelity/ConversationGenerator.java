package io.fdkvc.eval.fidelity;

import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.sampling.Sampler;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.eval.fidelity.ConversationScript.Probe;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Builds fidelity conversations from a model's own samples, for models that come without dialogue
 * data: {@code stories} stories interleaved over {@code turns} turns, turn k continuing story
 * k mod stories, each turn sampled (temperature 0.8, top-p 0.9, control tokens such as
 * end-of-text blocked) with its own story as the only context. With {@code named}, each story opens
 * with "Once upon a time, there was a little boy/girl named X." (distinct names in a
 * conversation) and each later turn of a story gets a probe at the first mention of its name, for
 * names that appear in no other story of the conversation. Turn lengths are drawn uniformly from
 * {@code [minTokens, maxTokens]}, redrawn until the conversation fits the model's trained context
 * (so the teacher is the model at its best). Everything follows from the seed.
 */
public final class ConversationGenerator {
    /** Names without a common prefix, so that one never matches inside another. */
    static final String[] BOYS = {"Tom", "Ben", "Max", "Jack", "Leo", "Bob", "Dan", "Sam", "Tim", "Joe"};
    static final String[] GIRLS = {"Lily", "Sue", "Amy", "Mia", "Anna", "Lucy", "Sara", "Kate", "Jane", "Zoe"};
    static final float TEMPERATURE = 0.8f, TOP_P = 0.9f;
    private static final float BLOCKED = -1e30f;

    /**
     * @param count     conversations
     * @param seed      seed of lengths, names and samples
     * @param stories   stories interleaved in a conversation
     * @param turns     turns of a conversation
     * @param minTokens shortest turn, in tokens
     * @param maxTokens longest turn
     * @param named     open each story with a named character and write probes
     */
    public record Options(int count, long seed, int stories, int turns, int minTokens, int maxTokens, boolean named) {
        public Options {
            if (count < 1 || count > 100_000) throw new InputException("--count: must be in 1..100000, got " + count);
            if (stories < 1 || stories > BOYS.length) throw new InputException("--stories: must be in 1.." + BOYS.length + ", got " + stories);
            if (turns < 2 || turns > 10_000) throw new InputException("--turns: must be in 2..10000, got " + turns);
            if (stories > turns) throw new InputException("--stories: " + stories + " stories need at least as many --turns, got " + turns);
            if (minTokens < 1 || maxTokens < minTokens) {
                throw new InputException("--turn-tokens: must be N or MIN..MAX with 1 <= MIN <= MAX, got " + minTokens + ".." + maxTokens);
            }
        }
    }

    private ConversationGenerator() {}

    public static List<ConversationScript> generate(Llama llama, Tokenizer tokenizer, Options o) {
        int context = llama.config().contextLength();
        int bos = tokenizer.bos();
        int first = bos >= 0 ? 1 : 0;
        if ((long) o.turns() * o.minTokens() + first > context) {
            throw new InputException("--turn-tokens: " + o.turns() + " turns of at least " + o.minTokens() + " tokens do not fit the model's "
                    + "trained context of " + context + " tokens");
        }
        int vocab = llama.config().vocabSize();
        boolean[] blocked = new boolean[vocab];
        for (int id = 0; id < vocab; id++) blocked[id] = id == bos || id == tokenizer.eos() || tokenizer.isControl(id);
        List<ConversationScript> out = new ArrayList<>();
        for (int c = 0; c < o.count(); c++) {
            SplittableRandom rng = new SplittableRandom(o.seed() * 0x9E3779B97F4A7C15L + c);
            int[] lengths = lengths(rng, o, context - first);
            String[] names = o.named() ? names(rng, o.stories()) : null;
            out.add(conversation(llama, tokenizer, o, c, rng, lengths, names, blocked));
        }
        return out;
    }

    private static int[] lengths(SplittableRandom rng, Options o, int room) {
        for (int attempt = 0; attempt < 10_000; attempt++) {
            int[] l = new int[o.turns()];
            long sum = 0;
            for (int t = 0; t < l.length; t++) sum += l[t] = o.minTokens() + rng.nextInt(o.maxTokens() - o.minTokens() + 1);
            if (sum <= room) return l;
        }
        throw new InputException("--turn-tokens: " + o.turns() + " turns of " + o.minTokens() + ".." + o.maxTokens()
                + " tokens rarely fit the model's trained context of " + room + " tokens; choose shorter turns");
    }

    /** Distinct names, each a boy's or a girl's at random; "boy"/"girl" goes with it. */
    private static String[] names(SplittableRandom rng, int stories) {
        List<String> pool = new ArrayList<>();
        for (String b : BOYS) pool.add("boy:" + b);
        for (String g : GIRLS) pool.add("girl:" + g);
        String[] out = new String[stories];
        for (int s = 0; s < stories; s++) out[s] = pool.remove(rng.nextInt(pool.size()));
        return out;
    }

    private static ConversationScript conversation(Llama llama, Tokenizer tok, Options o, int index, SplittableRandom rng, int[] lengths,
                                                   String[] names, boolean[] blocked) {
        int vocab = llama.config().vocabSize();
        int longest = Arrays.stream(lengths).max().orElseThrow() + 1;
        Session[] story = new Session[o.stories()];
        Sampler[] samplers = new Sampler[o.stories()];
        for (int s = 0; s < story.length; s++) {
            story[s] = new Session(llama, llama.newCache(PolicyRegistry.spec("full", 1), longest, PositionMode.ORIGINAL));
            samplers[s] = new Sampler(vocab, TEMPERATURE, 0, TOP_P, rng.nextLong());
        }
        List<int[]> turns = new ArrayList<>();
        int[] storyOf = new int[o.turns()];
        float[] logits = new float[vocab];
        for (int t = 0; t < o.turns(); t++) {
            int s = t % o.stories();
            storyOf[t] = s;
            Session ss = story[s];
            int[] turn = new int[lengths[t] + (t == 0 && tok.bos() >= 0 ? 1 : 0)];
            int n = 0;
            if (t == 0 && tok.bos() >= 0) turn[n++] = tok.bos();
            if (t < o.stories()) {
                // the story's first turn: BOS (its own context starts with one) and the opening
                int[] opening = tok.encode(names == null ? "Once upon a time" : opening(names[s]));
                if (opening.length >= lengths[t]) {
                    throw new InputException("--turn-tokens: a turn of " + lengths[t] + " tokens cannot hold the story's opening of "
                            + opening.length + " tokens");
                }
                if (tok.bos() >= 0) ss.feed(new int[]{tok.bos()}, 0, 1);
                ss.feed(opening, 0, opening.length);
                System.arraycopy(opening, 0, turn, n, opening.length);
                n += opening.length;
            }
            while (n < turn.length) {
                System.arraycopy(ss.logits(), 0, logits, 0, vocab);
                for (int id = 0; id < vocab; id++) if (blocked[id]) logits[id] = BLOCKED;
                int next = samplers[s].sample(logits);
                turn[n++] = next;
                ss.feed(next);
            }
            ss.endTurn();
            turns.add(turn);
        }
        List<Probe> probes = names == null ? List.of() : probes(tok, turns, storyOf, names, o.stories());
        List<ConversationScript.Turn> ts = new ArrayList<>();
        for (int[] t : turns) ts.add(new ConversationScript.Ids(t));
        return new ConversationScript(String.format(java.util.Locale.ROOT, "c-%02d", index), ts, probes);
    }

    static String opening(String genderName) {
        String[] gn = genderName.split(":");
        return "Once upon a time, there was a little " + gn[0] + " named " + gn[1] + ".";
    }

    /** The first mention of each story's name in each of its later turns, for names no other story mentions. */
    private static List<Probe> probes(Tokenizer tok, List<int[]> turns, int[] storyOf, String[] names, int stories) {
        List<Probe> out = new ArrayList<>();
        int[][] pattern = new int[stories][];
        for (int s = 0; s < stories; s++) pattern[s] = tok.encode(names[s].split(":")[1]);
        boolean[] unique = new boolean[stories];
        for (int s = 0; s < stories; s++) {
            unique[s] = true;
            for (int t = 0; t < turns.size(); t++) if (storyOf[t] != s && indexOf(turns.get(t), pattern[s]) >= 0) unique[s] = false;
        }
        for (int t = stories; t < turns.size(); t++) {
            int s = storyOf[t];
            if (!unique[s]) continue;
            int at = indexOf(turns.get(t), pattern[s]);
            if (at >= 0) out.add(new Probe(t, at, at + pattern[s].length, names[s].split(":")[1]));
        }
        return out;
    }

    static int indexOf(int[] a, int[] p) {
        outer:
        for (int i = 0; i + p.length <= a.length; i++) {
            for (int k = 0; k < p.length; k++) if (a[i + k] != p[k]) continue outer;
            return i;
        }
        return -1;
    }
}
