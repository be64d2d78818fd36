package com.acme.tx;

import com.acme.common.AccountRepository;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.client.RestTemplate;

// The transaction reaches the partner through a plain helper of its own class:
// a self-invocation, but the helper has no attributes of its own for the proxy
// to bypass, so the finding must not say that one was bypassed.
@Service
public class TxWithHelper {
    private final RestTemplate restTemplate;
    private final AccountRepository accounts;

    TxWithHelper(RestTemplate restTemplate, AccountRepository accounts) {
        this.restTemplate = restTemplate;
        this.accounts = accounts;
    }

    @Transactional(readOnly = true)
    public String status(Long id) {
        accounts.findById(id);
        return rejectionCodes(id); // expect: remote-in-tx
    }

    protected String rejectionCodes(Long id) {
        return restTemplate.getForObject("http://status/codes/" + id, String.class);
    }
}
