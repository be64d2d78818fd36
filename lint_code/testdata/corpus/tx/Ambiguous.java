package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class Ambiguous {
    private final Notifier notifier;

    Ambiguous(Notifier notifier) { this.notifier = notifier; }

    @Transactional
    public void place(String id) {
        notifier.notifyOf(id); // expect: unresolved
    }
}
