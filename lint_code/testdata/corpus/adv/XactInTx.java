package com.acme.adv;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class XactInTx {
    private final JdbcTemplate jdbc;

    XactInTx(JdbcTemplate jdbc) { this.jdbc = jdbc; }

    @Transactional
    public void work(long key) {
        jdbc.queryForObject("select pg_advisory_xact_lock(?)", Object.class, key);
        jdbc.update("update job set runs = runs + 1 where id = ?", key);
    }
}
