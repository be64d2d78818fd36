package com.acme.bad;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.client.RestTemplate;

@Service
public class BrokenService {
    private final RestTemplate restTemplate;

    BrokenService(RestTemplate restTemplate) { this.restTemplate = restTemplate; }

    public void halfWritten(String id) {
        int x = ;
        id.trim(;
        return id +;
    }

    @Transactional
    public void pay(String id) {
        restTemplate.postForEntity("http://partner/pay", id, String.class); // expect: remote-in-tx
    }
}
