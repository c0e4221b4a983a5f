package io.fdkvc.eval.dialogue;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;
import io.fdkvc.core.policy.dialogue.DialogueFeatures;
import io.fdkvc.core.policy.dialogue.DialoguePolicy;

/**
 * A cache policy as a conversation memory: each utterance is one entry. Key = value = its unit
 * sentence embedding, cost = its token count, position = its turn index. The turn's single query
 * row is its own embedding scaled by sqrt(d) / temperature: core computes logits as
 * q.k / sqrt(d), so the logits become cos(query, entry) / temperature. The query embedding
 * (topical similarity) is the unscaled sentence embedding, except for {@code fdkvc-dialogue},
 * whose entries carry the {@link DialogueFeatures} (hashed content words and the speaker) as
 * their embedding channel and whose query embedding is the turn's features tagged with the
 * speaker who writes next.
 */
public final class PolicyMemory implements ConversationMemory {
    private final EmbeddedDialogue d;
    private final Policy policy;
    private final KvStream stream;
    private final boolean lexical;
    private final Turn turn;
    private final float[] query;
    private final float[] queryEmbedding;
    private final float[] features;
    private final float scale;

    /**
     * A policy built from {@code template} at the given budget, with packing on or off.
     *
     * @param packing readmit evicted entries that still fit (core's shared packing); off = the paper's setting
     */
    public record Factory(PolicySpec template, boolean packing) implements ConversationMemory.Factory {
        @Override
        public ConversationMemory open(EmbeddedDialogue d, int budgetTokens, double temperature) {
            Policy p = new PolicySpec(template.name(), budgetTokens, template.params(), template.kind()).newPolicy();
            p.setPacking(packing);
            return new PolicyMemory(d, p, temperature);
        }

        @Override
        public boolean unbounded() {
            return template.newPolicy().unbounded();
        }
    }

    public PolicyMemory(EmbeddedDialogue d, Policy policy, double temperature) {
        if (!(temperature > 0) || Double.isInfinite(temperature)) throw new IllegalArgumentException("temperature must be > 0 and finite, got " + temperature);
        this.d = d;
        this.policy = policy;
        int n = d.size();
        int dim = d.dimension();
        this.lexical = policy instanceof DialoguePolicy;
        // Every entry costs >= 1 token, so a bounded cache holds at most budget entries plus the turn's one.
        int capacity = policy.unbounded() ? n : (int) Math.min(n, (long) policy.budget() + 1);
        this.stream = new KvStream(dim, dim, lexical ? DialogueFeatures.DIMENSION : 0, Math.max(1, capacity), policy.unbounded());
        int ed = lexical ? DialogueFeatures.DIMENSION : dim;
        this.turn = new Turn(dim, ed);
        this.query = new float[dim];
        this.queryEmbedding = new float[ed];
        this.features = lexical ? new float[DialogueFeatures.DIMENSION] : null;
        this.scale = (float) (Math.sqrt(dim) / temperature);
    }

    @Override
    public void add(int t) {
        int dim = d.dimension();
        float[] emb = d.embeddings();
        Utterance u = d.dialogue().turn(t);
        if (lexical) {
            DialogueFeatures.Speaker sp = speaker(u, t);
            DialogueFeatures.write(u.text(), sp, features, 0);
            stream.append(t, emb, t * dim, emb, t * dim, features, 0, d.tokens()[t]);
            DialogueFeatures.write(u.text(), DialogueFeatures.next(sp), queryEmbedding, 0);
        } else {
            stream.append(t, emb, t * dim, emb, t * dim, null, 0, d.tokens()[t]);
            System.arraycopy(emb, t * dim, queryEmbedding, 0, dim);
        }
        for (int k = 0; k < dim; k++) query[k] = emb[t * dim + k] * scale;
        turn.set(query, 1, queryEmbedding);
        policy.endTurn(stream, turn);
    }

    @Override
    public void kept(boolean[] kept) {
        long[] pos = stream.positions();
        for (int i = 0; i < stream.size(); i++) kept[(int) pos[i]] = true;
    }

    /** USER, SYSTEM (the assistant), or unknown (TIAGE has no speakers). */
    static DialogueFeatures.Speaker speaker(Utterance u, int t) {
        if (u.speaker() == null) return DialogueFeatures.Speaker.UNKNOWN;
        return u.speaker().equals("USER") ? DialogueFeatures.Speaker.USER : DialogueFeatures.Speaker.ASSISTANT;
    }
}
