package com.acme.adv;

import com.acme.common.PartnerClient;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;

@Service
public class UnlockNotFinally {
    private final JdbcTemplate jdbc;
    private final PartnerClient partnerClient;

    UnlockNotFinally(JdbcTemplate jdbc, PartnerClient partnerClient) {
        this.jdbc = jdbc;
        this.partnerClient = partnerClient;
    }

    public void link(long key, String person) {
        jdbc.queryForObject("select pg_advisory_lock(?)", Object.class, key); // expect: advisory-lock
        partnerClient.register(person);
        jdbc.queryForObject("select pg_advisory_unlock(?)", Boolean.class, key); // expect: advisory-lock
    }
}
