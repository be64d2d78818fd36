package com.acme.tx;

import com.acme.common.Account;
import com.acme.tx.OutboxService;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestTemplate;

// Near miss: the remote call comes after the transactional method has returned.
@RestController
public class OrderController {
    private final OutboxService service;
    private final RestTemplate restTemplate;

    OrderController(OutboxService service, RestTemplate restTemplate) {
        this.service = service;
        this.restTemplate = restTemplate;
    }

    @PostMapping("/credit")
    public void credit(Account account) {
        service.credit(account);
        restTemplate.postForEntity("http://partner/credited", account, String.class);
    }
}
