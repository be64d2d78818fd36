package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.client.RestClient;

@Service
public class RestClientTx {
    private final RestClient restClient;

    RestClientTx(RestClient.Builder builder) { this.restClient = builder.baseUrl("http://partner").build(); }

    @Transactional
    public void link(String person) {
        restClient.post().uri("/link").body(person).retrieve().toBodilessEntity(); // expect: remote-in-tx
    }
}
