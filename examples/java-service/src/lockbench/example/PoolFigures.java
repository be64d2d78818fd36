package lockbench.example;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import com.zaxxer.hikari.pool.HikariPool;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

/**
 * The pool as lockbench's runner reads it (GET /lockbench/pool and
 * /lockbench/stats, serve's shape): gauges from HikariCP's own
 * HikariPoolMXBean, and per borrow the wait and the hold, requests' apart from
 * the readiness probe's (a probe's SELECT 1 is no request's hold: it would pull
 * the mean hold, and the Little's-law ceiling, down). The request holds are
 * also listed in the order the pool granted them ({@code hold_ms_by_grant}):
 * lockbench validate replays them in the simulator, so that a host's stall
 * lands on the same request in both worlds.
 */
final class PoolFigures {
  private final HikariDataSource ds;
  private final HikariPoolMXBean mx;
  private final HikariPool pool;  // for a borrow with the probe's own timeout

  private final Object mu = new Object();
  // GUARDED_BY(mu): everything below.
  private final DoubleList waitMs = new DoubleList();
  private final DoubleList holdMs = new DoubleList();
  private final DoubleList grantMs = new DoubleList();  // each request hold's grant, ms since the reset
  private final DoubleList askedMs = new DoubleList();  // each request's getConnection call, ms since the reset
  private final DoubleList returnMs = new DoubleList();  // every borrow's close(), probes' too, ms since the reset
  private long resetNs = System.nanoTime();
  private long probeBorrows = 0;
  private long timeouts = 0;
  private double busyConnS = 0;  // every borrow's hold, probes' included (the pool's utilization)
  // Waiting threads over time: the sum of every borrow's wait, timeouts and
  // probes included (L = λW on the pool's queue: exact, where sampling the
  // MXBean's count would miss short waits and count a borrow's own scan).
  private double pendingS = 0;
  private int activeMax = 0;
  private int pendingMax = 0;

  PoolFigures(HikariDataSource ds) {
    this.ds = ds;
    this.mx = ds.getHikariPoolMXBean();
    // The MXBean is the pool itself (HikariPool implements HikariPoolMXBean):
    // the probe borrows from the very pool the requests use.
    this.pool = (HikariPool) mx;
  }

  /** A request's borrow: the pool's connectionTimeout, as DataSourceUtils.getConnection. */
  Borrowed borrow() throws SQLException {
    long t0 = System.nanoTime();
    try {
      Connection c = ds.getConnection();
      return new Borrowed(c, t0, System.nanoTime(), false);
    } catch (SQLTransientConnectionException e) {
      synchronized (mu) {
        ++timeouts;
        pendingS += (System.nanoTime() - t0) / 1e9;  // it waited its whole connectionTimeout
      }
      throw e;
    }
  }

  /** The readiness probe's borrow, within the probe's timeout. */
  Borrowed borrowForProbe(long timeoutMs) throws SQLException {
    long t0 = System.nanoTime();
    try {
      Connection c = pool.getConnection(timeoutMs);
      return new Borrowed(c, t0, System.nanoTime(), true);
    } catch (SQLException e) {
      synchronized (mu) {
        pendingS += (System.nanoTime() - t0) / 1e9;
      }
      throw e;
    }
  }

  /** One borrow: close() gives it back and notes its hold. */
  final class Borrowed implements AutoCloseable {
    final Connection conn;
    private final long borrowedNs;
    private final long waitedNs;
    private final boolean probe;
    private boolean closed = false;

    private Borrowed(Connection conn, long askedNs, long borrowedNs, boolean probe) {
      this.conn = conn;
      this.borrowedNs = borrowedNs;
      this.waitedNs = borrowedNs - askedNs;
      this.probe = probe;
    }

    @Override
    public void close() throws SQLException {
      if (closed) return;
      closed = true;
      long returnNs = System.nanoTime();  // the bag's requite is inside close(): no later than this
      try {
        conn.close();  // HikariCP rolls back an open transaction and resets the connection
      } finally {
        double held = (System.nanoTime() - borrowedNs) / 1e6;
        synchronized (mu) {
          busyConnS += held / 1000;
          pendingS += waitedNs / 1e9;
          returnMs.add((returnNs - resetNs) / 1e6);
          if (probe) {
            ++probeBorrows;
          } else {
            waitMs.add(waitedNs / 1e6);
            holdMs.add(held);
            grantMs.add((borrowedNs - resetNs) / 1e6);
            askedMs.add((borrowedNs - waitedNs - resetNs) / 1e6);
          }
        }
      }
    }
  }

  /** A runner's run starts (it read GET /lockbench/info): the figures count from here. */
  void reset() {
    synchronized (mu) {
      waitMs.clear();
      holdMs.clear();
      grantMs.clear();
      askedMs.clear();
      returnMs.clear();
      resetNs = System.nanoTime();
      probeBorrows = 0;
      timeouts = 0;
      busyConnS = 0;
      pendingS = 0;
      activeMax = 0;
      pendingMax = 0;
    }
  }

  /** Every few milliseconds, by Service's sampler thread: the peaks, from the MXBean. */
  void sample() {
    int active = mx.getActiveConnections();
    int pending = mx.getThreadsAwaitingConnection();
    synchronized (mu) {
      activeMax = Math.max(activeMax, active);
      pendingMax = Math.max(pendingMax, pending);
    }
  }

  String gaugesJson() {
    return "{\"active\":" + mx.getActiveConnections() + ",\"pending\":" + mx.getThreadsAwaitingConnection()
        + ",\"idle\":" + mx.getIdleConnections() + ",\"total\":" + mx.getTotalConnections() + "}";
  }

  /** The pool block of /lockbench/stats (real/process_pods.cpp's add_pool reads it). */
  String statsJson(int size) {
    synchronized (mu) {
      return "{\"name\":\"java\",\"size\":" + size + ",\"active_max\":" + activeMax + ",\"pending_max\":" + pendingMax
          + ",\"busy_conn_s\":" + busyConnS + ",\"pending_s\":" + pendingS + ",\"probe_borrows\":" + probeBorrows
          + ",\"wait_ms\":" + waitMs.json() + ",\"hold_ms\":" + holdMs.json()
          + ",\"hold_ms_by_grant\":" + holdMs.sortedBy(grantMs).json() + ",\"handoff_ms\":" + handoffMs().json()
          + ",\"timeouts\":" + timeouts
          + ",\"leaks\":0,\"leak_steps\":[]}";
    }
  }

  /**
   * The pool's hand-off as this run met it: for each request that was already
   * waiting when a connection came back (its getConnection began before the
   * latest close() that began before its grant), the time from that close()'s
   * start to the grant. It is how long a returned connection takes to reach a
   * parked thread (HikariCP's requite, the SynchronousQueue, the thread's
   * wake-up) on this host under this load: what the simulator's
   * --pool-handoff models. Ascending.
   */
  private DoubleList handoffMs() {
    double[] returns = java.util.Arrays.copyOf(returnMs.v, returnMs.n);
    java.util.Arrays.sort(returns);
    DoubleList out = new DoubleList();
    for (int i = 0; i < grantMs.n; ++i) {
      int at = java.util.Arrays.binarySearch(returns, grantMs.v[i]);
      int latest = at >= 0 ? at : -at - 2;  // the last return at or before the grant
      if (latest >= 0 && returns[latest] > askedMs.v[i]) out.add(grantMs.v[i] - returns[latest]);
    }
    java.util.Arrays.sort(out.v, 0, out.n);
    return out;
  }

  /** A growable array of doubles, written as JSON. */
  static final class DoubleList {
    private double[] v = new double[1024];
    private int n = 0;

    void clear() {
      n = 0;
    }

    void add(double x) {
      if (n == v.length) v = java.util.Arrays.copyOf(v, n * 2);
      v[n++] = x;
    }

    /** These values in the order of {@code keys}' values (same length), ascending. */
    DoubleList sortedBy(DoubleList keys) {
      Integer[] order = new Integer[n];
      for (int i = 0; i < n; ++i) order[i] = i;
      java.util.Arrays.sort(order, (a, b) -> Double.compare(keys.v[a], keys.v[b]));
      DoubleList out = new DoubleList();
      for (int i : order) out.add(v[i]);
      return out;
    }

    String json() {
      StringBuilder b = new StringBuilder(n * 8 + 2).append('[');
      for (int i = 0; i < n; ++i) {
        if (i > 0) b.append(',');
        b.append(Math.round(v[i] * 1000) / 1000.0);
      }
      return b.append(']').toString();
    }
  }
}
