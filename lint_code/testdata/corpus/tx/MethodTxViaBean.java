package com.acme.tx;

import com.acme.common.PartnerClient;
import com.acme.common.AccountRepository;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class MethodTxViaBean {
    private final PartnerClient partnerClient;
    private final AccountRepository accounts;

    public MethodTxViaBean(PartnerClient partnerClient, AccountRepository accounts) {
        this.partnerClient = partnerClient;
        this.accounts = accounts;
    }

    @Transactional
    public void switchPrimary(Long id, String person) {
        accounts.findById(id);
        partnerClient.register(person); // expect: remote-in-tx
        partnerClient.register(person + "-new");
    }
}
