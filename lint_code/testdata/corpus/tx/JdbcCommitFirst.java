package com.acme.tx;

import com.acme.common.PartnerClient;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;

// Near miss: the hand-written transaction commits before the partner call,
// and the connection goes back to the pool before it.
public class JdbcCommitFirst {
    private final DataSource dataSource;
    private final PartnerClient partner;

    JdbcCommitFirst(DataSource dataSource, PartnerClient partner) {
        this.dataSource = dataSource;
        this.partner = partner;
    }

    public void link(long id, String person) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement mark = c.prepareStatement("UPDATE accounts SET linking = true WHERE id = ?")) {
                mark.setLong(1, id);
                mark.executeUpdate();
            }
            c.commit();
        }
        partner.register(person);
    }
}
