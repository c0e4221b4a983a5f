package io.fdkvc.server;

import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.core.Untrusted;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.Conversation;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Sessions in Redis (or Valkey), shared by every server that names the same store. Under the key
 * prefix {@code fdkvc:}:
 *
 * <ul>
 *   <li>{@code session:ID}, a hash: {@code version} (how many writes the session has had),
 *       {@code data} (the {@link SessionCodec} form), {@code fp} (the fingerprint of its
 *       transcript) and {@code summary} (its figures for listings, {@link SessionCodec#summary});</li>
 *   <li>{@code transcript:FP}: the id of the session whose committed transcript has that
 *       fingerprint, so that a client resending its history finds its session on any server;</li>
 *   <li>{@code lease:ID}: the server working on the session, with a time to live, renewed while
 *       the server holds it;</li>
 *   <li>{@code sessions}: every stored id, a sorted set read in pages by id.</li>
 * </ul>
 *
 * <p>Every change is one Lua script, so atomic in Redis. A write is fenced: it names the version
 * its session was read at and is refused when the stored version is another (a server that
 * stalled and woke up cannot overwrite a newer turn) or when another server holds the lease.
 * The value is not compressed (measured in docs/scale-out.md: the cache's floats do not pay for it).
 * This is one Redis node's layout (the scripts touch keys they compute), not Redis Cluster's.
 */
final class RedisStore implements SharedSessionStore {
    /** Environment variables holding the credentials: never the command line, where {@code ps} shows them. */
    static final String PASSWORD_ENV = "FDKVC_REDIS_PASSWORD", USER_ENV = "FDKVC_REDIS_USER";
    private static final String PREFIX = "fdkvc:";
    private static final String SESSION = PREFIX + "session:", LEASE = PREFIX + "lease:", TRANSCRIPT = PREFIX + "transcript:";
    private static final byte[] IDS = bytes(PREFIX + "sessions");
    private static final int TIMEOUT_MS = 2000;

    // KEYS: session, lease; ARGV: owner, ttl ms -> {1, stored version (0 none, -1 not a session)} or {0, ms the holder keeps it}
    private static final byte[] LEASE_SCRIPT = bytes("""
            local h = redis.call('GET', KEYS[2])
            if h and h ~= ARGV[1] then return {0, redis.call('PTTL', KEYS[2])} end
            redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
            local t = redis.call('TYPE', KEYS[1]).ok
            if t == 'none' then return {1, 0} end
            if t ~= 'hash' then return {1, -1} end
            return {1, tonumber(redis.call('HGET', KEYS[1], 'version')) or -1}
            """);
    // KEYS: lease; ARGV: owner, ttl ms -> 1 extended, 0 not this server's (any more). A lease is never
    // taken again here: a renewal racing with the end of the request must not leave a lease behind
    private static final byte[] RENEW_SCRIPT = bytes("""
            if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
            redis.call('PEXPIRE', KEYS[1], ARGV[2])
            return 1
            """);
    // KEYS: lease; ARGV: owner
    private static final byte[] UNLEASE_SCRIPT = bytes("""
            if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
            return 1
            """);
    // KEYS: session, lease, ids; ARGV: owner, ttl ms, expected version, data, fp, summary, id, transcript prefix
    // -> {1, new version} | {0, 'leased', ms} | {0, 'stale', stored version}
    private static final byte[] WRITE_SCRIPT = bytes("""
            local h = redis.call('GET', KEYS[2])
            if h and h ~= ARGV[1] then return {0, 'leased', redis.call('PTTL', KEYS[2])} end
            local t = redis.call('TYPE', KEYS[1]).ok
            local v = 0
            if t == 'hash' then v = tonumber(redis.call('HGET', KEYS[1], 'version')) or 0 end
            if v ~= tonumber(ARGV[3]) then return {0, 'stale', v} end
            if t == 'hash' then
              local old = redis.call('HGET', KEYS[1], 'fp')
              if old and redis.call('GET', ARGV[8] .. old) == ARGV[7] then redis.call('DEL', ARGV[8] .. old) end
            end
            if t ~= 'none' then redis.call('DEL', KEYS[1]) end
            redis.call('HSET', KEYS[1], 'version', v + 1, 'data', ARGV[4], 'fp', ARGV[5], 'summary', ARGV[6])
            redis.call('SET', ARGV[8] .. ARGV[5], ARGV[7])
            redis.call('ZADD', KEYS[3], 0, ARGV[7])
            redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
            return {1, v + 1}
            """);
    // KEYS: session, lease, ids; ARGV: owner, id, transcript prefix -> {1, existed} | {0, ms the holder keeps it}
    private static final byte[] DELETE_SCRIPT = bytes("""
            local h = redis.call('GET', KEYS[2])
            if h and h ~= ARGV[1] then return {0, redis.call('PTTL', KEYS[2])} end
            local t = redis.call('TYPE', KEYS[1]).ok
            if t == 'hash' then
              local old = redis.call('HGET', KEYS[1], 'fp')
              if old and redis.call('GET', ARGV[3] .. old) == ARGV[2] then redis.call('DEL', ARGV[3] .. old) end
            end
            local existed = redis.call('DEL', KEYS[1])
            redis.call('ZREM', KEYS[3], ARGV[2])
            redis.call('DEL', KEYS[2])
            return {1, existed}
            """);
    // KEYS: ids; ARGV: after ('' from the start), count, session prefix -> id, version, summary ('' when none), ...
    private static final byte[] LIST_SCRIPT = bytes("""
            local min = ARGV[1] == '' and '-' or ('(' .. ARGV[1])
            local ids = redis.call('ZRANGE', KEYS[1], min, '+', 'BYLEX', 'LIMIT', 0, tonumber(ARGV[2]))
            local out = {}
            for _, id in ipairs(ids) do
              local ok, s = pcall(redis.call, 'HMGET', ARGV[3] .. id, 'version', 'summary')
              out[#out + 1] = id
              out[#out + 1] = (ok and s[1]) or '0'
              out[#out + 1] = (ok and s[2]) or ''
            end
            return out
            """);

    private final String where, tlsHost;
    private final boolean tls;
    private final HostAndPort address;
    private final redis.clients.jedis.JedisClientConfig config;
    private final SessionCodec codec;
    private final JedisPooled redis;
    private final long leaseMs;
    private final String owner = UUID.randomUUID().toString();
    private final Set<String> held = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService renewer;

    /**
     * Where a {@code --session-store} URL points: {@code redis://HOST:PORT[/DB]}, or {@code rediss://}
     * for TLS. {@link #parse} refuses anything else with the option's name, so that a server
     * refuses a bad URL before it binds its port or loads its model.
     */
    record Address(boolean tls, String host, int port, int db) {
        static Address parse(String uri) {
            URI u;
            try {
                u = new URI(uri);
            } catch (URISyntaxException e) {
                throw new InputException("--session-store: not a URL: " + Untrusted.excerpt(uri));
            }
            String scheme = u.getScheme();
            if (!"redis".equals(scheme) && !"rediss".equals(scheme)) {
                throw new InputException("--session-store must be redis://HOST:PORT[/DB] or rediss://HOST:PORT[/DB], got " + Untrusted.excerpt(uri));
            }
            if (u.getRawUserInfo() != null) {
                throw new InputException("--session-store: credentials in the URL are refused (the command line is visible to every user);"
                        + " set " + PASSWORD_ENV + " (and " + USER_ENV + " for an ACL user) instead");
            }
            if (u.getHost() == null) throw new InputException("--session-store: no host in " + Untrusted.excerpt(uri));
            if (u.getRawQuery() != null || u.getRawFragment() != null) {
                throw new InputException("--session-store: no query or fragment is accepted, got " + Untrusted.excerpt(uri));
            }
            int port = u.getPort() < 0 ? 6379 : u.getPort();
            if (port < 1 || port > 65535) throw new InputException("--session-store: the port must be in 1..65535, got " + port);
            int db = 0;
            String path = u.getPath() == null ? "" : u.getPath();
            if (!path.isEmpty() && !path.equals("/")) {
                try {
                    db = Integer.parseInt(path.substring(1));
                } catch (NumberFormatException e) {
                    db = -1;
                }
                if (db < 0 || db > 15) throw new InputException("--session-store: the database must be 0..15, got " + Untrusted.excerpt(path.substring(1)));
            }
            return new Address("rediss".equals(scheme), u.getHost(), port, db);
        }

        /** The URL without credentials, as logs and {@code /health} show it. */
        String where() {
            return (tls ? "rediss" : "redis") + "://" + host + ":" + port + "/" + db;
        }
    }

    /**
     * Opens the store named by {@code uri} ({@code redis://HOST:PORT[/DB]} or {@code rediss://} for
     * TLS), with the credentials from {@link #PASSWORD_ENV} and {@link #USER_ENV} in {@code env}.
     * Nothing is contacted yet: a store that is down at start-up is reported by {@link #problem}.
     */
    RedisStore(String uri, Map<String, String> env, SessionCodec codec, int leaseSeconds) {
        Address a = Address.parse(uri);
        Limits.check("--session-lease", leaseSeconds, 1, 3600);
        this.where = a.where();
        this.tls = a.tls();
        this.tlsHost = a.host();
        this.codec = codec;
        this.leaseMs = leaseSeconds * 1000L;
        DefaultJedisClientConfig.Builder cfg = DefaultJedisClientConfig.builder().database(a.db()).ssl(a.tls())
                .connectionTimeoutMillis(TIMEOUT_MS).socketTimeoutMillis(TIMEOUT_MS).clientName("fdkvc-serve");
        String password = env.get(PASSWORD_ENV), user = env.get(USER_ENV);
        if (a.tls()) cfg.sslSocketFactory(RedisTls.sockets(env.get(RedisTls.CA_ENV))).sslParameters(RedisTls.verifyHost());
        if (password != null && !password.isEmpty()) cfg.password(password);
        if (user != null && !user.isEmpty()) {
            if (password == null || password.isEmpty()) throw new InputException(USER_ENV + " is set but " + PASSWORD_ENV + " is not");
            cfg.user(user);
        }
        // a pooled connection is checked (PING) before each use: after Redis restarts, the connections
        // it dropped are replaced instead of failing a turn that could have been stored
        redis.clients.jedis.ConnectionPoolConfig pool = new redis.clients.jedis.ConnectionPoolConfig();
        pool.setTestOnBorrow(true);
        pool.setMaxTotal(32);
        this.address = new HostAndPort(a.host(), a.port());
        this.config = cfg.build();
        this.redis = new JedisPooled(address, config, pool);
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("fdkvc-lease-renewal").unstarted(r));
        long every = Math.max(100, leaseMs / 3);
        renewer.scheduleWithFixedDelay(this::renewAll, every, every, TimeUnit.MILLISECONDS);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Object o) {
        return o instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(o);
    }

    private Unavailable unavailable(String what, JedisException e) {
        String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        Throwable c = e.getCause();
        if (e instanceof JedisConnectionException && c != null && c.getMessage() != null) why = c.getMessage();
        if (why.startsWith("Could not get a resource")) {
            // the pool's check of a new connection failed and kept no reason (NOAUTH, for one): ask once without it
            JedisException direct = probe();
            if (direct != null) {
                e = direct;
                why = direct.getMessage() == null ? direct.getClass().getSimpleName() : direct.getMessage();
            }
        }
        // Redis refuses writes with OOM when maxmemory is reached: the store is full
        boolean full = e instanceof JedisDataException && why.startsWith("OOM");
        return new Unavailable("the Redis session store at " + where + " cannot " + what + ": " + explain(e, why.replace('\n', ' ')), full, e);
    }

    /** Why one connection of its own cannot PING Redis (null: it can). */
    private JedisException probe() {
        try (redis.clients.jedis.Jedis one = new redis.clients.jedis.Jedis(address, config)) {
            one.ping();
            return null;
        } catch (JedisException e) {
            return e;
        }
    }

    /**
     * What an operator has to fix, for the failures a configuration causes: credentials, a
     * certificate, TLS on one side only. Redis's own answers never repeat the password.
     */
    private String explain(JedisException e, String why) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = t.getMessage() == null ? "" : t.getMessage();
            if (t instanceof java.security.cert.CertPathValidatorException || m.contains("PKIX path")) {
                return "its TLS certificate is not trusted (it does not chain to a trusted certificate authority): name the authority's"
                        + " certificate in " + RedisTls.CA_ENV + " (a PEM file) or add it to the JVM's trust store";
            }
            if (t instanceof java.security.cert.CertificateException && m.startsWith("No ")) {
                return "its TLS certificate is not for " + tlsHost + " (" + m + "): name the host as the certificate does";
            }
            if (tls && t instanceof javax.net.ssl.SSLException && m.contains("plaintext")) {
                return "it does not speak TLS on that port (" + m + "): use redis:// for a plain port";
            }
        }
        String answer = why.endsWith(".") ? why.substring(0, why.length() - 1) : why;
        if (answer.startsWith("WRONGPASS")) {
            return "the credentials were refused (" + answer + "): check " + USER_ENV + " (unset: Redis's default user) and " + PASSWORD_ENV;
        }
        if (answer.startsWith("NOAUTH")) {
            return "Redis asks for a password (" + answer + "): set " + PASSWORD_ENV + " (and " + USER_ENV + " for an ACL user)";
        }
        if (!tls && e instanceof JedisConnectionException && (answer.contains("end of stream") || answer.contains("reset"))) {
            return answer + " (a port that speaks TLS closes plain connections so: use rediss://)";
        }
        return answer;
    }

    private Object eval(String what, byte[] script, List<byte[]> keys, List<byte[]> args) throws Unavailable {
        try {
            return redis.eval(script, keys, args);
        } catch (JedisException e) {
            throw unavailable(what, e);
        }
    }

    @Override
    public String key(String id) {
        return SESSION + id;
    }

    @Override
    public String where() {
        return where;
    }

    @Override
    public void scan(Found found) {
        // a shared store is read on demand: other servers add sessions all the time
    }

    @Override
    public Stored read(String id) throws Unavailable, Refused {
        String name = key(id);
        List<byte[]> got;
        try {
            got = redis.hmget(bytes(name), bytes("version"), bytes("data"));
        } catch (JedisDataException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("WRONGTYPE")) {
                throw new Refused("stored session " + name + " is not a session (a Redis " + typeOf(name) + ", not a hash)");
            }
            throw unavailable("read " + name, e);
        } catch (JedisException e) {
            throw unavailable("read " + name, e);
        }
        byte[] version = got.get(0), data = got.get(1);
        if (version == null && data == null) return null;
        if (version == null || data == null) throw new Refused("stored session " + name + " is not a session (its hash lacks " + (data == null ? "data" : "version") + ")");
        long v;
        try {
            v = Long.parseLong(text(version));
        } catch (NumberFormatException e) {
            throw new Refused("stored session " + name + " has a version that is not a number: " + Untrusted.excerpt(text(version)));
        }
        Stored s = codec.decode(data, name);
        if (!s.id().equals(id)) throw new Refused("stored session " + name + " holds another session's id");
        return s.at(v);
    }

    private String typeOf(String key) {
        try {
            return redis.type(key);
        } catch (JedisException e) {
            return "value of another type";
        }
    }

    @Override
    public long write(String id, PolicySpec policy, long evictions, Conversation.State s) throws Unavailable {
        throw new UnsupportedOperationException("a shared store takes fenced writes only");
    }

    @Override
    public Written write(String id, PolicySpec policy, long evictions, Conversation.State s, long expected, String fingerprint)
            throws Unavailable, Fenced {
        SessionCodec.Encoded e = codec.encode(id, policy, evictions, s);
        byte[] data = Arrays.copyOf(e.buf(), e.n());
        byte[] summary = codec.summary(policy, evictions, s);
        Object r = eval("store session " + id, WRITE_SCRIPT, List.of(bytes(key(id)), bytes(LEASE + id), IDS),
                List.of(bytes(owner), bytes(Long.toString(leaseMs)), bytes(Long.toString(expected)), data, bytes(fingerprint), summary,
                        bytes(id), bytes(TRANSCRIPT)));
        List<?> out = (List<?>) r;
        if ((Long) out.get(0) == 1) return new Written(e.n(), (Long) out.get(1));
        String why = text(out.get(1));
        if (why.equals("leased")) {
            throw new Fenced("session " + id + " is leased by another server now (for " + out.get(2) + " ms more)", (Long) out.get(2));
        }
        throw new Fenced("session " + id + " was stored at write " + out.get(2) + " by another server since this one read it at write "
                + expected, 0);
    }

    @Override
    public Lease lease(String id) throws Unavailable {
        List<?> out = (List<?>) eval("lease session " + id, LEASE_SCRIPT, List.of(bytes(key(id)), bytes(LEASE + id)),
                List.of(bytes(owner), bytes(Long.toString(leaseMs))));
        if ((Long) out.get(0) == 0) return Lease.heldElsewhere(Math.max(1, (Long) out.get(1)));
        held.add(id);
        return Lease.granted((Long) out.get(1));
    }

    @Override
    public void unlease(String id) {
        held.remove(id);
        try {
            redis.eval(UNLEASE_SCRIPT, List.of(bytes(LEASE + id)), List.of(bytes(owner)));
        } catch (JedisException e) {
            // the lease expires by itself
        }
    }

    /** Renews every lease this server holds; one that expired or another server holds now is given up (its writes are fenced). */
    private void renewAll() {
        for (String id : held) {
            try {
                Object r = redis.eval(RENEW_SCRIPT, List.of(bytes(LEASE + id)), List.of(bytes(owner), bytes(Long.toString(leaseMs))));
                if (Long.valueOf(0).equals(r)) held.remove(id);
            } catch (JedisException e) {
                // unreachable now: tried again at the next round; the write is fenced anyway
            }
        }
    }

    @Override
    public String lookup(String[] fingerprints) throws Unavailable {
        if (fingerprints.length == 0) return null;
        byte[][] keys = new byte[fingerprints.length][];
        for (int i = 0; i < keys.length; i++) keys[i] = bytes(TRANSCRIPT + fingerprints[i]);
        List<byte[]> ids;
        try {
            ids = redis.mget(keys);
        } catch (JedisException e) {
            throw unavailable("look up a transcript", e);
        }
        for (byte[] id : ids) if (id != null) return text(id);
        return null;
    }

    @Override
    public void delete(String id) throws Unavailable {
        try {
            remove(id);
        } catch (LeasedElsewhere e) {
            throw new Unavailable("cannot delete session " + id + ": " + e.getMessage(), false, e);
        }
    }

    @Override
    public boolean remove(String id) throws Unavailable, LeasedElsewhere {
        List<?> out = (List<?>) eval("delete session " + id, DELETE_SCRIPT, List.of(bytes(key(id)), bytes(LEASE + id), IDS),
                List.of(bytes(owner), bytes(id), bytes(TRANSCRIPT)));
        if ((Long) out.get(0) == 0) throw new LeasedElsewhere((Long) out.get(1));
        held.remove(id);
        return (Long) out.get(1) > 0;
    }

    @Override
    public Page list(String after, int limit) throws Unavailable {
        List<?> out = (List<?>) eval("list sessions", LIST_SCRIPT, List.of(IDS),
                List.of(bytes(after == null ? "" : after), bytes(Integer.toString(limit + 1)), bytes(SESSION)));
        List<Summary> items = new ArrayList<>();
        for (int i = 0; i + 2 < out.size() && items.size() < limit; i += 3) {
            items.add(summary(text(out.get(i)), (byte[]) out.get(i + 1), (byte[]) out.get(i + 2)));
        }
        return new Page(items, out.size() / 3 > limit);
    }

    @Override
    public Summary describe(String id) throws Unavailable {
        List<byte[]> got;
        try {
            got = redis.hmget(bytes(key(id)), bytes("version"), bytes("summary"));
        } catch (JedisDataException e) {
            return codec.readSummary(id, new byte[0]); // not a hash: listed with its problem
        } catch (JedisException e) {
            throw unavailable("read session " + id, e);
        }
        if (got.get(0) == null && got.get(1) == null) return null;
        return summary(id, got.get(0), got.get(1));
    }

    private SharedSessionStore.Summary summary(String id, byte[] version, byte[] summary) {
        Summary s = codec.readSummary(id, summary == null ? new byte[0] : summary);
        try {
            return version == null ? s : s.at(Long.parseLong(text(version)));
        } catch (NumberFormatException e) {
            return s;
        }
    }

    @Override
    public String problem() {
        try {
            redis.ping();
            return null;
        } catch (JedisException e) {
            return unavailable("be reached", e).getMessage();
        }
    }

    @Override
    public void close() {
        renewer.shutdownNow();
        for (String id : held) unlease(id);
        redis.close();
    }
}
