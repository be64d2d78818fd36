package com.acme.sync;

import java.util.concurrent.locks.ReentrantLock;
import org.springframework.stereotype.Service;

@Service
public class LockAroundMemory {
    private final ReentrantLock lock = new ReentrantLock();
    private long counter;

    public long next() {
        lock.lock();
        try {
            return ++counter;
        } finally {
            lock.unlock();
        }
    }
}
