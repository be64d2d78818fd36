package com.acme.tx;

import com.acme.common.Account;
import com.acme.common.AccountRepository;
import com.acme.common.OutboxEvent;
import com.acme.common.OutboxRepository;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class OutboxService {
    private final AccountRepository accounts;
    private final OutboxRepository outbox;

    OutboxService(AccountRepository accounts, OutboxRepository outbox) {
        this.accounts = accounts;
        this.outbox = outbox;
    }

    @Transactional
    public void credit(Account account) {
        accounts.save(account);
        outbox.save(new OutboxEvent("credited " + account.getBalance()));
    }
}
