package io.fdkvc.eval.dialogue;

/**
 * How many tokens a dialogue's cache may keep: a fixed number for every dialogue (the headline
 * results), or a share of each dialogue's own tokens (the sweep), rounded up so that it is never
 * below one token.
 */
public record Budget(int fixedTokens, double share) {
    public Budget {
        if ((fixedTokens > 0) == (share > 0)) throw new IllegalArgumentException("exactly one of fixedTokens and share must be positive");
        if (share > 1) throw new IllegalArgumentException("share must be <= 1, got " + share);
    }

    public static Budget tokens(int n) {
        return new Budget(n, 0);
    }

    public static Budget share(double f) {
        return new Budget(0, f);
    }

    /** The budget of {@code d} in tokens. */
    public int of(EmbeddedDialogue d) {
        if (fixedTokens > 0) return fixedTokens;
        // The 1e-9 keeps a product like 0.3 * 200 = 60.000000000000007 at 60 rather than 61.
        return (int) Math.ceil(share * d.totalTokens() - 1e-9);
    }

    /** "30%" for a share, "63 tokens" for a fixed budget. */
    public String label() {
        return fixedTokens > 0 ? fixedTokens + " tokens" : percent(share);
    }

    /** "30%" (integral shares) or "12.5%". */
    public static String percent(double share) {
        double p = share * 100;
        return Math.abs(p - Math.rint(p)) < 1e-9 ? (long) Math.rint(p) + "%" : p + "%";
    }
}
