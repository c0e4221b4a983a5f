package io.fdkvc.server;

/**
 * An error answered in OpenAI's shape {@code {"error": {"message", "type", "param", "code"}}}.
 * Messages never carry more of the client's input than {@link #excerpt} allows.
 */
public final class ApiError extends RuntimeException {
    private final int status;
    private final String type;
    private final String param;
    private final String code;
    private int retryAfterSeconds;

    public ApiError(int status, String type, String param, String code, String message) {
        super(message);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
    }

    /** This error, answered with {@code Retry-After: seconds}. */
    public ApiError retryAfter(int seconds) {
        this.retryAfterSeconds = seconds;
        return this;
    }

    /** The {@code Retry-After} it is answered with, or 0 for none. */
    public int retryAfterSeconds() { return retryAfterSeconds; }

    public int status() { return status; }
    public String type() { return type; }
    public String param() { return param; }
    public String code() { return code; }

    public static ApiError invalid(String param, String message) {
        return new ApiError(400, "invalid_request_error", param, "invalid_value", message);
    }

    public static ApiError notFound(String message) {
        return new ApiError(404, "invalid_request_error", null, "not_found", message);
    }

    public static ApiError unauthorized() {
        return new ApiError(401, "invalid_request_error", null, "invalid_api_key",
                "missing or wrong API key: send 'Authorization: Bearer KEY'");
    }

    public static ApiError busy(String message) {
        return new ApiError(429, "rate_limit_error", null, "queue_full", message);
    }

    public static ApiError conflict(String message) {
        return new ApiError(409, "invalid_request_error", null, "conflict", message);
    }

    public static ApiError loading() {
        return new ApiError(503, "server_error", null, "loading", "the model is loading; try again shortly");
    }

    /** Most characters of client input an error message quotes. */
    public static final int EXCERPT = 32;

    /**
     * A short, printable excerpt of client input for an error message: at most {@link #EXCERPT}
     * characters, control and non-ASCII characters replaced by '?', quotes and backslashes
     * dropped, "..." when cut.
     */
    public static String excerpt(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder();
        int n = Math.min(s.length(), EXCERPT);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\' || c == '\'') continue;
            b.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        if (s.length() > EXCERPT) b.append("...");
        return "'" + b + "'";
    }
}
