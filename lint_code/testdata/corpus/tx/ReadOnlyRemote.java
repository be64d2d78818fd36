package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.client.RestTemplate;
import com.acme.common.AccountRepository;

@Service
public class ReadOnlyRemote {
    private final RestTemplate restTemplate;
    private final AccountRepository accounts;

    ReadOnlyRemote(RestTemplate restTemplate, AccountRepository accounts) {
        this.restTemplate = restTemplate;
        this.accounts = accounts;
    }

    @Transactional(readOnly = true)
    public String enrich(Long id) {
        accounts.findById(id);
        return restTemplate.getForObject("http://partner/profile/" + id, String.class); // expect: remote-in-tx
    }
}
