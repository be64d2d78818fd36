package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

@Service
public class WebClientBlock {
    private final WebClient webClient;

    WebClientBlock(WebClient webClient) { this.webClient = webClient; }

    @Transactional
    public String pay(String id) {
        return webClient.post().uri("/pay/{id}", id).retrieve().bodyToMono(String.class).block(); // expect: remote-in-tx
    }

    @Transactional
    public Mono<String> payLater(String id) {
        return webClient.post().uri("/pay/{id}", id).retrieve().bodyToMono(String.class);
    }
}
