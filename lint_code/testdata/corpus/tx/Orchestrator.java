package com.acme.tx;

import com.acme.common.PartnerClient;
import org.springframework.stereotype.Component;

@Component
public class Orchestrator {
    private final PartnerClient partnerClient;

    Orchestrator(PartnerClient partnerClient) { this.partnerClient = partnerClient; }

    public void step(String id) {
        prepare(id);
        partnerClient.register(id);
    }

    private void prepare(String id) {
        id.trim();
    }
}
