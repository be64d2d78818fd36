package com.acme.common;

import org.springframework.data.jpa.repository.JpaRepository;

public interface SafeJobRepository extends JpaRepository<SafeJob, Long> {
}
