package com.acme.lease;

import com.acme.common.JobRepository;
import java.time.Duration;
import java.time.Instant;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class LeaseByQuery {
    private final JobRepository jobs;

    LeaseByQuery(JobRepository jobs) { this.jobs = jobs; }

    @Transactional
    public boolean acquire(Long id, String owner) {
        Instant now = Instant.now();
        return jobs.acquire(id, owner, now.plus(Duration.ofSeconds(30)), now) == 1;
    }
}
