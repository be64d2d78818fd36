package com.acme.adv;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class HashKey {
    private final JdbcTemplate jdbc;

    HashKey(JdbcTemplate jdbc) { this.jdbc = jdbc; }

    @Transactional
    public void work(String person) {
        jdbc.queryForObject("select pg_advisory_xact_lock(?)", Object.class, person.hashCode()); // expect: advisory-lock
        jdbc.update("update person set seen = now() where name = ?", person);
    }
}
