package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.client.RestTemplate;
import com.acme.common.AccountRepository;

@Service
@Transactional
public class ClassLevelTxService {
    private final RestTemplate restTemplate;
    private final AccountRepository accounts;

    public ClassLevelTxService(RestTemplate restTemplate, AccountRepository accounts) {
        this.restTemplate = restTemplate;
        this.accounts = accounts;
    }

    public void pay(Long id) {
        accounts.findById(id);
        restTemplate.postForEntity("http://partner/pay", id, String.class); // expect: remote-in-tx
    }
}
