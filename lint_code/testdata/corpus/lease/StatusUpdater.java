package com.acme.lease;

import com.acme.common.Job;
import jakarta.persistence.EntityManager;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

@Component
public class StatusUpdater {
    private final EntityManager em;

    StatusUpdater(EntityManager em) { this.em = em; }

    @Transactional
    public void retry(Long id) {
        Job job = em.find(Job.class, id);
        job.setStatus("RETRY");
        em.merge(job); // expect: orm-lease
    }
}
