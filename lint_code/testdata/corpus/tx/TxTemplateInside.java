package com.acme.tx;

import com.acme.common.OutboxEvent;
import com.acme.common.OutboxRepository;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.client.RestTemplate;

@Service
public class TxTemplateInside {
    private final TransactionTemplate transactionTemplate;
    private final RestTemplate restTemplate;
    private final OutboxRepository outbox;

    TxTemplateInside(TransactionTemplate tt, RestTemplate rt, OutboxRepository outbox) {
        this.transactionTemplate = tt;
        this.restTemplate = rt;
        this.outbox = outbox;
    }

    public void submit(String id) {
        transactionTemplate.executeWithoutResult(status -> {
            outbox.save(new OutboxEvent(id));
            restTemplate.postForEntity("http://partner/submit", id, String.class); // expect: remote-in-tx
        });
    }
}
