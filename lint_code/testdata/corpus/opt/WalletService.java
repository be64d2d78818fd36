package com.acme.opt;

import com.acme.common.Account;
import com.acme.common.AccountRepository;
import com.acme.common.PartnerFeign;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class WalletService {
    private final AccountRepository accounts;
    private final PartnerFeign partner;

    WalletService(AccountRepository accounts, PartnerFeign partner) {
        this.accounts = accounts;
        this.partner = partner;
    }

    @Transactional
    public void charge(Long id, long amount) {
        Account a = accounts.findById(id).orElseThrow(); // expect: optimistic-no-version
        partner.charge("wallet-" + id); // expect: remote-in-tx
        a.setBalance(a.getBalance() - amount);
    }
}
