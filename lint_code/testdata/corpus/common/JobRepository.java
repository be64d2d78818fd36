package com.acme.common;

import java.time.Instant;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Modifying;
import org.springframework.data.jpa.repository.Query;

public interface JobRepository extends JpaRepository<Job, Long> {
    @Modifying
    @Query("update Job j set j.lockedUntil = :until, j.lockOwner = :owner where j.id = :id and (j.lockedUntil is null or j.lockedUntil < :now)")
    int acquire(Long id, String owner, Instant until, Instant now);
}
