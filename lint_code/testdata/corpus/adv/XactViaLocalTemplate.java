package com.acme.adv;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

// Near miss: the transaction-scoped lock is taken by a bean that is only called
// inside a TransactionTemplate block, a local `var` of the caller: it is inside
// a transaction, and its key is hashtext(), not hashCode().
@Component
public class XactViaLocalTemplate {
    private final TaskLocker locker;
    private final PlatformTransactionManager transactionManager;

    XactViaLocalTemplate(TaskLocker locker, PlatformTransactionManager transactionManager) {
        this.locker = locker;
        this.transactionManager = transactionManager;
    }

    public void runOnce(String task, Runnable work) {
        var tx = new TransactionTemplate(transactionManager);
        tx.executeWithoutResult(status -> {
            if (locker.acquire(task)) {
                work.run();
            }
        });
    }

    @Component
    static class TaskLocker {
        private final JdbcTemplate db;

        TaskLocker(JdbcTemplate db) {
            this.db = db;
        }

        boolean acquire(String task) {
            return Boolean.TRUE.equals(db.queryForObject("SELECT pg_try_advisory_xact_lock(hashtext(?))", Boolean.class, task));
        }
    }
}
