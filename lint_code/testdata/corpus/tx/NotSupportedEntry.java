package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.client.RestTemplate;

@Service
public class NotSupportedEntry {
    private final RestTemplate restTemplate;

    NotSupportedEntry(RestTemplate restTemplate) { this.restTemplate = restTemplate; }

    @Transactional(propagation = Propagation.NOT_SUPPORTED)
    public void notifyPartner(String id) {
        restTemplate.postForEntity("http://partner/notify", id, String.class);
    }
}
