package com.acme.sync;

import com.acme.common.PartnerClient;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

@Component
public class ShedLockJob {
    private final PartnerClient partnerClient;

    ShedLockJob(PartnerClient partnerClient) { this.partnerClient = partnerClient; }

    @Scheduled(fixedDelay = 60000)
    @SchedulerLock(name = "sync-partner", lockAtMostFor = "PT5M")
    public synchronized void run() {
        partnerClient.register("batch");
    }
}
