package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.web.client.RestTemplate;

@Service
public class PrivateHelperNoTx {
    private final RestTemplate restTemplate;

    PrivateHelperNoTx(RestTemplate restTemplate) { this.restTemplate = restTemplate; }

    public void call(String id) {
        restTemplate.postForEntity("http://partner/x", id, String.class);
    }
}
