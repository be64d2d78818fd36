package com.acme.opt;

import com.acme.common.Account;
import com.acme.common.AccountRepository;
import org.springframework.stereotype.Service;

@Service
public class NoPartnerUpdate {
    private final AccountRepository accounts;

    NoPartnerUpdate(AccountRepository accounts) { this.accounts = accounts; }

    public void credit(Long id, long amount) {
        Account a = accounts.findById(id).orElseThrow();
        a.setBalance(a.getBalance() + amount);
        accounts.save(a);
    }
}
