package com.acme.adv;

import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;
import org.springframework.stereotype.Service;

@Service
public class PinnedConnection {
    private final DataSource dataSource;

    PinnedConnection(DataSource dataSource) { this.dataSource = dataSource; }

    public void work(long key, Runnable body) throws Exception {
        try (Connection c = dataSource.getConnection()) {
            try (PreparedStatement lock = c.prepareStatement("select pg_advisory_lock(?)")) {
                lock.setLong(1, key);
                lock.execute();
            }
            try {
                body.run();
            } finally {
                try (PreparedStatement unlock = c.prepareStatement("select pg_advisory_unlock(?)")) {
                    unlock.setLong(1, key);
                    unlock.execute();
                }
            }
        }
    }
}
