package io.fdkvc.server.ui;

import io.fdkvc.server.ApiError;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The chat page at {@code GET /} and its assets at {@code /ui/NAME}, read once from the jar: the
 * page, its script and style sheet, and Chart.js from its WebJar. Nothing is fetched from
 * elsewhere, so the page works offline. Every answer carries a Content-Security-Policy that allows
 * scripts, styles and connections from this server only (no inline script, no eval), and the page
 * inserts what the model writes as text, never as HTML.
 */
public final class WebUi {
    /**
     * Scripts, styles, images and fetches from this origin only; no plugins, no framing, no form
     * posts. (Scripts may still set element styles through the DOM, which Chart.js does.)
     */
    public static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private static final String CHART_JS = "/META-INF/resources/webjars/chart.js/4.5.1/dist/chart.umd.min.js";

    private record Asset(byte[] bytes, String type) {}

    private static final Asset PAGE = load("/io/fdkvc/server/ui/index.html", "text/html; charset=utf-8");
    private static final Map<String, Asset> ASSETS = Map.of(
            "app.js", load("/io/fdkvc/server/ui/app.js", "text/javascript; charset=utf-8"),
            "app.css", load("/io/fdkvc/server/ui/app.css", "text/css; charset=utf-8"),
            "chart.umd.min.js", load(CHART_JS, "text/javascript; charset=utf-8"));

    private WebUi() {}

    private static Asset load(String resource, String type) {
        try (InputStream in = WebUi.class.getResourceAsStream(resource)) {
            if (in == null) throw new IllegalStateException("the chat page's resource " + resource + " is missing from the jar");
            return new Asset(in.readAllBytes(), type);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether a path is the page or one of its assets (served without the API key: the page asks for it). */
    public static boolean isPublic(String path) {
        return path.equals("/") || path.startsWith("/ui/");
    }

    public static void page(Context ctx) {
        send(ctx, PAGE);
    }

    public static void asset(Context ctx) {
        Asset a = ASSETS.get(ctx.pathParam("asset"));
        if (a == null) throw ApiError.notFound("no asset " + ApiError.excerpt(ctx.pathParam("asset")));
        send(ctx, a);
    }

    private static void send(Context ctx, Asset a) {
        ctx.header("Content-Security-Policy", CSP);
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("Referrer-Policy", "no-referrer");
        ctx.header("Cache-Control", "no-cache");
        ctx.contentType(a.type()).result(a.bytes());
    }
}
