package com.acme.common;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import java.time.Instant;

@Entity
public class Job {
    @Id
    private Long id;
    private String status;
    @Column(name = "locked_until")
    private Instant lockedUntil;
    @Column(name = "lock_owner")
    private String lockOwner;

    public void setStatus(String status) { this.status = status; }
}
