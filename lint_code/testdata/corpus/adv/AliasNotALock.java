package com.acme.adv;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

// Near miss: a statement that names the advisory lock function without calling
// it (an H2 alias for tests) takes no lock.
@Component
public class AliasNotALock {
    private final JdbcTemplate db;

    AliasNotALock(JdbcTemplate db) {
        this.db = db;
    }

    public void setup() {
        db.execute("CREATE ALIAS pg_try_advisory_xact_lock FOR \"com.acme.adv.AliasNotALock.acquire\"");
    }

    public static boolean acquire(int key) {
        return true;
    }
}
