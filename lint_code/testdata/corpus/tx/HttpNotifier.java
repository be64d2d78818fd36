package com.acme.tx;

import org.springframework.stereotype.Component;
import org.springframework.web.client.RestTemplate;

@Component
public class HttpNotifier implements Notifier {
    private final RestTemplate restTemplate;

    HttpNotifier(RestTemplate restTemplate) { this.restTemplate = restTemplate; }

    @Override
    public void notifyOf(String id) {
        restTemplate.postForEntity("http://partner/notify", id, String.class);
    }
}
