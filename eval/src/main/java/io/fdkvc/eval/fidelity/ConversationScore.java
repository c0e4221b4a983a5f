package io.fdkvc.eval.fidelity;

/**
 * What one student scored on one conversation: means over the predictions made at every position
 * of dialogue turns 1..T-1 (positions with a next token), and over the conversation's probes.
 *
 * @param kl                 mean KL(full || student), nats
 * @param top1               share of positions whose argmax equals the full cache's
 * @param nll                mean NLL of the actual next token under the student
 * @param nllFull            the same under the full cache
 * @param probeNllIncrease   mean over probes of (sum over the probe's tokens of NLL student - full); NaN without probes
 * @param turnKl             mean KL per dialogue turn (NaN for turn 0 and turns without a prediction)
 * @param predictions        positions measured
 */
public record ConversationScore(double kl, double top1, double nll, double nllFull, double probeNllIncrease, double[] turnKl,
                                long predictions) {
    static ConversationScore of(Fidelity f) {
        double n = f.predictions;
        double probe = Double.NaN;
        if (f.probeIncrease.length > 0) {
            double s = 0;
            for (double p : f.probeIncrease) s += p;
            probe = s / f.probeIncrease.length;
        }
        double[] turns = new double[f.turnKl.length];
        for (int t = 0; t < turns.length; t++) turns[t] = f.turnCount[t] == 0 ? Double.NaN : f.turnKl[t] / f.turnCount[t];
        return new ConversationScore(f.klSum / n, f.agree / n, f.nllSum / n, f.nllFullSum / n, probe, turns, f.predictions);
    }
}
