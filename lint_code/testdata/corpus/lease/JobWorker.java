package com.acme.lease;

import com.acme.common.Job;
import com.acme.common.JobRepository;
import org.springframework.stereotype.Service;

@Service
public class JobWorker {
    private final JobRepository jobs;

    JobWorker(JobRepository jobs) { this.jobs = jobs; }

    public void markDone(Long id) {
        Job job = jobs.findById(id).orElseThrow();
        job.setStatus("DONE");
        jobs.save(job); // expect: orm-lease
    }
}
