package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.client.RestTemplate;

@Service
public class RequiresNewTx {
    private final RestTemplate restTemplate;

    RequiresNewTx(RestTemplate restTemplate) { this.restTemplate = restTemplate; }

    @Transactional(propagation = Propagation.REQUIRES_NEW)
    public void audit(String id) {
        restTemplate.put("http://partner/audit/" + id, null); // expect: remote-in-tx
    }
}
