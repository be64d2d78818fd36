package com.acme.lease;

import com.acme.common.SafeJob;
import com.acme.common.SafeJobRepository;
import org.springframework.stereotype.Service;

@Service
public class SafeJobWorker {
    private final SafeJobRepository jobs;

    SafeJobWorker(SafeJobRepository jobs) { this.jobs = jobs; }

    public void markDone(Long id) {
        SafeJob job = jobs.findById(id).orElseThrow();
        job.setStatus("DONE");
        jobs.save(job);
    }
}
