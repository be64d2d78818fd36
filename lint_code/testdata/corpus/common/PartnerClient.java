package com.acme.common;

import org.springframework.stereotype.Component;
import org.springframework.web.client.RestTemplate;

@Component
public class PartnerClient {
    private final RestTemplate restTemplate;

    public PartnerClient(RestTemplate restTemplate) {
        this.restTemplate = restTemplate;
    }

    public String register(String person) {
        return restTemplate.postForObject("http://partner/register", person, String.class);
    }
}
