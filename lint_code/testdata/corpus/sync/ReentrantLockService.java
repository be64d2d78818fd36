package com.acme.sync;

import com.acme.common.PartnerClient;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.stereotype.Component;

@Component
public class ReentrantLockService {
    private final ReentrantLock lock = new ReentrantLock();
    private final PartnerClient partnerClient;

    ReentrantLockService(PartnerClient partnerClient) { this.partnerClient = partnerClient; }

    public void link(String person) {
        lock.lock(); // expect: synchronized
        try {
            partnerClient.register(person);
        } finally {
            lock.unlock();
        }
    }
}
