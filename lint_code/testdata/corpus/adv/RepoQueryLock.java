package com.acme.adv;

import com.acme.common.PartnerClient;
import org.springframework.stereotype.Service;

@Service
public class RepoQueryLock {
    private final LockRepository locks;
    private final PartnerClient partnerClient;

    RepoQueryLock(LockRepository locks, PartnerClient partnerClient) {
        this.locks = locks;
        this.partnerClient = partnerClient;
    }

    public void link(long key, String person) {
        locks.lock(key); // expect: advisory-lock
        try {
            partnerClient.register(person);
        } finally {
            locks.unlock(key);
        }
    }
}
