package com.acme.tx;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;
import org.springframework.web.client.RestTemplate;
import com.acme.common.AccountRepository;

@Service
@Transactional
public class AfterCommitListener {
    private final ApplicationEventPublisher events;
    private final RestTemplate restTemplate;
    private final AccountRepository accounts;

    AfterCommitListener(ApplicationEventPublisher events, RestTemplate restTemplate, AccountRepository accounts) {
        this.events = events;
        this.restTemplate = restTemplate;
        this.accounts = accounts;
    }

    public void order(Long id) {
        accounts.findById(id);
        events.publishEvent(new OrderPlaced(id));
    }

    @TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
    public void onPlaced(OrderPlaced e) {
        restTemplate.postForEntity("http://partner/orders", e, String.class);
    }

    public record OrderPlaced(Long id) {}
}
