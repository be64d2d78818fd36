package com.acme.tx;

import org.springframework.scheduling.annotation.Async;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestTemplate;

@Component
public class AsyncPartner {
    private final RestTemplate restTemplate;

    AsyncPartner(RestTemplate restTemplate) { this.restTemplate = restTemplate; }

    @Async
    public void send(String id) {
        restTemplate.postForEntity("http://partner/async", id, String.class);
    }
}
