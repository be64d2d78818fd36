package com.acme.sync;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;

@Service
public class SyncBlockService {
    private final JdbcTemplate jdbc;
    private final Object lock = new Object();

    SyncBlockService(JdbcTemplate jdbc) { this.jdbc = jdbc; }

    public void reserve(String sku) {
        synchronized (lock) { // expect: synchronized
            Integer n = jdbc.queryForObject("select stock from item where sku = ?", Integer.class, sku);
            if (n != null && n > 0) jdbc.update("update item set stock = stock - 1 where sku = ?", sku);
        }
    }
}
