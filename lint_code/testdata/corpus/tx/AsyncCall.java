package com.acme.tx;

import java.util.concurrent.CompletableFuture;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.client.RestTemplate;

@Service
public class AsyncCall {
    private final AsyncPartner asyncPartner;
    private final RestTemplate restTemplate;

    AsyncCall(AsyncPartner asyncPartner, RestTemplate restTemplate) {
        this.asyncPartner = asyncPartner;
        this.restTemplate = restTemplate;
    }

    @Transactional
    public void place(String id) {
        asyncPartner.send(id);
        CompletableFuture.runAsync(() -> restTemplate.postForEntity("http://partner/later", id, String.class));
    }
}
