package lockbench.example;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A reference service for lockbench's --targets, in plain Java 17: the JDK's
 * com.sun.net.httpserver as the web server, HikariCP as the pool, the JDK's
 * HttpClient for the partner. It implements docs/reference/service-contract.md:
 *
 *   POST /ops/single-call/{key}, /calls/{key}   the operation (UserService): 200, 409, 503, 429, 500
 *   GET  /health/readiness[?timeout_ms=N]      Spring's DataSource health indicator: a borrow from
 *                                              the same pool within the probe's timeout, SELECT 1
 *   GET  /lockbench/info                       {"run", "scenario", "strategy"}: the runner seeds the run's rows;
 *                                              the figures of /lockbench/stats count from its last read
 *   GET  /lockbench/pool                       HikariPoolMXBean's gauges
 *   GET  /lockbench/stats                      the final pool figures (requests' borrows apart from probes')
 *   POST /lockbench/requests-over              no background work here: {"background_running": 0}
 *
 * Tomcat's worker model: --threads requests run at once, --accept-count more
 * wait for a thread, the next is refused with 429 at once.
 */
public final class Service {
  private Service() {}

  public static void main(String[] args) throws Exception {
    Config cfg;
    try {
      cfg = Config.parse(args, System.getenv());
    } catch (Config.BadFlag e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    if (cfg.run == 0) cfg.run = 1 + (ThreadLocalRandom.current().nextLong() >>> 2);

    HikariConfig hc = new HikariConfig();
    hc.setPoolName("java");
    hc.setJdbcUrl(cfg.jdbcUrl);
    if (!cfg.username.isEmpty()) hc.setUsername(cfg.username);
    if (!cfg.password.isEmpty()) hc.setPassword(cfg.password);
    hc.setMaximumPoolSize(cfg.maximumPoolSize);
    if (cfg.minimumIdle >= 0) hc.setMinimumIdle(cfg.minimumIdle);
    hc.setConnectionTimeout(cfg.connectionTimeout);
    hc.setMaxLifetime(cfg.maxLifetime);
    hc.setIdleTimeout(cfg.idleTimeout);
    hc.setLeakDetectionThreshold(cfg.leakDetectionThreshold);
    hc.setValidationTimeout(cfg.validationTimeout);
    hc.addDataSourceProperty("ApplicationName", "lockbench-java-" + cfg.run);
    HikariDataSource ds;
    try {
      ds = new HikariDataSource(hc);
    } catch (RuntimeException e) {
      System.err.println("--db: cannot open the pool at " + cfg.jdbcUrl + ": " + oneLine(e));
      System.exit(2);
      return;
    }
    PoolFigures pool = new PoolFigures(ds);
    PartnerClient partner = new PartnerClient(cfg.partner, cfg.partnerConnectTimeoutMs, cfg.partnerReadTimeoutMs);
    UserService users = new UserService(pool, partner, cfg.run, cfg.leaseTtlMs, "java-" + ProcessHandle.current().pid());
    new Service.Http(cfg, ds, pool, users).start();
  }

  static String oneLine(Throwable e) {
    String m = e.getMessage() == null ? e.toString() : e.getMessage();
    return m.replace('\n', ' ');
  }

  static final class Http {
    private final Config cfg;
    private final HikariDataSource ds;
    private final PoolFigures pool;
    private final UserService users;
    private final Semaphore workers;          // server.tomcat.threads.max
    private final AtomicInteger admitted = new AtomicInteger();  // running + waiting for a worker
    private final AtomicLongArray outcomes = new AtomicLongArray(5);  // ok conflict pool_timeout rejected error

    Http(Config cfg, HikariDataSource ds, PoolFigures pool, UserService users) {
      this.cfg = cfg;
      this.ds = ds;
      this.pool = pool;
      this.users = users;
      this.workers = new Semaphore(cfg.threads, true);  // fair: the accept queue is first come, first served
    }

    void start() throws IOException {
      HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), cfg.port), 1024);
      ExecutorService io = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "http");
        t.setDaemon(true);
        return t;
      });
      server.setExecutor(io);
      server.createContext("/", this::route);
      Thread sampler = new Thread(() -> {
        while (true) {
          pool.sample();
          try {
            Thread.sleep(2);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "pool-sampler");
      sampler.setDaemon(true);
      sampler.start();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        server.stop(0);
        ds.close();
      }));
      server.start();
      System.out.println("lockbench java service: run " + cfg.run + ", " + cfg.strategy + " on " + cfg.scenario
          + ", maximumPoolSize " + cfg.maximumPoolSize + ", connectionTimeout " + cfg.connectionTimeout + " ms");
      System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
      System.out.flush();
    }

    private void route(HttpExchange ex) throws IOException {
      try (ex) {
        String path = ex.getRequestURI().getRawPath();
        String method = ex.getRequestMethod();
        if (method.equals("POST") && (path.startsWith("/ops/single-call/") || path.startsWith("/calls/"))) {
          operation(ex, path.substring(path.lastIndexOf('/') + 1));
        } else if (method.equals("GET") && path.equals("/health/readiness")) {
          readiness(ex);
        } else if (method.equals("GET") && path.equals("/health/liveness")) {
          send(ex, 200, "{\"status\":\"UP\"}");
        } else if (method.equals("GET") && path.equals("/lockbench/info")) {
          // A runner reads it before its load: this run's figures start here
          // (a long-lived service would otherwise report every run since its start).
          pool.reset();
          for (int i = 0; i < outcomes.length(); ++i) outcomes.set(i, 0);
          // A collection now, before the run's load, rather than a young
          // collection's stop-the-world pause inside it: on a loaded host one
          // pause of 180 ms was a run's whole p99 (README, "Garbage collection").
          System.gc();
          send(ex, 200, "{\"run\":" + cfg.run + ",\"scenario\":\"" + cfg.scenario + "\",\"strategy\":\"" + cfg.strategy
              + "\",\"pid\":" + ProcessHandle.current().pid() + "}");
        } else if (method.equals("GET") && path.equals("/lockbench/pool")) {
          send(ex, 200, pool.gaugesJson());
        } else if (method.equals("GET") && path.equals("/lockbench/stats")) {
          send(ex, 200, stats());
        } else if (method.equals("POST") && path.equals("/lockbench/requests-over")) {
          send(ex, 200, "{\"background_running\":0}");
        } else {
          send(ex, 404, "{\"error\":\"no such endpoint\"}");
        }
      } catch (RuntimeException e) {
        System.err.println("lockbench java service: " + oneLine(e));
      }
    }

    private void operation(HttpExchange ex, String keyText) throws IOException {
      long key;
      long requestId;
      try {
        key = Long.parseLong(keyText);
        requestId = Long.parseLong(ex.getRequestHeaders().getFirst("X-Request-Id"));
        if (key < 1 || requestId < 1) throw new NumberFormatException();
      } catch (NumberFormatException | NullPointerException e) {
        send(ex, 400, "{\"error\":\"the key and X-Request-Id are whole numbers from 1\"}");
        return;
      }
      ex.getRequestBody().readAllBytes();
      if (admitted.incrementAndGet() > cfg.threads + cfg.acceptCount) {  // Tomcat's full accept queue
        admitted.decrementAndGet();
        outcomes.incrementAndGet(3);
        send(ex, 429, "{\"error\":\"rejected\"}");
        return;
      }
      UserService.Outcome o;
      try {
        workers.acquire();
        try {
          o = users.handle(cfg.strategy, key, requestId);
        } finally {
          workers.release();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        o = UserService.Outcome.ERROR;
      } finally {
        admitted.decrementAndGet();
      }
      outcomes.incrementAndGet(switch (o) {
        case OK -> 0;
        case CONFLICT -> 1;
        case POOL_TIMEOUT -> 2;
        case ERROR -> 4;
      });
      send(ex, o.status, "{\"outcome\":\"" + o.name().toLowerCase() + "\"}");
    }

    // Spring Boot's readiness group with the db indicator: a borrow within the
    // probe's timeout (the runner's kubelet passes it as timeout_ms), SELECT 1.
    private void readiness(HttpExchange ex) throws IOException {
      long timeoutMs = cfg.probeTimeoutMs;
      String q = ex.getRequestURI().getRawQuery();
      if (q != null) {
        for (String kv : q.split("&")) {
          if (!kv.startsWith("timeout_ms=")) continue;
          try {
            timeoutMs = Long.parseLong(kv.substring("timeout_ms=".length()));
          } catch (NumberFormatException e) {
            send(ex, 400, "timeout_ms: a whole number of milliseconds from 0 to 999999\n");
            return;
          }
        }
      }
      boolean up = false;
      try (PoolFigures.Borrowed b = pool.borrowForProbe(timeoutMs)) {
        try (PreparedStatement p = b.conn.prepareStatement("SELECT 1")) {
          p.executeQuery().close();
        }
        up = true;
      } catch (SQLException e) {
        // no connection within the timeout, or the database is gone: DOWN
      }
      send(ex, up ? 200 : 503, up ? "{\"status\":\"UP\"}" : "{\"status\":\"DOWN\"}");
    }

    private String stats() {
      return "{\"pool\":" + pool.statsJson(cfg.maximumPoolSize) + ",\"outcomes\":{\"ok\":" + outcomes.get(0)
          + ",\"conflict\":" + outcomes.get(1) + ",\"pool_timeout\":" + outcomes.get(2) + ",\"rejected\":"
          + outcomes.get(3) + ",\"error\":" + outcomes.get(4) + "},\"background_running\":0}";
    }

    private static void send(HttpExchange ex, int status, String body) throws IOException {
      byte[] b = body.getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", body.startsWith("{") ? "application/json" : "text/plain");
      ex.sendResponseHeaders(status, b.length);
      try (OutputStream os = ex.getResponseBody()) {
        os.write(b);
      }
    }
  }
}
