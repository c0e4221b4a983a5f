package io.fdkvc.eval.synthetic;

/** Told after each dialogue of a run; called from worker threads, so implementations synchronise. */
@FunctionalInterface
public interface Progress {
    Progress NONE = (done, total) -> {};

    void update(int done, int total);
}
