package io.fdkvc.server;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Counters behind {@code GET /metrics} (Prometheus text format). */
final class Metrics {
    private final Map<Integer, LongAdder> requests = new ConcurrentHashMap<>();
    private final LongAdder promptTokens = new LongAdder();
    private final LongAdder cachedTokens = new LongAdder();
    private final LongAdder generatedTokens = new LongAdder();
    private final LongAdder decodeSteps = new LongAdder();
    private final LongAdder decodeNanos = new LongAdder();
    private final LongAdder prefillTokens = new LongAdder();
    private final LongAdder prefillNanos = new LongAdder();
    private final LongAdder evictions = new LongAdder();
    private final LongAdder cancelled = new LongAdder();
    private final LongAdder cancelledPrefill = new LongAdder();
    private final LongAdder queueNanos = new LongAdder();
    private final java.util.concurrent.atomic.AtomicLong queueNanosMax = new java.util.concurrent.atomic.AtomicLong();
    private final LongAdder bodiesRefused = new LongAdder();
    private final LongAdder bodiesTimedOut = new LongAdder();
    private final LongAdder bodiesIncomplete = new LongAdder();
    private final LongAdder storeWrites = new LongAdder();
    private final LongAdder storeBytes = new LongAdder();
    private final LongAdder storeNanos = new LongAdder();
    private final LongAdder storeFailures = new LongAdder();
    private final LongAdder storeSkipped = new LongAdder();
    private final java.util.concurrent.atomic.AtomicLong storeNanosMax = new java.util.concurrent.atomic.AtomicLong();
    private final LongAdder storeCalls = new LongAdder();
    private final LongAdder storeCallNanos = new LongAdder();
    private final LongAdder leaseConflicts = new LongAdder();
    private final LongAdder storeFenced = new LongAdder();

    void request(int status) {
        requests.computeIfAbsent(status, s -> new LongAdder()).increment();
    }

    void turn(int prompt, int cached, int generated, long evicted) {
        promptTokens.add(prompt);
        cachedTokens.add(cached);
        generatedTokens.add(generated);
        evictions.add(evicted);
    }

    /** The status label of requests whose client left before the answer (nginx's "client closed request"), never a 5xx. */
    static final int CLIENT_GONE = 499;

    /** A request rolled back because its client left; {@code prefillLeft}: prompt tokens it never had to feed. */
    void cancelled(int prefillLeft) {
        cancelled.increment();
        cancelledPrefill.add(prefillLeft);
    }

    /** A request left the queue for a slot after waiting this long (called from the scheduler's thread). */
    void queued(long nanos) {
        queueNanos.add(nanos);
        queueNanosMax.accumulateAndGet(nanos, Math::max);
    }

    void bodyRefused() {
        bodiesRefused.increment();
    }

    void bodyTimedOut() {
        bodiesTimedOut.increment();
    }

    void bodyIncomplete() {
        bodiesIncomplete.increment();
    }

    /** A committed turn's session written: its size and the time the write took. */
    void stored(long bytes, long nanos) {
        storeWrites.increment();
        storeBytes.add(bytes);
        storeNanos.add(nanos);
        storeNanosMax.accumulateAndGet(nanos, Math::max);
    }

    /** A read or lease of the session store (not a write) and how long it took. */
    void storeCall(long nanos) {
        storeCalls.increment();
        storeCallNanos.add(nanos);
    }

    /** A request refused because another server holds its session's lease. */
    void leaseConflict() {
        leaseConflicts.increment();
    }

    /** A write refused by the shared store's fence (another server advanced the session, or holds it). */
    void storeFenced() {
        storeFenced.increment();
    }

    void storeFailed() {
        storeFailures.increment();
    }

    /** An entry of the store skipped at start-up (not a usable session, or a leftover removed). */
    void storeSkipped() {
        storeSkipped.increment();
    }

    /** Called from the scheduler's thread. */
    void decode(int tokens, long nanos) {
        decodeSteps.increment();
        decodeNanos.add(nanos);
    }

    void prefill(int tokens, long nanos) {
        prefillTokens.add(tokens);
        prefillNanos.add(nanos);
    }

    /** Gauges sampled at scrape time. */
    record Gauges(int liveSessions, int storedSessions, long cacheEntries, long kvBytes, int queueDepth, int active, int unstoredSessions, int bodiesReceiving) {}

    String render(Gauges g) {
        StringBuilder b = new StringBuilder();
        b.append("# HELP fdkvc_requests_total HTTP requests by status\n# TYPE fdkvc_requests_total counter\n");
        for (var e : new TreeMap<>(requests).entrySet()) {
            b.append("fdkvc_requests_total{status=\"").append(e.getKey()).append("\"} ").append(e.getValue().sum()).append('\n');
        }
        counter(b, "fdkvc_prompt_tokens_total", "prompt tokens of committed requests (cached included)", promptTokens.sum());
        counter(b, "fdkvc_cached_prompt_tokens_total", "prompt tokens not recomputed (transcript continued)", cachedTokens.sum());
        counter(b, "fdkvc_generated_tokens_total", "reply tokens of committed requests", generatedTokens.sum());
        counter(b, "fdkvc_prefill_tokens_total", "prompt tokens fed through the model", prefillTokens.sum());
        counter(b, "fdkvc_decode_steps_total", "batched decode steps", decodeSteps.sum());
        counter(b, "fdkvc_cancelled_total", "requests rolled back because their client left", cancelled.sum());
        counter(b, "fdkvc_cancelled_prefill_tokens_total", "prompt tokens cancelled requests were spared from feeding", cancelledPrefill.sum());
        counter(b, "fdkvc_bodies_refused_total", "requests refused (503) because too many bodies were being received", bodiesRefused.sum());
        counter(b, "fdkvc_bodies_timed_out_total", "request bodies that did not arrive within the read timeout (408)", bodiesTimedOut.sum());
        counter(b, "fdkvc_bodies_incomplete_total", "request bodies cut short by the client closing its connection", bodiesIncomplete.sum());
        counter(b, "fdkvc_evictions_total", "cache entries evicted by the policy, all streams", evictions.sum());
        counter(b, "fdkvc_session_store_writes_total", "committed turns written to the session store", storeWrites.sum());
        counter(b, "fdkvc_session_store_bytes_total", "bytes written to the session store", storeBytes.sum());
        counter(b, "fdkvc_session_store_failures_total", "session store writes that failed", storeFailures.sum());
        counter(b, "fdkvc_session_store_reads_total", "session store reads and leases (shared store)", storeCalls.sum());
        counter(b, "fdkvc_session_lease_conflicts_total", "requests refused (409) because another server holds the session's lease",
                leaseConflicts.sum());
        counter(b, "fdkvc_session_store_fenced_total", "writes the shared store refused: the session was advanced or leased by another server",
                storeFenced.sum());
        counter(b, "fdkvc_session_store_skipped_total", "session store entries skipped at start-up (not usable sessions, leftovers)",
                storeSkipped.sum());
        gauge(b, "fdkvc_queue_wait_seconds_total", "time requests waited for a slot", queueNanos.sum() / 1e9);
        gauge(b, "fdkvc_queue_wait_seconds_max", "longest wait for a slot so far", queueNanosMax.get() / 1e9);
        gauge(b, "fdkvc_session_store_seconds_total", "time in session store writes", storeNanos.sum() / 1e9);
        gauge(b, "fdkvc_session_store_seconds_max", "longest session store write so far", storeNanosMax.get() / 1e9);
        gauge(b, "fdkvc_session_store_read_seconds_total", "time in session store reads and leases", storeCallNanos.sum() / 1e9);
        gauge(b, "fdkvc_bodies_receiving", "request bodies being received now", g.bodiesReceiving());
        gauge(b, "fdkvc_unstored_sessions", "sessions whose latest turn is not in the store (kept in memory)", g.unstoredSessions());
        double decodeSeconds = decodeNanos.sum() / 1e9, prefillSeconds = prefillNanos.sum() / 1e9;
        gauge(b, "fdkvc_decode_seconds_total", "time in decode steps", decodeSeconds);
        gauge(b, "fdkvc_prefill_seconds_total", "time in prefill chunks", prefillSeconds);
        gauge(b, "fdkvc_generated_tokens_per_second", "generated tokens per second of decode time",
                decodeSeconds == 0 ? 0 : generatedTokens.sum() / decodeSeconds);
        gauge(b, "fdkvc_prefill_tokens_per_second", "prompt tokens per second of prefill time",
                prefillSeconds == 0 ? 0 : prefillTokens.sum() / prefillSeconds);
        gauge(b, "fdkvc_live_sessions", "sessions held in memory", g.liveSessions());
        gauge(b, "fdkvc_stored_sessions", "sessions on disk only", g.storedSessions());
        gauge(b, "fdkvc_cache_entries", "cache entries held by live sessions, all streams", g.cacheEntries());
        gauge(b, "fdkvc_kv_bytes", "bytes held by live sessions' caches", g.kvBytes());
        gauge(b, "fdkvc_queue_depth", "requests waiting for a slot", g.queueDepth());
        gauge(b, "fdkvc_active_requests", "requests being processed", g.active());
        return b.toString();
    }

    private static void counter(StringBuilder b, String name, String help, long v) {
        b.append("# HELP ").append(name).append(' ').append(help).append("\n# TYPE ").append(name).append(" counter\n")
                .append(name).append(' ').append(v).append('\n');
    }

    private static void gauge(StringBuilder b, String name, String help, double v) {
        b.append("# HELP ").append(name).append(' ').append(help).append("\n# TYPE ").append(name).append(" gauge\n")
                .append(name).append(' ');
        if (v == Math.rint(v) && Math.abs(v) < 1e15) b.append((long) v);
        else b.append(v);
        b.append('\n');
    }
}
