package com.acme.adv;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;

@Service
public class XactOutsideTx {
    private static final String LOCK = "SELECT pg_advisory_xact_lock(?)";
    private final JdbcTemplate jdbc;

    XactOutsideTx(JdbcTemplate jdbc) { this.jdbc = jdbc; }

    public void work(long key) {
        jdbc.queryForObject(LOCK, Object.class, key); // expect: advisory-lock
        jdbc.update("update job set runs = runs + 1 where id = ?", key);
    }
}
