package com.acme.opt;

import com.acme.common.Account;
import com.acme.common.AccountRepository;
import com.acme.common.PartnerClient;
import org.springframework.stereotype.Service;

@Service
public class BalanceService {
    private final AccountRepository accounts;
    private final PartnerClient partnerClient;

    BalanceService(AccountRepository accounts, PartnerClient partnerClient) {
        this.accounts = accounts;
        this.partnerClient = partnerClient;
    }

    public void payout(Long id, long amount) {
        Account a = accounts.findById(id).orElseThrow();
        if (a.getBalance() < amount) return;
        partnerClient.register("payout " + amount);
        a.setBalance(a.getBalance() - amount);
        accounts.save(a); // expect: optimistic-no-version
    }
}
