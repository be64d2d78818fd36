package com.acme.adv;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class SessionInTx {
    private final JdbcTemplate jdbc;

    SessionInTx(JdbcTemplate jdbc) { this.jdbc = jdbc; }

    @Transactional
    public void work(long key) {
        jdbc.queryForObject("select pg_advisory_lock(?)", Object.class, key);
        try {
            jdbc.update("update job set runs = runs + 1 where id = ?", key);
        } finally {
            jdbc.queryForObject("select pg_advisory_unlock(?)", Boolean.class, key);
        }
    }
}
