package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class DeepChain {
    private final Orchestrator orchestrator;

    DeepChain(Orchestrator orchestrator) { this.orchestrator = orchestrator; }

    @Transactional
    public void run(String id) {
        orchestrator.step(id); // expect: remote-in-tx
    }
}
