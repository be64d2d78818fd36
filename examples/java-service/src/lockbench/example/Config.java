package lockbench.example;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The service's settings, from flags. The pool's are named as HikariCP names
 * them (spring.datasource.hikari.*): --maximumPoolSize, --minimumIdle,
 * --connectionTimeout, --maxLifetime, --idleTimeout, --leakDetectionThreshold,
 * --validationTimeout (milliseconds, as HikariCP takes them). A bad flag is one
 * line naming it and what it accepts, and exit 2 (Service.main).
 */
final class Config {
  static final class BadFlag extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BadFlag(String message) {
      super(message);
    }
  }

  // The pool (HikariConfig's names; the defaults are HikariCP's).
  String jdbcUrl = "";
  String username = "";
  String password = "";
  int maximumPoolSize = 10;
  int minimumIdle = -1;  // -1: HikariCP's default, the maximum (a fixed-size pool)
  long connectionTimeout = 30000;
  long maxLifetime = 1800000;
  long idleTimeout = 600000;
  long leakDetectionThreshold = 0;
  long validationTimeout = 5000;

  // The service.
  int port = 8080;
  String partner = "";
  long partnerConnectTimeoutMs = 1000;
  long partnerReadTimeoutMs = 10000;
  String strategy = "held-tx:wait";
  String scenario = "single-call";
  long run = 0;  // lockbench.rows' run (0: a new one, printed at start)
  long leaseTtlMs = 30000;
  int threads = 200;      // server.tomcat.threads.max
  int acceptCount = 100;  // server.tomcat.accept-count
  long probeTimeoutMs = 1000;

  static final String[] STRATEGIES = {"held-tx:wait", "advisory-xact:try", "row-lease"};

  static final String USAGE =
      "usage: run.sh --db postgresql://USER[:PASSWORD]@HOST:PORT/DB (or --jdbcUrl, --username, --password;\n"
      + "       or the environment's LOCKBENCH_DB) --partner http://HOST:PORT [--port N] [--run N]\n"
      + "       [--strategy held-tx:wait|advisory-xact:try|row-lease] [--scenario single-call]\n"
      + "       [--maximumPoolSize N] [--minimumIdle N] [--connectionTimeout MS] [--maxLifetime MS]\n"
      + "       [--idleTimeout MS] [--leakDetectionThreshold MS] [--validationTimeout MS]\n"
      + "       [--threads N] [--accept-count N] [--partner-read-timeout MS] [--partner-connect-timeout MS]\n"
      + "       [--lease-ttl MS] [--probe-timeout MS]";

  static Config parse(String[] args, Map<String, String> env) {
    Config c = new Config();
    Map<String, String> given = new LinkedHashMap<>();
    for (int i = 0; i < args.length; ++i) {
      String a = args[i];
      if (a.equals("--help") || a.equals("-h")) throw new BadFlag(USAGE);
      if (!a.startsWith("--")) throw new BadFlag(a + ": not a flag (flags are --name VALUE or --name=VALUE)");
      String name = a.substring(2);
      String value;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else {
        if (i + 1 >= args.length) throw new BadFlag("--" + name + ": needs a value");
        value = args[++i];
      }
      given.put(name, value);
    }
    String db = env.getOrDefault("LOCKBENCH_DB", "");
    for (Map.Entry<String, String> e : given.entrySet()) {
      String v = e.getValue();
      switch (e.getKey()) {
        case "db": db = v; break;
        case "jdbcUrl": c.jdbcUrl = v; break;
        case "username": c.username = v; break;
        case "password": c.password = v; break;
        case "maximumPoolSize": c.maximumPoolSize = intIn("maximumPoolSize", v, 1, 10000); break;
        case "minimumIdle": c.minimumIdle = intIn("minimumIdle", v, 0, 10000); break;
        case "connectionTimeout": c.connectionTimeout = msIn("connectionTimeout", v, 250); break;
        case "maxLifetime": c.maxLifetime = msIn("maxLifetime", v, 0); break;
        case "idleTimeout": c.idleTimeout = msIn("idleTimeout", v, 0); break;
        case "leakDetectionThreshold": c.leakDetectionThreshold = msIn("leakDetectionThreshold", v, 0); break;
        case "validationTimeout": c.validationTimeout = msIn("validationTimeout", v, 250); break;
        case "port": c.port = intIn("port", v, 0, 65535); break;
        case "partner": c.partner = v; break;
        case "partner-read-timeout": c.partnerReadTimeoutMs = msIn("partner-read-timeout", v, 1); break;
        case "partner-connect-timeout": c.partnerConnectTimeoutMs = msIn("partner-connect-timeout", v, 1); break;
        case "strategy": c.strategy = v; break;
        case "scenario": c.scenario = v; break;
        case "run": c.run = longIn("run", v, 1, Long.MAX_VALUE); break;
        case "lease-ttl": c.leaseTtlMs = msIn("lease-ttl", v, 1); break;
        case "threads": c.threads = intIn("threads", v, 1, 100000); break;
        case "accept-count": c.acceptCount = intIn("accept-count", v, 0, 1000000); break;
        case "probe-timeout": c.probeTimeoutMs = msIn("probe-timeout", v, 1); break;
        default: throw new BadFlag("--" + e.getKey() + ": unknown flag (run.sh --help lists them)");
      }
    }
    if (!java.util.Arrays.asList(STRATEGIES).contains(c.strategy))
      throw new BadFlag("--strategy: '" + c.strategy + "' is not one of held-tx:wait, advisory-xact:try, row-lease");
    if (!c.scenario.equals("single-call"))
      throw new BadFlag("--scenario: '" + c.scenario + "' is not served here; this service implements single-call");
    if (!c.partner.startsWith("http://") || c.partner.length() <= 7)
      throw new BadFlag("--partner: '" + c.partner + "' is not an http:// URL (e.g. http://127.0.0.1:8080)");
    if (c.minimumIdle > c.maximumPoolSize)
      throw new BadFlag("--minimumIdle: " + c.minimumIdle + " is above --maximumPoolSize " + c.maximumPoolSize);
    if (c.jdbcUrl.isEmpty()) {
      if (db.isEmpty()) throw new BadFlag("--db: give the database (postgresql://USER@HOST:PORT/DB, or --jdbcUrl)");
      c.fromLibpqUrl(db);
    }
    while (c.partner.endsWith("/")) c.partner = c.partner.substring(0, c.partner.length() - 1);
    return c;
  }

  // postgresql://user:password@host:port/db?... as libpq and lockbench take it.
  private void fromLibpqUrl(String url) {
    URI u;
    try {
      u = URI.create(url);
    } catch (IllegalArgumentException e) {
      throw new BadFlag("--db: not a postgresql:// URL");
    }
    if (!"postgresql".equals(u.getScheme()) && !"postgres".equals(u.getScheme()) || u.getHost() == null)
      throw new BadFlag("--db: not a postgresql://USER@HOST:PORT/DB URL");
    String info = u.getRawUserInfo();
    if (info != null) {
      int colon = info.indexOf(':');
      username = decode(colon >= 0 ? info.substring(0, colon) : info);
      if (colon >= 0) password = decode(info.substring(colon + 1));
    }
    String path = u.getRawPath() == null || u.getRawPath().length() <= 1 ? "/postgres" : u.getRawPath();
    jdbcUrl = "jdbc:postgresql://" + u.getHost() + ":" + (u.getPort() > 0 ? u.getPort() : 5432) + path;
  }

  private static String decode(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  private static long longIn(String name, String v, long lo, long hi) {
    try {
      long n = Long.parseLong(v);
      if (n >= lo && n <= hi) return n;
    } catch (NumberFormatException e) {
      // below: the one line
    }
    throw new BadFlag("--" + name + ": '" + v + "' is not a whole number from " + lo + " to " + hi);
  }

  private static int intIn(String name, String v, int lo, int hi) {
    return (int) longIn(name, v, lo, hi);
  }

  private static long msIn(String name, String v, long lo) {
    try {
      long n = Long.parseLong(v);
      if (n >= lo) return n;
    } catch (NumberFormatException e) {
      // below: the one line
    }
    throw new BadFlag("--" + name + ": '" + v + "' is not a whole number of milliseconds (at least " + lo + ")");
  }
}
