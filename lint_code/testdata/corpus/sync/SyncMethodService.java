package com.acme.sync;

import com.acme.common.AccountRepository;
import com.acme.common.PartnerClient;
import org.springframework.stereotype.Service;

@Service
public class SyncMethodService {
    private final AccountRepository accounts;
    private final PartnerClient partnerClient;

    SyncMethodService(AccountRepository accounts, PartnerClient partnerClient) {
        this.accounts = accounts;
        this.partnerClient = partnerClient;
    }

    public synchronized void claim(Long id, String person) { // expect: synchronized
        accounts.findById(id);
        partnerClient.register(person);
    }
}
