package io.fdkvc.server;

import io.javalin.http.Context;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.io.AbstractEndPoint;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

/**
 * Notices a client that closes its connection while its request is answered, without waiting
 * for a write to fail: once the request body has been read, HTTP/1.1 expects nothing more from
 * the client until the response, so the watch asks Jetty to report the connection readable. A
 * read then returning end-of-stream means the client has gone and {@code onGone} runs (on a
 * Jetty thread). Bytes instead (a pipelining client) end the watch without a verdict.
 *
 * <p>{@link #stop} must run before the handler returns, so that the connection's own read
 * interest (for the next request on it) is never refused as already taken.
 */
final class ClientWatch {
    private final EndPoint endPoint;
    private final Runnable onGone;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final Callback callback = new Callback() {
        @Override
        public void succeeded() {
            readable();
        }

        @Override
        public void failed(Throwable x) {
            if (!stopped.get() && !endPoint.isOpen()) gone();
        }
    };

    private ClientWatch(EndPoint endPoint, Runnable onGone) {
        this.endPoint = endPoint;
        this.onGone = onGone;
    }

    /** The connection of {@code ctx}, or null. */
    private static EndPoint endPoint(Context ctx) {
        try {
            ServletContextRequest r = ServletContextRequest.getServletContextRequest(ctx.req());
            return r == null ? null : r.getConnectionMetaData().getConnection().getEndPoint();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Closes the connection of {@code ctx} now (what was flushed has gone out). */
    static void close(Context ctx) {
        EndPoint ep = endPoint(ctx);
        if (ep != null) ep.close();
    }

    /** Starts watching the connection of {@code ctx}; a watch that cannot start (no such connection) does nothing. */
    static ClientWatch start(Context ctx, Runnable onGone) {
        EndPoint ep = endPoint(ctx);
        ClientWatch w = new ClientWatch(ep, onGone);
        if (ep == null || !ep.tryFillInterested(w.callback)) w.stopped.set(true);
        return w;
    }

    private void readable() {
        if (stopped.get()) return;
        int n;
        try {
            n = endPoint.fill(BufferUtil.allocate(1));
        } catch (java.io.IOException e) {
            n = -1; // a reset connection
        }
        if (n < 0) gone();
        else if (n == 0) {
            rearm(); // woken without data: watch on
        } else {
            stopped.set(true); // the client sent more: not a close
        }
    }

    private void gone() {
        if (stopped.compareAndSet(false, true)) onGone.run();
    }

    private synchronized void rearm() {
        if (!stopped.get() && !endPoint.tryFillInterested(callback)) stopped.set(true);
    }

    /** Ends the watch; the connection's read interest is free again. */
    synchronized void stop() {
        if (stopped.compareAndSet(false, true) && endPoint instanceof AbstractEndPoint a) {
            a.getFillInterest().onFail(new CancellationException("request answered"));
        }
    }
}
