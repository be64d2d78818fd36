package com.acme.adv;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.nio.ByteBuffer;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

// Safe: a transaction-scoped lock on a 64-bit key from SHA-256, not hashCode().
@Service
public class SafeKey {
    private final JdbcTemplate jdbc;

    SafeKey(JdbcTemplate jdbc) { this.jdbc = jdbc; }

    @Transactional
    public void work(String person) throws Exception {
        byte[] d = MessageDigest.getInstance("SHA-256").digest(person.getBytes(StandardCharsets.UTF_8));
        long key = ByteBuffer.wrap(d).getLong();
        jdbc.queryForObject("select pg_advisory_xact_lock(?)", Object.class, key);
        jdbc.update("update person set seen = now() where name = ?", person);
    }
}
