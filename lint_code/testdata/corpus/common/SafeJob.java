package com.acme.common;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import java.time.Instant;

@Entity
public class SafeJob {
    @Id
    private Long id;
    private String status;
    @Column(name = "locked_until", insertable = false, updatable = false)
    private Instant lockedUntil;
    @Column(name = "lock_owner", insertable = false, updatable = false)
    private String lockOwner;

    public void setStatus(String status) { this.status = status; }
}
