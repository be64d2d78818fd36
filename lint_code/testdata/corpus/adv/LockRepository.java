package com.acme.adv;

import com.acme.common.Job;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Query;

public interface LockRepository extends JpaRepository<Job, Long> {
    @Query(value = "select pg_advisory_lock(:key)", nativeQuery = true)
    void lock(long key);

    @Query(value = "select pg_advisory_unlock(:key)", nativeQuery = true)
    boolean unlock(long key);
}
