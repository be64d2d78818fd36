package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.client.RestTemplate;
import com.acme.common.AccountRepository;

@Service
public class SelfInvocation {
    private final RestTemplate restTemplate;
    private final AccountRepository accounts;

    SelfInvocation(RestTemplate restTemplate, AccountRepository accounts) {
        this.restTemplate = restTemplate;
        this.accounts = accounts;
    }

    @Transactional
    public void order(Long id) {
        accounts.findById(id);
        this.notifyPartner(id); // expect: remote-in-tx
    }

    @Transactional(propagation = Propagation.NOT_SUPPORTED)
    public void notifyPartner(Long id) {
        restTemplate.postForLocation("http://partner/orders", id);
    }
}
