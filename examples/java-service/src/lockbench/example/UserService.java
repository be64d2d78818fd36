package lockbench.example;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

/**
 * The business operation of lockbench's single-call scenario, three ways, the
 * way a Spring developer writes them (each method's comment names its
 * annotation-level shape). The scenario's table is lockbench.rows (run, tbl,
 * id, text, version, locked_at, lock_owner): the runner seeds it for the run
 * that GET /lockbench/info names, and reads it back for the oracle.
 *
 *   read    SELECT text, version FROM users WHERE id = ?        (text: the primary identity)
 *   partner GET /api/v2/users/{primary}
 *   store   UPDATE users SET text = ?, version = version + 1 WHERE id = ?
 */
final class UserService {
  /** What one request came to: the HTTP status the contract gives it. */
  enum Outcome {
    OK(200), CONFLICT(409), POOL_TIMEOUT(503), ERROR(500);
    final int status;

    Outcome(int status) {
      this.status = status;
    }
  }

  private static final int USERS = 0;  // the scenario's table number in lockbench.rows (tbl)

  private final PoolFigures pool;
  private final PartnerClient partner;
  private final long run;
  private final long leaseTtlMs;
  private final String podName;

  UserService(PoolFigures pool, PartnerClient partner, long run, long leaseTtlMs, String podName) {
    this.pool = pool;
    this.partner = partner;
    this.run = run;
    this.leaseTtlMs = leaseTtlMs;
    this.podName = podName;
  }

  Outcome handle(String strategy, long key, long requestId) throws InterruptedException {
    try {
      switch (strategy) {
        case "held-tx:wait": return heldTx(key, requestId);
        case "advisory-xact:try": return advisoryXactTry(key, requestId);
        case "row-lease": return rowLease(key, requestId);
        default: return Outcome.ERROR;
      }
    } catch (SQLTransientConnectionException e) {
      return Outcome.POOL_TIMEOUT;  // HikariCP: "Connection is not available, request timed out after ...ms"
    } catch (SQLException e) {
      return Outcome.ERROR;
    }
  }

  /**
   * held-tx:wait. {@code @Transactional} around the partner call, with
   * {@code @Lock(PESSIMISTIC_WRITE)} on the repository's find: the connection
   * sits idle in transaction for the whole call.
   */
  private Outcome heldTx(long key, long requestId) throws SQLException, InterruptedException {
    try (PoolFigures.Borrowed b = pool.borrow()) {
      Connection c = b.conn;
      c.setAutoCommit(false);
      try {
        try (PreparedStatement lock = c.prepareStatement(
                 "SELECT 1 FROM lockbench.rows WHERE run = ? AND tbl = ? AND id = ? FOR UPDATE")) {
          bindRow(lock, key);
          lock.executeQuery().close();
        }
        String primary = readPrimary(c, key);
        if (primary == null || !partner.getUser(primary, requestId)) {
          c.rollback();  // rolls back the rows, not the partner's side effects
          return Outcome.ERROR;
        }
        store(c, key, primary);
        c.commit();
        return Outcome.OK;
      } catch (SQLException e) {
        c.rollback();
        throw e;
      }
    }
  }

  /**
   * advisory-xact:try. {@code @Transactional}, and first
   * {@code SELECT pg_try_advisory_xact_lock(hashtext(:key))} from a native
   * query: false is the 409 "another operation is in progress"; COMMIT
   * releases the lock. The connection is held through the call, as held-tx's.
   */
  private Outcome advisoryXactTry(long key, long requestId) throws SQLException, InterruptedException {
    try (PoolFigures.Borrowed b = pool.borrow()) {
      Connection c = b.conn;
      c.setAutoCommit(false);
      try {
        boolean got;
        try (PreparedStatement lock = c.prepareStatement("SELECT pg_try_advisory_xact_lock(hashtext(?))")) {
          lock.setString(1, "users:" + run + ":" + key);  // the run in the key: runs never share a lock
          try (ResultSet r = lock.executeQuery()) {
            got = r.next() && r.getBoolean(1);
          }
        }
        if (!got) {
          c.rollback();
          return Outcome.CONFLICT;
        }
        String primary = readPrimary(c, key);
        if (primary == null || !partner.getUser(primary, requestId)) {
          c.rollback();
          return Outcome.ERROR;
        }
        store(c, key, primary);
        c.commit();
        return Outcome.OK;
      } catch (SQLException e) {
        c.rollback();
        throw e;
      }
    }
  }

  /**
   * row-lease. The lock is data: one autocommitted UPDATE takes the lease
   * (0 rows: 409), the connection goes back to the pool during the partner
   * call, and a second borrow stores the result only while the lease is still
   * ours (WHERE lock_owner = :me) and gives the lease back. A
   * {@code @Modifying @Query} per statement, no transaction around the call.
   */
  private Outcome rowLease(long key, long requestId) throws SQLException, InterruptedException {
    String owner = podName + ":" + requestId;
    String primary;
    try (PoolFigures.Borrowed b = pool.borrow()) {
      Connection c = b.conn;
      c.setAutoCommit(true);
      try (PreparedStatement take = c.prepareStatement(
               "UPDATE lockbench.rows SET locked_at = now(), lock_owner = ?, lease_token = lease_token + 1 "
               + "WHERE run = ? AND tbl = ? AND id = ? AND (locked_at IS NULL OR locked_at < now() - ? * interval '1 millisecond')")) {
        take.setString(1, owner);
        take.setLong(2, run);
        take.setInt(3, USERS);
        take.setLong(4, key);
        take.setLong(5, leaseTtlMs);
        if (take.executeUpdate() == 0) return Outcome.CONFLICT;
      }
      primary = readPrimary(c, key);
      if (primary == null) {
        release(c, key, owner);
        return Outcome.ERROR;
      }
    }  // back to the pool: only the lease row says we hold the lock
    boolean done = partner.getUser(primary, requestId);
    try (PoolFigures.Borrowed b = pool.borrow()) {
      Connection c = b.conn;
      c.setAutoCommit(true);
      if (done) {
        try (PreparedStatement st = c.prepareStatement(
                 "UPDATE lockbench.rows SET text = ?, version = version + 1 "
                 + "WHERE run = ? AND tbl = ? AND id = ? AND lock_owner = ?")) {
          st.setString(1, primary);
          st.setLong(2, run);
          st.setInt(3, USERS);
          st.setLong(4, key);
          st.setString(5, owner);
          st.executeUpdate();  // 0 rows: the lease was lost to a steal, nothing stored
        }
      }
      release(c, key, owner);
    }
    return done ? Outcome.OK : Outcome.ERROR;
  }

  private void release(Connection c, long key, String owner) throws SQLException {
    try (PreparedStatement rel = c.prepareStatement(
             "UPDATE lockbench.rows SET locked_at = NULL, lock_owner = NULL WHERE run = ? AND tbl = ? AND id = ? AND lock_owner = ?")) {
      bindRow(rel, key);
      rel.setString(4, owner);
      rel.executeUpdate();
    }
  }

  private String readPrimary(Connection c, long key) throws SQLException {
    try (PreparedStatement q = c.prepareStatement(
             "SELECT text, version FROM lockbench.rows WHERE run = ? AND tbl = ? AND id = ? ORDER BY seq LIMIT 1")) {
      bindRow(q, key);
      try (ResultSet r = q.executeQuery()) {
        return r.next() ? r.getString(1) : null;
      }
    }
  }

  private void store(Connection c, long key, String primary) throws SQLException {
    try (PreparedStatement st = c.prepareStatement(
             "UPDATE lockbench.rows SET text = ?, version = version + 1 WHERE run = ? AND tbl = ? AND id = ?")) {
      st.setString(1, primary);
      st.setLong(2, run);
      st.setInt(3, USERS);
      st.setLong(4, key);
      st.executeUpdate();
    }
  }

  private void bindRow(PreparedStatement p, long key) throws SQLException {
    p.setLong(1, run);
    p.setInt(2, USERS);
    p.setLong(3, key);
  }
}
