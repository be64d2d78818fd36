package com.acme.tx;

import com.acme.common.PartnerClient;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;

// A JDBC transaction written by hand around the partner call: the pooled
// connection stays checked out, idle in transaction, for the whole call.
public class JdbcTxByHand {
    private final DataSource dataSource;
    private final PartnerClient partner;

    JdbcTxByHand(DataSource dataSource, PartnerClient partner) {
        this.dataSource = dataSource;
        this.partner = partner;
    }

    public void link(long id, String person) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement lock = c.prepareStatement("SELECT 1 FROM accounts WHERE id = ? FOR UPDATE")) {
                lock.setLong(1, id);
                lock.executeQuery().close();
            }
            if (partner.register(person) == null) { // expect: remote-in-tx
                c.rollback();
                return;
            }
            c.commit();
        }
    }
}
