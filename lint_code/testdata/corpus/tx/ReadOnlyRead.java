package com.acme.tx;

import com.acme.common.Account;
import com.acme.common.AccountRepository;
import java.util.Optional;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class ReadOnlyRead {
    private final AccountRepository accounts;

    ReadOnlyRead(AccountRepository accounts) { this.accounts = accounts; }

    @Transactional(readOnly = true)
    public Optional<Account> find(Long id) {
        return accounts.findById(id);
    }
}
